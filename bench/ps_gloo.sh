#!/usr/bin/env bash
# syncwise beside what a user would otherwise write: a parameter server in PyTorch's own
# distributed package (bench/ps_gloo.py: gloo over loopback; receive the gradient, check it is
# finite, apply it, send the weights back), moving a 1M-float model both ways as bench_net's
# throughput part does, both placed by the scheduler (gloo's processes are not pinned, so
# bench_net runs its shared placement). Trials alternate between the two, under one OpenBLAS
# setting (printed), and the medians and their ratio close the output. Goal: syncwise at least
# 1.9x.
#
#   bench/ps_gloo.sh BUILD [ROUNDS] [TRIALS]     (defaults 200 and 3)
set -euo pipefail
build=${1:?usage: bench/ps_gloo.sh BUILD [ROUNDS] [TRIALS]}
rounds=${2:-200}
trials=${3:-3}
here=$(dirname "$0")
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
/usr/bin/python3 -c 'import torch' 2>/dev/null ||
  { echo "needs python3-torch (apt-get install python3-torch)" >&2; exit 1; }
echo "push + pull of a 1M-float model on loopback, $rounds round trips a trial, $trials trials;"
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset)} OPENBLAS_NUM_THREADS=1, $(getconf _NPROCESSORS_ONLN) cores"
rows=()
for t in $(seq "$trials"); do
  read -r checked off < <("$build/bench/bench_net" "$rounds" throughput shared |
    sed -n 's/.*median MB\/s:  syncwise \([0-9]*\)  checksum off \([0-9]*\).*/\1 \2/p')
  gloo=$(/usr/bin/python3 "$here/ps_gloo.py" "$rounds" 1 | sed -n 's/.*median \([0-9]*\) MB\/s.*/\1/p')
  echo "  trial $t: syncwise $checked MB/s, checksum off $off, gloo parameter server $gloo"
  rows+=("$checked $off $gloo")
done
printf '%s\n' "${rows[@]}" | awk '
  function median(a, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { c[NR] = $1; o[NR] = $2; g[NR] = $3 }
  END {
    mc = median(c, NR); mo = median(o, NR); mg = median(g, NR)
    printf "median MB/s: syncwise %.0f  checksum off %.0f  gloo %.0f\n", mc, mo, mg
    verdict = (mc / mg >= 1.9) ? "met" : "NOT met"
    printf "syncwise / gloo: %.2f (goal 1.9: %s)   checksum off / gloo: %.2f\n", mc / mg,
           verdict, mo / mg
  }'
