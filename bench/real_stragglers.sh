#!/usr/bin/env bash
# Real stragglers beside the simulator: the same scenario run with real worker processes on
# loopback and on the simulator, policy by policy, printing both times to target.
#   bench/real_stragglers.sh [BUILD_DIR] [RUNS]
# Scenario: 6 workers, 2 of them stragglers; each step sleeps FAST ms (SLOW ms for stragglers)
# on top of a tiny computation, so step times are what the sleeps make them. The simulator gets
# const:FAST;const:SLOW@0-1 (seconds) and loopback-like transfers. Slowness here is injected in
# the worker (its --delay-ms); network delay with namespaces and tc netem needs root and is not
# done by this script.
set -euo pipefail
build=${1:-build}
runs=${2:-3}
sw="$build/syncwise"
FAST=10 SLOW=30
DATA="synthetic:task=logistic,d=50,n=20000"
COMMON=(--data "$DATA" --model mlp:h=1,u=32 --lr 0.05 --target-acc 0.9)
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

real_run() { # policy seed -> seconds to target (real)
  rm -f "$tmp/ep"
  "$sw" server --bind "tcp://127.0.0.1:*" --endpoint-file "$tmp/ep" --policy "$1" --seed "$2" \
    "${COMMON[@]}" --eval-every 0.05 --max-time 120 -q > "$tmp/out" 2>/dev/null &
  local server=$!
  for _ in $(seq 200); do [ -s "$tmp/ep" ] && break; sleep 0.05; done
  local ep pids=()
  ep=$(cat "$tmp/ep")
  for i in 1 2 3 4 5 6; do
    delay=$FAST
    [ "$i" -le 2 ] && delay=$SLOW
    "$sw" worker --connect "$ep" --delay-ms "$delay" -q 2>/dev/null &
    pids+=($!)
  done
  wait "$server"
  wait "${pids[@]}" 2>/dev/null || true
  sed -n 's/.* \([0-9.]*\) s; validation.*/\1/p' "$tmp/out"
}

sim_run() { # policy seed -> virtual seconds to target
  "$sw" sim --policy "$1" --seed "$2" --workers 6 "${COMMON[@]}" --eval-every 0.05 \
    --cluster "const:0.0$FAST;const:0.0$SLOW@0-1" --net bw=1e9,lat=5e-5 --max-time 120 -q |
    sed -n 's/.*target reached at t=\([0-9.]*\) s.*/\1/p'
}

printf "%-10s %22s %22s %8s\n" policy "real processes (s)" "simulator (s)" ratio
for policy in bsp ssp:s=3 asp; do
  r=() s=()
  for seed in $(seq "$runs"); do
    r+=("$(real_run "$policy" "$seed")")
    s+=("$(sim_run "$policy" "$seed")")
  done
  mr=$(printf '%s\n' "${r[@]}" | awk '{ t += $1 } END { printf "%.2f", t / NR }')
  ms=$(printf '%s\n' "${s[@]}" | awk '{ t += $1 } END { printf "%.2f", t / NR }')
  printf "%-10s %22s %22s %8.2f\n" "$policy" "$mr (${r[*]})" "$ms (${s[*]})" \
    "$(awk -v a="$mr" -v b="$ms" 'BEGIN { print a / b }')"
done
