#!/usr/bin/env bash
# Two builds of syncwise side by side on the same workloads: the figures of a change, before and
# after. Each workload runs under both builds in turn, ROUNDS times (interleaved, so that the
# machine's drift hits both alike); the table gives the median wall time of each and the ratio
# old/new (above 1.0: the new build is faster).
#
#   bench/builds.sh OLD_BUILD_DIR NEW_BUILD_DIR [ROUNDS]
#
# Workloads: the engine alone in the simulator (1000 workers, no model), the simulator training
# an MLP on Fashion-MNIST, compare over four policies, and a real server with three worker
# processes over loopback on a small model (round trips) and on a 1M-parameter one (bandwidth).
# OpenBLAS runs one thread; its kernel is this machine's environment's, printed below.
set -euo pipefail
old=${1:?usage: $0 OLD_BUILD NEW_BUILD [ROUNDS]}
new=${2:?usage: $0 OLD_BUILD NEW_BUILD [ROUNDS]}
rounds=${3:-3}
export OPENBLAS_NUM_THREADS=1
echo "OpenBLAS settings: OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-auto} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE:-auto}"
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $rounds rounds"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

# A server and three workers until the server's apply limit: model spec, data spec, applies.
served() {
  local sw=$1 model=$2 data=$3 applies=$4
  rm -f "$tmp/ep"
  "$sw" server --bind "tcp://127.0.0.1:*" --endpoint-file "$tmp/ep" --policy asp \
    --model "$model" --data "$data" --lr 1e-6 --max-applies "$applies" --max-time 300 \
    --eval-every 1e6 \
    --checkpoint-applies 0 --wait-workers 3 -q > /dev/null 2>&1 &
  local server=$!
  for _ in $(seq 200); do [ -s "$tmp/ep" ] && break; sleep 0.02; done
  for _ in 1 2 3; do "$sw" worker --connect "$(cat "$tmp/ep")" -q > /dev/null 2>&1 & done
  wait "$server"
  wait
}

workload() { # name, then the command with SW for the build
  local name=$1
  shift
  for b in old new; do : > "$tmp/$name.$b"; done
  for _ in $(seq "$rounds"); do
    for b in old new; do
      local sw=$old/syncwise
      [ "$b" = new ] && sw=$new/syncwise
      local t0 t1
      t0=$(date +%s.%N)
      SW=$sw eval "$@" > "$tmp/out" 2>&1 || { echo "$name failed under $sw:"; tail -3 "$tmp/out"; exit 1; }
      t1=$(date +%s.%N)
      awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }' >> "$tmp/$name.$b"
    done
  done
  local a b
  a=$(sort -g "$tmp/$name.old" | sed -n "$(((rounds + 1) / 2))p")
  b=$(sort -g "$tmp/$name.new" | sed -n "$(((rounds + 1) / 2))p")
  printf "%-16s %10.2f %10.2f %8.2f\n" "$name" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { print a / b }')"
}

printf "\n%-16s %10s %10s %8s\n" "workload" "old s" "new s" "old/new"
workload engine '$SW sim --no-model --policy ssp:s=3 --workers 1000 --max-pushes 2000000 -q'
workload sim-mlp '$SW sim --policy asp --model mlp:h=1,u=256 --max-pushes 3000 -q'
workload compare '$SW compare --policies "bsp,asp,ssp:s=2,dbw" --seeds 2 --jobs 2 -q \
  --data fashion-mnist --model mlp:h=1,u=32 --workers 8 --target-acc 0.75 --max-time 20000'
workload server-small 'served $SW softmax synthetic:task=logistic,d=20,n=200,test=20,val=20 20000'
workload server-1M 'served $SW softmax synthetic:task=lsq,d=1000000,n=16,test=4,val=4 600'
