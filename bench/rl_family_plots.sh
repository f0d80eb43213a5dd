#!/usr/bin/env bash
# Plots of the RLP family result (docs/results/rl.md): from the rows `bench/rl.sh family` wrote,
# the learned policy's speedup on each test instance over that instance's best classic policy
# and over the family's best single one, by part; then one run of each policy in two regimes of
# the family (plain-ish momentum 0.5 and momentum 0.9), whose timelines and staleness show how
# it waits.
#   bench/rl_family_plots.sh [BUILD_DIR] [CSV] [POLICY] [OUT_DIR]
#   (defaults: build, docs/results/rl-family.csv, policies/rlp-family.swrl, docs/results/rl-family;
#   POLICY is an rlp file, or a learned policy's spec: 'rlswitch:file=F,choose=once')
# Writes OUT_DIR: speedup.png, and momentum-0.5/, momentum-0.9/ (syncwise report).
set -euo pipefail
build=${1:-build}
csv=${2:-docs/results/rl-family.csv}
policy=${3:-policies/rlp-family.swrl}
out=${4:-docs/results/rl-family}
case "$policy" in *:*) ;; *) policy="rlp:file=$policy" ;; esac
mkdir -p "$out"
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Per instance: T (mean over seeds) of every policy; then the learned policy's speedups.
awk -F'"' 'NR > 1 {
    split($1, a, ","); inst = a[1]; pol = $2; split($5, b, ","); t = b[2]; regime[inst] = $(NF - 1)
    sum[inst, pol] += t; cnt[inst, pol]++; pols[pol] = 1; insts[inst] = 1
  }
  END {
    for (p in pols) if (p ~ /^rl(p|switch)/) learned = p
    for (p in pols) if (p !~ /^rl(p|switch)/) { tot = 0; for (i in insts) tot += sum[i, p] / cnt[i, p]
                                       if (best == "" || tot < besttot) { best = p; besttot = tot } }
    for (i in insts) {
      r = sum[i, learned] / cnt[i, learned]; m = 1e300
      for (p in pols) if (p !~ /^rl(p|switch)/) { t = sum[i, p] / cnt[i, p]; if (t < m) m = t }
      mom = regime[i] ~ /momentum=0.9/ ? 0.9 : 0.5
      print m / r, (sum[i, best] / cnt[i, best]) / r, mom
    }
    print best > "/dev/stderr"
  }' "$csv" 2> "$tmp/best" | sort -g > "$tmp/speedup.dat"
best=$(cat "$tmp/best")
gnuplot <<GP
set terminal pngcairo size 900,500
set output "$out/speedup.png"
set title "learned policy on each test instance of the family (sorted)"
set xlabel "instance (sorted by speedup over its best classic policy)"
set ylabel "speedup of the learned policy (T of the baseline / T of it)"
set key top left
set grid ytics
plot "$tmp/speedup.dat" using 0:(\$3 == 0.5 ? \$1 : 1/0) with points pt 7 ps 0.6 title "over the instance's best classic, momentum 0.5", \
     "$tmp/speedup.dat" using 0:(\$3 == 0.9 ? \$1 : 1/0) with points pt 7 ps 0.6 title "over the instance's best classic, momentum 0.9", \
     "$tmp/speedup.dat" using 0:2 with points pt 1 ps 0.5 title "over the family's best single ($best)", \
     1 with lines lt 0 notitle
GP

# One run of each policy in two regimes, for the timelines and staleness.
for mu in 0.5 0.9; do
  "$build/syncwise" compare -q --seeds 1 --log-dir "$tmp/logs-$mu" \
    --policies "$policy;bsp;asp;ssp:s=3" --data fashion-mnist:val=1000 \
    --batch-mode sample --momentum "$mu" --lr 0.005 --target-acc 0.8 --max-time 40000 > /dev/null
  "$build/syncwise" report -q -o "$out/momentum-$mu" "$tmp/logs-$mu"/*.jsonl
  # Keep what the write-up shows: the report and its accuracy, timeline and staleness plots.
  find "$out/momentum-$mu" -type f ! -name '*.png' ! -name report.md -delete
  rm -f "$out/momentum-$mu/loss.png" "$out/momentum-$mu/k.png"
done
echo "wrote $out"
