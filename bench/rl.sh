#!/usr/bin/env bash
# The RLP evaluation (issue: learned synchronization policy): a learned policy against bsp, asp
# and ssp (the paper's s = 2, 5, 8) on fresh instances, then its generalisation to clusters of
# 2, 5 and 8 workers and to an unseen model of 6 hidden layers. Tables go to stdout and to
# docs/results/rl-*.txt; the two halves run side by side on the machine's two cores.
#   bench/rl.sh [BUILD_DIR] [INSTANCES] [SEEDS] [POLICY]
#   (defaults: build, 100 instances, 3 seeds, policies/rlp.swrl)
# To time training too: bench/rl.sh train [BUILD_DIR] runs `rl train` with the defaults.
set -euo pipefail
if [ "${1:-}" = train ]; then
  build=${2:-build}
  export OPENBLAS_NUM_THREADS=1
  echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE:-unset}"
  start=$SECONDS
  "$build/syncwise" rl train --seed 1 --out "$build/rlp-bench.swrl"
  echo "(rl train wall time $((SECONDS - start)) s)"
  exit 0
fi
build=${1:-build}
instances=${2:-100}
seeds=${3:-3}
policy=${4:-policies/rlp.swrl}
sw="$build/syncwise"
out=docs/results
mkdir -p "$out"
export OPENBLAS_NUM_THREADS=1

run() { # name, then rl eval arguments
  local name=$1
  shift
  {
    echo "== $name: syncwise rl eval --policy $policy $*"
    echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE:-unset}"
    local start=$SECONDS
    "$sw" rl eval -q --policy "$policy" "$@"
    echo "(wall time $((SECONDS - start)) s)"
  } > "$out/rl-$name.txt"
  cat "$out/rl-$name.txt"
}

small=$(( instances / 5 > 2 ? instances / 5 : 2 ))
run main --instances "$instances" --seeds "$seeds" --csv "$out/rl-main.csv" &
{
  for w in 2 5 8; do
    run "workers-$w" --workers "$w" --models mlp:h=1,u=256 --instances "$small" --seeds "$seeds"
  done
  run unseen-model --models mlp:h=6,u=256 --instances "$small" --seeds "$seeds"
} &
wait
