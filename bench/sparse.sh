#!/usr/bin/env bash
# Sparse SVM on text-like data with real processes (issue: sparse models and updates):
# 1. bytes on the wire per push (with its pull and answers), sparse messages against the dense
#    messages the same model would need (a push and a release carrying all dim + 1 floats);
# 2. time to the target accuracy of the parameter server in asynchronous mode with 1, 2, 4 and 8
#    worker processes, and the speedup over one;
# 3. time to a target test loss of the decentralized mode (syncwise peer) with 1, 2, 4 and 8
#    peers, and the speedup over one.
# Every step also sleeps DELAY ms (--delay-ms), standing in for a heavier gradient, so that runs
# last long enough for the processes to overlap.
#   bench/sparse.sh [BUILD_DIR] [DIM] [TARGET] [TARGET_LOSS] [DELAY]
#   (defaults: build, 100000, 0.90, 0.34, 1)
set -euo pipefail
build=${1:-build}
dim=${2:-100000}
target=${3:-0.90}
target_loss=${4:-0.34}
delay=${5:-1}
sw="$build/syncwise"
tmp=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
export OPENBLAS_NUM_THREADS=1
echo "machine: $(nproc) cores; OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
"$sw" data gen --n 50000 --dim "$dim" --density 0.001 --seed 1 --out "$tmp/text.svm"

run() { # workers -> server output in $tmp/out
  rm -f "$tmp/ep"
  "$sw" server --bind "tcp://127.0.0.1:*" --endpoint-file "$tmp/ep" --policy asp --model svm \
    --data "libsvm:train=$tmp/text.svm" --lr 0.35 --batch 16 --target-acc "$target" \
    --eval-every 0.1 --max-time 120 --threads 1 --wait-workers "$1" -q > "$tmp/out" 2>/dev/null &
  local server=$!
  for _ in $(seq 200); do [ -s "$tmp/ep" ] && break; sleep 0.05; done
  for _ in $(seq "$1"); do
    "$sw" worker --connect "$(cat "$tmp/ep")" --threads 1 --delay-ms "$delay" -q &
  done
  wait "$server"
  wait
}

printf "\n%8s %12s %10s %14s %16s %9s\n" workers "time (s)" speedup "pushes/s" "bytes/push" "dense/sparse"
dense=$(( 2 * (40 + 4 * (dim + 1)) ))
base=""
for w in 1 2 4 8; do
  run "$w"
  t=$(sed -n 's/.*trained \([0-9.]*\) s.*/\1/p' "$tmp/out")
  pushes=$(sed -n 's/.*(from 0), \([0-9]*\) pushes.*/\1/p' "$tmp/out")
  bpp=$(sed -n 's/.*out, \([0-9]*\) bytes per push.*/\1/p' "$tmp/out")
  grep -q "target reached" "$tmp/out" || t="$t (not reached)"
  base=${base:-${t%% *}}
  printf "%8s %12s %10.2f %14.0f %16s %9.0f\n" "$w" "$t" \
    "$(awk -v a="$base" -v b="${t%% *}" 'BEGIN { print a / b }')" \
    "$(awk -v p="$pushes" -v s="${t%% *}" 'BEGIN { print p / s }')" "$bpp" \
    "$(awk -v d="$dense" -v s="$bpp" 'BEGIN { print d / s }')"
done
echo "(dense: a push and a release with the parameters, $dense bytes per push)"

peers() { # count -> the judge's line in $tmp/judge
  rm -f "$tmp/ep" "$tmp"/peer*.out
  "$sw" peer --endpoint-file "$tmp/ep" --data "libsvm:train=$tmp/text.svm" \
    --target-loss "$target_loss" --delay-ms "$delay" --max-time 120 -q > "$tmp/peer1.out" 2>&1 &
  for _ in $(seq 200); do [ -s "$tmp/ep" ] && break; sleep 0.05; done
  for i in $(seq 2 "$1"); do
    "$sw" peer --join "$(cat "$tmp/ep")" --data "libsvm:train=$tmp/text.svm" \
      --target-loss "$target_loss" --delay-ms "$delay" --max-time 120 -q > "$tmp/peer$i.out" 2>&1 &
  done
  wait
  grep -h "best test loss" "$tmp"/peer*.out | head -1 > "$tmp/judge"
}

printf "\ndecentralized (syncwise peer) to test loss %s\n%8s %12s %10s %12s\n" "$target_loss" \
  peers "time (s)" speedup "MB sent"
base=""
for w in 1 2 4 8; do
  peers "$w"
  t=$(sed -n 's/.*after \([0-9.]*\) s:.*/\1/p' "$tmp/judge")
  mb=$(cat "$tmp"/peer*.out | sed -n 's/.*dropped, \([0-9.]*\) MB sent.*/\1/p' |
    awk '{ s += $1 } END { print s + 0 }')
  grep -q "target loss reached" "$tmp/judge" || t="$t (not reached)"
  base=${base:-${t%% *}}
  printf "%8s %12s %10.2f %12s\n" "$w" "$t" "$(awk -v a="$base" -v b="${t%% *}" 'BEGIN { print a / b }')" "$mb"
done
echo "(joiners start as soon as the first peer listens; the first peer's time counts from its start)"
