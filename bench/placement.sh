#!/usr/bin/env bash
# --cpus with real processes: a server and one worker on loopback training a 1M-parameter MLP
# under asp (4 MB each way a step), each run for SECONDS, alternately left to the scheduler and
# given a CPU each (server --cpus A, worker --cpus B: the first two CPUs this shell may use),
# printing pushes per second of each run and the median ratio. bench_net's throughput and
# shards parts measure the same placements on the protocol alone (docs/results/net.md).
#   bench/placement.sh [BUILD_DIR] [PAIRS] [SECONDS]     (defaults build, 3, 10)
set -euo pipefail
build=${1:-build}
pairs=${2:-3}
seconds=${3:-10}
sw="$build/syncwise"
read -r a b < <(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status |
  tr ',' '\n' | while IFS=- read -r lo hi; do seq "$lo" "${hi:-$lo}"; done | head -2 | xargs)
[ -n "${b:-}" ] || { echo "needs two CPUs this shell may use" >&2; exit 1; }
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

run() { # server's --cpus, worker's --cpus (empty: none) -> pushes per second
  rm -f "$tmp/ep"
  "$sw" server --bind "tcp://127.0.0.1:*" --endpoint-file "$tmp/ep" --policy asp \
    --data synthetic:task=logistic,d=1000,n=20000 --model mlp:h=1,u=1000 --eval-every 1000 \
    --max-time "$seconds" -q ${1:+--cpus "$1"} > "$tmp/out" 2>&1 &
  local server=$!
  for _ in $(seq 200); do [ -s "$tmp/ep" ] && break; sleep 0.05; done
  "$sw" worker --connect "$(cat "$tmp/ep")" --threads 1 -q ${2:+--cpus "$2"} 2>/dev/null &
  local worker=$!
  wait "$server"
  wait "$worker" || true
  sed -n 's/.* \([0-9]*\) pushes, .*/\1/p' "$tmp/out" | head -1 | awk -v s="$seconds" '{print $1 / s}'
}

echo "server and one worker, mlp:h=1,u=1000 on 1000 features (1M parameters), asp, ${seconds} s a run;"
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset)} OPENBLAS_NUM_THREADS=1, $(getconf _NPROCESSORS_ONLN) cores"
ratios=()
for p in $(seq "$pairs"); do
  shared=$(run "" "")
  apart=$(run "$a" "$b")
  ratio=$(awk -v x="$apart" -v y="$shared" 'BEGIN { printf "%.2f", x / y }')
  echo "  pair $p: shared $shared pushes/s, apart (server --cpus $a, worker --cpus $b) $apart: $ratio"
  ratios+=("$ratio")
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ r[NR] = $1 } END {
  printf "median apart / shared: %.2f (range %.2f-%.2f)\n", r[int((NR + 1) / 2)], r[1], r[NR] }'
