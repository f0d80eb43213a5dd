#!/usr/bin/env bash
# Sharded runs' throughput: 4 real worker processes under asp on loopback against one server
# holding θ, then a server with each of SHARD_COUNTS shards, side by side in one run, each for
# SECONDS.
#   bench/shards.sh [BUILD_DIR] [SECONDS] [TRIALS] [SHARD_COUNTS] [WORKER_COUNTS]
#   (default build 8 3 "1 2" 4; POLICY=bsp, say, for another policy than asp)
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
#   frames     the frames the server received from the shards per push: S a push when every
#              turn handles one push, fewer when a turn's reports come batched (protocol.md)
# and each configuration's goodput as a ratio to the unsharded server's. With three or more
# sharded configurations it fits the control plane's CPU per push to decide + per-shard x
# shards, and, when the frames per push vary apart from the shards (more workers batch more),
# to decide + entry x shards + fanout x frames per push (least squares): the costs
# `sim --net shards=S,decide=..,fanout=..,entry=..` takes (bench/shards_project.sh).
# All processes share this machine's cores, so shards here add processes, not cores: the ratio
# says what the extra hops cost; the CPU per decision says where the control plane alone would
# stop.
set -euo pipefail
build=${1:-build}
seconds=${2:-8}
trials=${3:-3}
counts=${4:-1 2}
worker_counts=${5:-4}
policy=${POLICY:-asp}
sw="$build/syncwise"
D=65536
PARAMS=$(((D + 1) * 2))
DATA="synthetic:task=logistic,d=$D,n=32,test=16,val=16" # quick to make: workers load it after joining
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}; $(nproc) cores; $PARAMS parameters;" \
  "workers: $worker_counts; $policy"

run() { # shards, workers -> "pushes_per_s server_cpu_s pushes shard_cpu_s frames" of one trial
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
      "${sharding[@]}" --policy "$policy" --data "$DATA" --model softmax --batch 1 --lr 0.01 \
      --wait-workers "$workers" --max-time "$seconds" --eval-every 1000 -q \
      > "$tmp/out" 2> /dev/null; } 2> "$tmp/time" &
  local server=$!
  for _ in $(seq 200); do [ -s "$tmp/ep" ] && break; sleep 0.05; done
  for j in $(seq 1 "$workers"); do
    "$sw" worker --connect "$(cat "$tmp/ep")" --threads 1 -q > /dev/null 2>&1 &
    pids+=($!)
  done
  wait "$server"
  wait "${pids[@]}" 2>/dev/null || true
  # "... N pushes, ... trained T s after ..."
  local pushes trained cpu frames
  pushes=$(sed -n 's/.* \([0-9]*\) pushes,.*/\1/p' "$tmp/out")
  frames=$(sed -n 's/^shards: \([0-9]*\) frames from the shards.*/\1/p' "$tmp/out")
  trained=$(sed -n 's/.*trained \([0-9.]*\) s after.*/\1/p' "$tmp/out")
  [ -n "$trained" ] || trained=1 # never started: the idle run
  cpu=$(awk '{print $1 + $2}' "$tmp/time")
  local shard_cpu=0
  [ "$shards" -gt 0 ] && shard_cpu=$(cat "$tmp"/shard*.time | awk '{ c += $1 + $2 } END { print c }')
  rm -f "$tmp"/shard*.time
  awk -v p="$pushes" -v t="$trained" -v c="$cpu" -v s="$shard_cpu" -v f="${frames:-0}" \
    'BEGIN { printf "%.1f %.3f %d %.3f %d\n", p / t, c, p, s, f }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

declare -A rate cpu idle shard_idle shard_cpu frames base
configs=""
for w in $worker_counts; do
  for shards in 0 $counts; do configs+="$shards:$w "; done
done
for shards in 0 $counts; do # the CPU with no worker: start, evaluations and waiting
  read -r _ idle[$shards] _ shard_idle[$shards] _ < <(run "$shards" 0)
done
bytes=$((8 * PARAMS)) # the gradient up and the parameters down
for trial in $(seq "$trials"); do
  for cfg in $configs; do # interleaved, so that the machine's drift falls on all alike
    shards=${cfg%:*}
    read -r r c p sc fr < <(run "$shards" "${cfg#*:}")
    rate[$cfg]+="$r "
    cpu[$cfg]+="$(awk -v c="$c" -v i="${idle[$shards]}" -v p="$p" \
      'BEGIN { printf "%.1f", (c - i) / p * 1e6 }') "
    shard_cpu[$cfg]+="$(awk -v c="$sc" -v i="${shard_idle[$shards]}" -v p="$p" -v b="$bytes" \
      'BEGIN { printf "%.1f", (c - i) / (p * b / 1e6) * 1e6 }') "
    frames[$cfg]+="$(awk -v f="$fr" -v p="$p" 'BEGIN { printf "%.3f", f / p }') "
  done
done
printf "%-26s %9s %13s %12s %12s %16s %12s %6s\n" configuration pushes/s "goodput MB/s" \
  "CPU/push us" "decisions/s" "shard CPU us/MB" "frames/push" ratio
fit=""
for cfg in $configs; do
  shards=${cfg%:*}
  w=${cfg#*:}
  r=$(echo "${rate[$cfg]}" | tr ' ' '\n' | grep . | median)
  c=$(echo "${cpu[$cfg]}" | tr ' ' '\n' | grep . | median)
  sc=$(echo "${shard_cpu[$cfg]}" | tr ' ' '\n' | grep . | median)
  f=$(echo "${frames[$cfg]}" | tr ' ' '\n' | grep . | median)
  g=$(awk -v r="$r" -v b="$bytes" 'BEGIN { printf "%.0f", r * b / 1e6 }')
  [ "$shards" -eq 0 ] && base[$w]=$g
  name=$([ "$shards" -eq 0 ] && echo "server holds θ" || echo "$shards shard(s)")
  [ "$shards" -eq 0 ] && { sc=-; f=-; }
  awk -v n="$name, $w workers" -v r="$r" -v g="$g" -v c="$c" -v sc="$sc" -v f="$f" \
    -v b="${base[$w]}" 'BEGIN {
    printf "%-26s %9.0f %13.0f %12.1f %12.0f %16s %12s %6.2f\n", n, r, g, c, 1e6 / c, sc, f,
           g / b }'
  [ "$shards" -gt 0 ] && fit+="$shards $c $f"$'\n'
done
if [ "$(echo "$fit" | grep -c .)" -ge 3 ]; then
  # c = d + k S over every sharded configuration (k: a shard's share of a push, frames included)
  echo "$fit" | awk 'NF == 3 { n++; x += $1; y += $2; xx += $1 * $1; xy += $1 * $2 }
    END { f = (n * xy - x * y) / (n * xx - x * x); d = (y - f * x) / n
          printf "control plane CPU per push ~ %.1f us + %.1f us x shards\n", d, f }'
  # c = d + e S + F (frames per push): what a push costs apart from the frames its turn shares
  echo "$fit" | awk '
    function det(a, b, c, d, e, f, g, h, i) {
      return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    }
    NF == 3 { n++; x += $1; z += $3; c += $2; xx += $1 * $1; zz += $3 * $3; xz += $1 * $3
              xc += $1 * $2; zc += $3 * $2 }
    END { D = det(n, x, z, x, xx, xz, z, xz, zz)
          if (D * D <= 1e-12 * (n * xx * zz) ^ 2) {
            print "(frames per push did not vary apart from the shards: no split of the cost per" \
                  " shard into frames and entries; add worker counts)"; exit }
          d = det(c, x, z, xc, xx, xz, zc, xz, zz) / D
          e = det(n, c, z, x, xc, xz, z, zc, zz) / D
          F = det(n, x, c, x, xx, xc, z, xz, zc) / D
          printf "  ~ %.1f us + %.1f us x shards + %.1f us x frames per push " \
                 "(sim --net ...,decide=%.3g,entry=%.3g,fanout=%.3g)\n", d, e, F, d * 1e-6,
                 e * 1e-6, F * 1e-6 }'
fi
