#!/usr/bin/env bash
# The RLP evaluation (issue: learned synchronization policy): a learned policy against bsp, asp
# and ssp (the paper's s = 2, 5, 8) on fresh instances, then its generalisation to clusters of
# 2, 5 and 8 workers and to an unseen model of 6 hidden layers. Tables go to stdout and to
# docs/results/rl-*.txt; the two halves run side by side on the machine's two cores.
#   bench/rl.sh [BUILD_DIR] [INSTANCES] [SEEDS] [POLICY]
#   (defaults: build, 100 instances, 3 seeds, policies/rlp.swrl)
# To time training too: bench/rl.sh train [BUILD_DIR] runs `rl train` with the defaults.
#
# The family of scenarios (issue: a regime where staleness costs something):
#   bench/rl.sh train-family [BUILD_DIR] [OUT] [RL TRAIN OPTIONS...]   trains on it (default
#     policies/rlp-family.swrl); e.g. `--reward-progress 1000` for docs/results/rl.md's item 5;
#     with FAMILY_OPTIMIZER=sgd:momentum=0.9 in the environment, on that regime alone (item 9)
#   bench/rl.sh mixing [BUILD_DIR]   bsp and asp alone and handing over to each other every
#     100 or 400 s, under momentum 0.5 and 0.9 (docs/results/rl-mixing.txt)
#   bench/rl.sh family [BUILD_DIR] [INSTANCES] [SEEDS] [POLICY] [NAME]
#     evaluates POLICY (default policies/rlp-family.swrl; a file or an rlp spec such as
#     rlp:file=policies/rlp-family.swrl,high=policies/rlp-family-m9.swrl) against bsp, asp and ssp s=1..8 on
#     fresh instances of it, two runs at once: docs/results/NAME.txt and NAME.csv (NAME:
#     rl-family by default).
set -euo pipefail
FAMILY_LR='0.003|0.005'
FAMILY_OPTIMIZER=${FAMILY_OPTIMIZER:-'sgd:momentum=0.5|sgd:momentum=0.9'}
FAMILY_CLUSTER='straggle:p=0.3,mean=10,sd=4,base=4.5,mode=worker|straggle:p=0.3,mean=10,sd=4,base=4.5,mode=step'
family=(--lr "$FAMILY_LR" --optimizer "$FAMILY_OPTIMIZER" --cluster "$FAMILY_CLUSTER")
if [ "${1:-}" = train-family ]; then
  build=${2:-build}
  out=${3:-policies/rlp-family.swrl}
  export OPENBLAS_NUM_THREADS=1
  echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE:-unset}"
  start=$SECONDS
  "$build/syncwise" rl train --seed 1 --grad-clip 10 --out "$out" "${family[@]}" "${@:4}"
  echo "(rl train wall time $((SECONDS - start)) s)"
  exit 0
fi
if [ "${1:-}" = family ]; then
  build=${2:-build}
  instances=${3:-100}
  seeds=${4:-3}
  policy=${5:-policies/rlp-family.swrl}
  name=${6:-rl-family}
  export OPENBLAS_NUM_THREADS=1
  mkdir -p docs/results
  {
    echo "== family: syncwise rl eval --policy $policy --instances $instances --seeds $seeds" \
         "--jobs 2 ${family[*]}"
    echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE:-unset}"
    start=$SECONDS
    "$build/syncwise" rl eval -q --policy "$policy" --instances "$instances" --seeds "$seeds" \
      --jobs 2 --baselines bsp,asp,ssp:s=1,ssp:s=2,ssp:s=3,ssp:s=4,ssp:s=5,ssp:s=6,ssp:s=7,ssp:s=8 \
      --csv "docs/results/$name.csv" "${family[@]}"
    echo "(wall time $((SECONDS - start)) s)"
  } > "docs/results/$name.txt"
  cat "docs/results/$name.txt"
  exit 0
fi
if [ "${1:-}" = mixing ]; then
  # Does a run that hands over between bsp and asp pay for it? One family instance (mlp h=2, lr
  # 0.005, stragglers per step), under each momentum, each policy alone and both alternating
  # every P seconds of virtual time (docs/results/rl.md, item 11).
  build=${2:-build}
  export OPENBLAS_NUM_THREADS=1
  base=(--workers 10 --cluster "straggle:p=0.3,mean=10,sd=4,base=4.5,mode=step" --lr 0.005
        --model mlp:h=2,u=256 --batch 16 --target-acc 0.8 --eval-every 20 --max-time 20000)
  alternate() { # first, second, period: the switches of a run that starts with `first`
    local ev="" k
    for k in $(seq 1 $((20000 / $3))); do
      ev="$ev${ev:+;}switch:t=$((k * $3)),policy=$([ $((k % 2)) = 1 ] && echo "$2" || echo "$1")"
    done
    echo "$ev"
  }
  target() { # the time to the target of a run, or - when it never came
    local t
    t=$("$build/syncwise" sim "${base[@]}" "$@" 2> /dev/null | sed -n 's/.*target reached at t=\([0-9]*\).*/\1/p')
    echo "${t:--}"
  }
  {
    echo "== mixing: syncwise sim ${base[*]} --optimizer sgd:momentum=MU --seed S --policy ..."
    echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE:-unset}"
    echo "time to 0.80 (s; - = not within 20000 s)"
    printf '%-6s %-5s %7s %7s %16s %16s %16s %16s\n' momentum seed bsp asp "bsp/asp 100 s" \
      "asp/bsp 100 s" "bsp/asp 400 s" "asp/bsp 400 s"
    for mu in 0.5 0.9; do
      for seed in 1 2 3; do
        o=(--optimizer "sgd:momentum=$mu" --seed "$seed")
        row=()
        row+=("$(target "${o[@]}" --policy bsp)" "$(target "${o[@]}" --policy asp)")
        for p in 100 400; do
          row+=("$(target "${o[@]}" --policy bsp --events "$(alternate bsp asp $p)")")
          row+=("$(target "${o[@]}" --policy asp --events "$(alternate asp bsp $p)")")
        done
        printf '%-8s %-5s %7s %7s %16s %16s %16s %16s\n' "$mu" "$seed" "${row[@]}"
      done
    done
  } | tee docs/results/rl-mixing.txt
  exit 0
fi
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
