#!/usr/bin/env bash
# Sharded runs' throughput: 4 real worker processes under asp on loopback against one server
# holding θ, then a server with each of SHARD_COUNTS shards, side by side in one run, each for
# SECONDS.
#   bench/shards.sh [BUILD_DIR] [SECONDS] [TRIALS] [SHARD_COUNTS]   (default build 8 3 "1 2")
# The model is a softmax on 65536 features (131,074 parameters, 524 KB), trained on a batch of
# one so that the step is mostly the pull and the push, as in ps-lite's goodput figures. It
# prints, per configuration, the median over TRIALS of:
#   pushes/s   the server's count of pushes over the run's training time
#   goodput    bytes per step (the gradient pushed and the parameters pulled) x pushes / time
#   CPU/push   the server's CPU (user + system) per push, less what it spends with no worker
#              (its start, evaluations, waiting): its cost per decision, what bounds the
#              control plane; and the decisions per second one core of it would reach
#   shard CPU  all shards' CPU per MB they moved (a step's bytes), less their idle CPU: the
#              data plane's cost per byte, what bounds a shard's link when its core is slower
# and each configuration's goodput as a ratio to the unsharded server's. With three or more
# shard counts it also fits the control plane's CPU per push to decide + fanout x shards (least
# squares), the costs `sim --net shards=S,decide=..,fanout=..` takes (bench/shards_project.sh).
# All processes share this machine's cores, so shards here add processes, not cores: the ratio
# says what the extra hops cost; the CPU per decision says where the control plane alone would
# stop.
set -euo pipefail
build=${1:-build}
seconds=${2:-8}
trials=${3:-3}
counts=${4:-1 2}
sw="$build/syncwise"
D=65536
PARAMS=$(((D + 1) * 2))
DATA="synthetic:task=logistic,d=$D,n=32,test=16,val=16" # quick to make: workers load it after joining
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}; $(nproc) cores; $PARAMS parameters; 4 workers; asp"

run() { # shards, workers -> "pushes_per_s server_cpu_s pushes" of one trial
  local shards=$1 workers=$2 list="" j
  local pids=()
  for j in $(seq 1 "$shards"); do
    rm -f "$tmp/shard$j.ep"
    ( TIMEFORMAT='%U %S'; time "$sw" shard --bind "tcp://127.0.0.1:*" \
        --endpoint-file "$tmp/shard$j.ep" -q > /dev/null 2>&1 ) 2> "$tmp/shard$j.time" &
    pids+=($!)
  done
  for j in $(seq 1 "$shards"); do
    for _ in $(seq 100); do [ -s "$tmp/shard$j.ep" ] && break; sleep 0.05; done
    list="$list${list:+,}$(cat "$tmp/shard$j.ep")"
  done
  rm -f "$tmp/ep"
  local sharding=()
  [ "$shards" -gt 0 ] && sharding=(--shards "$list")
  { TIMEFORMAT='%U %S'; time "$sw" server --bind "tcp://127.0.0.1:*" --endpoint-file "$tmp/ep" \
      "${sharding[@]}" --policy asp --data "$DATA" --model softmax --batch 1 --lr 0.01 \
      --wait-workers 4 --max-time "$seconds" --eval-every 1000 -q > "$tmp/out" 2> /dev/null; } \
      2> "$tmp/time" &
  local server=$!
  for _ in $(seq 200); do [ -s "$tmp/ep" ] && break; sleep 0.05; done
  for j in $(seq 1 "$workers"); do
    "$sw" worker --connect "$(cat "$tmp/ep")" --threads 1 -q > /dev/null 2>&1 &
    pids+=($!)
  done
  wait "$server"
  wait "${pids[@]}" 2>/dev/null || true
  # "... N pushes, ... trained T s after ..."
  local pushes trained cpu
  pushes=$(sed -n 's/.* \([0-9]*\) pushes,.*/\1/p' "$tmp/out")
  trained=$(sed -n 's/.*trained \([0-9.]*\) s after.*/\1/p' "$tmp/out")
  [ -n "$trained" ] || trained=1 # never started: the idle run
  cpu=$(awk '{print $1 + $2}' "$tmp/time")
  local shard_cpu=0
  [ "$shards" -gt 0 ] && shard_cpu=$(cat "$tmp"/shard*.time | awk '{ c += $1 + $2 } END { print c }')
  rm -f "$tmp"/shard*.time
  awk -v p="$pushes" -v t="$trained" -v c="$cpu" -v s="$shard_cpu" \
    'BEGIN { printf "%.1f %.3f %d %.3f\n", p / t, c, p, s }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

declare -A rate cpu idle shard_idle shard_cpu
configs="0 $counts"
for shards in $configs; do # the CPU with no worker: start, evaluations and waiting
  read -r _ idle[$shards] _ shard_idle[$shards] < <(run "$shards" 0)
done
bytes=$((8 * PARAMS)) # the gradient up and the parameters down
for trial in $(seq "$trials"); do
  for shards in $configs; do # interleaved, so that the machine's drift falls on all alike
    read -r r c p sc < <(run "$shards" 4)
    rate[$shards]+="$r "
    cpu[$shards]+="$(awk -v c="$c" -v i="${idle[$shards]}" -v p="$p" \
      'BEGIN { printf "%.1f", (c - i) / p * 1e6 }') "
    shard_cpu[$shards]+="$(awk -v c="$sc" -v i="${shard_idle[$shards]}" -v p="$p" -v b="$bytes" \
      'BEGIN { printf "%.1f", (c - i) / (p * b / 1e6) * 1e6 }') "
  done
done
printf "%-22s %10s %14s %12s %14s %16s %8s\n" configuration pushes/s "goodput MB/s" "CPU/push us" \
  "decisions/s" "shard CPU us/MB" ratio
base=""
fit=""
for shards in $configs; do
  r=$(echo "${rate[$shards]}" | tr ' ' '\n' | grep . | median)
  c=$(echo "${cpu[$shards]}" | tr ' ' '\n' | grep . | median)
  sc=$(echo "${shard_cpu[$shards]}" | tr ' ' '\n' | grep . | median)
  g=$(awk -v r="$r" -v b="$bytes" 'BEGIN { printf "%.0f", r * b / 1e6 }')
  base=${base:-$g}
  name=$([ "$shards" -eq 0 ] && echo "server holds θ" || echo "$shards shard(s)")
  [ "$shards" -eq 0 ] && sc=-
  awk -v n="$name" -v r="$r" -v g="$g" -v c="$c" -v sc="$sc" -v b="$base" 'BEGIN {
    printf "%-22s %10.0f %14.0f %12.1f %14.0f %16s %8.2f\n", n, r, g, c, 1e6 / c, sc, g / b }'
  [ "$shards" -gt 0 ] && fit+="$shards $c"$'\n'
done
if [ "$(echo "$counts" | wc -w)" -ge 3 ]; then
  echo "$fit" | awk 'NF == 2 { n++; x += $1; y += $2; xx += $1 * $1; xy += $1 * $2 }
    END { f = (n * xy - x * y) / (n * xx - x * x); d = (y - f * x) / n
          printf "control plane CPU per push ~ %.1f us + %.1f us x shards " \
                 "(sim --net ...,decide=%.3g,fanout=%.3g)\n", d, f, d * 1e-6, f * 1e-6 }'
fi
