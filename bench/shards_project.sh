#!/usr/bin/env bash
# A sharded server beyond this machine: the simulator's model of shards (sim --net shards=S,
# docs/simulator.md) fed with the costs bench/shards.sh measures here, for 1, 8, 32 and 128
# shards and growing clusters, under asp and bsp.
#   bench/shards_project.sh [BUILD_DIR]
# Costs, from the environment (defaults: this machine's, docs/results/shards.md):
#   DECIDE, ENTRY, FANOUT  the control plane's CPU: DECIDE + ENTRY x shards seconds a push,
#                    FANOUT x shards a turn (its frames from and to each shard; the pushes that
#                    waited while a turn ran share the next)
#   SHARD_BW         bytes per second one shard moves each way (its link, or its core if slower)
#   BW, LAT          a worker's link and the latency of a message (10 GbE, 50 us)
# Each row: pushes per second, goodput (a step's bytes, the gradient up and the parameters
# down, x pushes / time), that as a share of the same cluster against a server without limits
# (the simulator's default network: no queue at the server), and how busy the busiest shard
# link and the control plane were. The simulator is deterministic: one run per cell.
set -euo pipefail
build=${1:-build}
sw="$build/syncwise"
DECIDE=${DECIDE:-3.84e-5}
FANOUT=${FANOUT:-2.53e-5}
ENTRY=${ENTRY:-1e-6}
SHARD_BW=${SHARD_BW:-1.25e9} # a shard's core moves 1.6-2 GB/s each way here: its 10 GbE link bounds it
BW=${BW:-1.25e9}
LAT=${LAT:-5e-5}
echo "costs: control plane ${DECIDE} s + ${ENTRY} s x shards a push, ${FANOUT} s x shards a turn;" \
  "shard links ${SHARD_BW} B/s each way; workers' links ${BW} B/s; latency ${LAT} s"

sim() { # policy workers params step seconds [net extras] -> "pushes link% ctl%"
  local out
  out=$("$sw" sim --no-model --policy "$1" --workers "$2" --cluster "uniform:$(
    awk -v s="$4" 'BEGIN { printf "%g,%g", 0.9 * s, 1.1 * s }')" \
    --net "bw=$BW,lat=$LAT,params=$3$6" --max-time "$5" --seed 1 -q)
  awk '/ pushes / { gsub(",", ""); for (i = 1; i <= NF; i++) if ($i == "pushes") p = $(i + 1) }
       /shards:/ { for (i = 1; i <= NF; i++) if ($i ~ /%$/) { v[++k] = $i } }
       END { printf "%s %s %s\n", p, (k ? v[1] : "-"), (k ? v[2] : "-") }' <<< "$out"
}

project() { # title params step seconds workers...
  local title=$1 params=$2 step=$3 seconds=$4
  shift 4
  echo
  echo "$title: $params parameters ($(awk -v p="$params" 'BEGIN { printf "%.0f", 4 * p / 1e6 }') MB)," \
    "compute ${step} s a step (+-10%), ${seconds} virtual s a run"
  printf "%-6s %8s %7s %12s %14s %10s %10s %10s\n" policy workers shards pushes/s \
    "goodput GB/s" "of ideal" "link busy" "ctl busy"
  local policy w s ideal p l c
  for policy in asp bsp; do
    for w in "$@"; do
      read -r ideal _ _ < <(sim "$policy" "$w" "$params" "$step" "$seconds" "")
      for s in 1 8 32 128; do
        read -r p l c < <(sim "$policy" "$w" "$params" "$step" "$seconds" \
          ",shards=$s,server_bw=$SHARD_BW,decide=$DECIDE,fanout=$FANOUT,entry=$ENTRY")
        awk -v po="$policy" -v w="$w" -v s="$s" -v p="$p" -v i="$ideal" -v t="$seconds" \
          -v b="$params" -v l="$l" -v c="$c" 'BEGIN {
          printf "%-6s %8d %7d %12.0f %14.2f %10.2f %10s %10s\n", po, w, s, p / t,
                 p * 8 * b / t / 1e9, p / i, l, c }'
      done
    done
  done
}

# A dense model of ResNet-50's size on accelerators: the bytes bound it.
project "dense, large" 25000000 0.2 30 16 64 256
# A small model that steps fast (a sparse or a small dense model): the decisions bound it.
project "dense, small" 250000 0.01 5 64 256 1024
