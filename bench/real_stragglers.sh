#!/usr/bin/env bash
# Real stragglers beside the simulator: the same scenario run with real worker processes on
# loopback and on the simulator, policy by policy, printing both times to target.
#   bench/real_stragglers.sh [BUILD_DIR] [RUNS] [sleep|throttle]
# sleep (default): 6 workers, 2 of them stragglers; each step sleeps FAST ms (SLOW ms for
#   stragglers) on top of a tiny computation, so step times are what the sleeps make them (the
#   RLP paper's sleep() stragglers). The simulator gets const:FAST;const:SLOW@0-1 (seconds) and
#   loopback-like transfers.
# throttle (root, cgroup v1 or v2 cpu controller): 4 workers computing a real MLP step, 2 of
#   them held to QUOTA% of one CPU by the kernel's CFS bandwidth control. Step times are then
#   whatever the machine makes them, so the simulator gets each worker's mean step time
#   measured in the real run's log (release to push, which includes both transfers).
# Network delay with namespaces and tc netem is not here: this machine's kernel has no netem
# ("Specified qdisc kind is unknown"; it loads no modules).
set -euo pipefail
build=${1:-build}
runs=${2:-3}
mode=${3:-sleep}
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
    "${COMMON[@]}" --eval-every 0.05 --max-time 120 --wait-workers 6 -q > "$tmp/out" 2>/dev/null &
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
  sed -n 's/.*trained \([0-9.]*\) s.*/\1/p' "$tmp/out"
}

sim_run() { # policy seed -> virtual seconds to target
  "$sw" sim --policy "$1" --seed "$2" --workers 6 "${COMMON[@]}" --eval-every 0.05 \
    --cluster "const:0.0$FAST;const:0.0$SLOW@0-1" --net bw=1e9,lat=5e-5 --max-time 120 -q |
    sed -n 's/.*target reached at t=\([0-9.]*\) s.*/\1/p'
}

# ---- throttle mode -------------------------------------------------------------------------
QUOTA=20
TDATA="synthetic:task=logistic,d=400,n=20000"
TCOMMON=(--data "$TDATA" --model mlp:h=2,u=256 --batch 32 --lr 0.02 --target-acc 0.75)

cgroup_slow() { # makes a throttled cpu cgroup; prints its cgroup.procs path
  local v1=/sys/fs/cgroup/cpu v2=/sys/fs/cgroup/unified
  if [ -w "$v1" ]; then
    mkdir -p "$v1/swslow$$"
    echo 100000 > "$v1/swslow$$/cpu.cfs_period_us"
    echo $((QUOTA * 1000)) > "$v1/swslow$$/cpu.cfs_quota_us"
    echo "$v1/swslow$$/cgroup.procs"
  elif [ -w "$v2/cgroup.subtree_control" ] && grep -q cpu "$v2/cgroup.controllers"; then
    echo +cpu > "$v2/cgroup.subtree_control"
    mkdir -p "$v2/swslow$$"
    echo "$((QUOTA * 1000)) 100000" > "$v2/swslow$$/cpu.max"
    echo "$v2/swslow$$/cgroup.procs"
  else
    return 1
  fi
}

throttled_run() { # policy seed procs -> "seconds T0 T1 T2 T3" (time to target, mean steps)
  rm -f "$tmp/ep" "$tmp/log"
  "$sw" server --bind "tcp://127.0.0.1:*" --endpoint-file "$tmp/ep" --policy "$1" --seed "$2" \
    "${TCOMMON[@]}" --eval-every 0.1 --max-time 120 --heartbeat-timeout 30 --wait-workers 4 \
    --log "$tmp/log" -q \
    > "$tmp/out" 2>/dev/null &
  local server=$! procs=$3 pids=()
  for _ in $(seq 200); do [ -s "$tmp/ep" ] && break; sleep 0.05; done
  for i in 0 1 2 3; do
    if [ "$i" -ge 2 ]; then
      (echo "$BASHPID" > "$procs"; exec "$sw" worker --connect "$(cat "$tmp/ep")" -q) 2>/dev/null &
    else
      "$sw" worker --connect "$(cat "$tmp/ep")" -q 2>/dev/null &
    fi
    pids+=($!)
    sleep 0.05 # join in order: ids 0, 1 free, 2, 3 throttled
  done
  wait "$server"
  wait "${pids[@]}" 2>/dev/null || true
  local t
  t=$(sed -n 's/.*trained \([0-9.]*\) s.*/\1/p' "$tmp/out")
  awk -F'[:,]' -v t="$t" '
    /"ev":"release"/ { for (i = 1; i < NF; i++) if ($i == "\"w\"") w = $(i + 1); rel[w] = $2 }
    /"ev":"push"/ { for (i = 1; i < NF; i++) if ($i == "\"w\"") w = $(i + 1)
                    if (w in rel) { sum[w] += $2 - rel[w]; n[w]++ } }
    END { printf "%s", t; for (w = 0; w < 4; w++) printf " %.5f", n[w] ? sum[w] / n[w] : t; print "" }
  ' "$tmp/log"
}

throttled_sim() { # policy seed T0 T1 T2 T3 -> virtual seconds to target
  local cluster="const:$3@0;const:$4@1;const:$5@2;const:$6@3"
  "$sw" sim --policy "$1" --seed "$2" --workers 4 "${TCOMMON[@]}" --eval-every 0.1 \
    --cluster "$cluster" --net bw=1e15,lat=0 --max-time 120 -q |
    sed -n 's/.*target reached at t=\([0-9.]*\) s.*/\1/p'
}

if [ "$mode" = throttle ]; then
  procs=$(cgroup_slow) || { echo "throttle mode needs root and a writable cpu cgroup" >&2; exit 1; }
  trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rmdir "$(dirname "$procs")"; rm -rf "$tmp"' EXIT
  echo "4 workers, 2 held to $QUOTA% of a CPU (CFS bandwidth); mean step times measured per run"
  printf "%-10s %10s %10s %8s   %s\n" policy "real (s)" "sim (s)" ratio "step times s (w0 w1 | w2 w3 throttled)"
  for policy in bsp ssp:s=3 asp; do
    for seed in $(seq "$runs"); do
      read -r t t0 t1 t2 t3 <<< "$(throttled_run "$policy" "$seed" "$procs")"
      s=$(throttled_sim "$policy" "$seed" "$t0" "$t1" "$t2" "$t3")
      printf "%-10s %10s %10s %8.2f   %s %s | %s %s\n" "$policy" "$t" "$s" \
        "$(awk -v a="$t" -v b="$s" 'BEGIN { print (b > 0) ? a / b : 0 }')" "$t0" "$t1" "$t2" "$t3"
    done
  done
  exit 0
fi

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
