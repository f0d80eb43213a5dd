#!/usr/bin/env bash
# The classic comparison of the engine/simulator issue, timed: bsp, asp and ssp with three
# values of s (our convention; the RLP paper's s = 2, 5, 8) over 10 seeds on the default
# straggling scenario (Fashion-MNIST, MLP 784-256-10, 10 workers, straggle:p=0.3), to 0.85
# validation accuracy. Prints the table and the wall time; the goal is under 10 minutes on a
# 2-core machine.
#   bench/compare.sh [BUILD_DIR] [SEEDS]
set -euo pipefail
build=${1:-build}
seeds=${2:-10}
start=$(date +%s.%N)
OPENBLAS_NUM_THREADS=1 "$build/syncwise" compare --policies "bsp,asp,ssp:s=1,ssp:s=4,ssp:s=7" \
  --seeds "$seeds" --target-acc 0.85 --max-time 40000
end=$(date +%s.%N)
echo "wall time: $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f s", b - a }') for $seeds seeds on $(nproc) cores"
