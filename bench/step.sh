#!/usr/bin/env bash
# Foundation benchmark: microseconds per training step, syncwise against PyTorch, side by side in
# one run on 1 and 2 threads, with the ratio torch/syncwise (above 1.0: syncwise is faster), and
# how close the MLP step comes to the machine's measured sgemm throughput.
#
#   bench/step.sh [BUILD_DIR] [SECONDS_PER_FIGURE]
#
# Both programs run under the same OpenBLAS settings. Unless OPENBLAS_CORETYPE is already set,
# this machine's documented environment is used (Haswell kernels, L2 512 KiB: AVX2 only); set
# OPENBLAS_CORETYPE=auto to let OpenBLAS detect the CPU instead.
set -euo pipefail
build=${1:-build}
seconds=${2:-2}
here=$(dirname "$0")
bench="$build/bench/bench_step"
[ -x "$bench" ] || { echo "no $bench: run 'make build' first" >&2; exit 1; }
/usr/bin/python3 -c 'import torch' 2>/dev/null ||
  { echo "PyTorch missing: run 'scripts/deps.sh bench'" >&2; exit 1; }

if [ "${OPENBLAS_CORETYPE:-}" = auto ]; then
  unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
else
  export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Haswell} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE:-512}
fi
echo "OpenBLAS settings: OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-auto} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE:-auto}"
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores"

out=$(mktemp)
trap 'rm -f "$out"' EXIT
for t in 1 2; do
  OPENBLAS_NUM_THREADS=$t OMP_NUM_THREADS=$t "$bench" --threads "$t" --seconds "$seconds" |
    sed 's/^/syncwise /' >>"$out"
  OPENBLAS_NUM_THREADS=$t OMP_NUM_THREADS=$t /usr/bin/python3 "$here/peer_torch.py" \
    --threads "$t" --seconds "$seconds" | sed 's/^/torch /' >>"$out"
done
grep -E '^(syncwise openblas|torch torch)' "$out" | sort -u | sed 's/^/  /'

awk '
  function val(s, k,   m) { return match(s, k "=[0-9.]+") ? substr(s, RSTART + length(k) + 1, RLENGTH - length(k) - 1) : "" }
  $2 == "sgemm" { gflops[val($0, "threads")] = val($0, "gflops"); next }
  $3 ~ /^threads=/ && $4 ~ /^us=/ { us[$1, $2, val($0, "threads")] = val($0, "us"); names[$2] = 1 }
  END {
    printf "\n%-12s %7s %12s %12s %8s\n", "workload", "threads", "syncwise us", "torch us", "ratio"
    k = split("mlp_b16 mlp_b128 cnn_b16 cnn_dbw_b500", order, " ")
    for (t = 1; t <= 2; t++) for (i = 1; i <= k; i++) {
      n = order[i]; a = us["syncwise", n, t]; b = us["torch", n, t]
      if (a != "" && b != "") printf "%-12s %7d %12.1f %12.1f %8.2f\n", n, t, a, b, b / a
    }
    # MLP 784-256-10: forward and weight-gradient GEMMs of both layers, input gradient of the
    # second: 2*B*(2*784*256 + 3*256*10) floating-point operations per step.
    printf "\nMLP step against sgemm throughput (1536^3 sgemm measured in the same run):\n"
    for (t = 1; t <= 2; t++) for (i = 1; i <= 2; i++) {
      n = order[i]; b = (n == "mlp_b16") ? 16 : 128
      flops = 2 * b * (2 * 784 * 256 + 3 * 256 * 10)
      if (us["syncwise", n, t] != "" && gflops[t] != "")
        printf "  %-9s threads=%d: %6.1f GFLOP/s = %3.0f%% of sgemm %.1f GFLOP/s\n", n, t,
               flops / us["syncwise", n, t] / 1e3, 100 * flops / us["syncwise", n, t] / 1e3 / gflops[t], gflops[t]
    }
  }' "$out"
