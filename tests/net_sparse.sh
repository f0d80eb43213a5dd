#!/usr/bin/env bash
# The sparse path with real processes: `syncwise data gen` writes text-like LIBSVM data, a server
# trains a linear SVM on it with 3 workers that pull only the weights their batches touch and
# push (index, value) pairs; ssp and asp reach the target, asp also with 2 lock-free apply
# threads; bad options are refused.
. "$(dirname "$0")/lib.sh"
trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT

expect_status 0 "data gen" -- "$SW" data gen --n 12000 --dim 2000 --density 0.01 --seed 3 \
  --out "$TMP/text.svm"
expect_output "12000 rows, 2000 features" "gen says what it wrote"
OUT=$(head -1 "$TMP/text.svm")
expect_output ":" "the file is LIBSVM text"

run() { # policy, then server options: server + 3 workers; OUT = the server's output
  rm -f "$TMP/ep"
  "$SW" server --bind "tcp://127.0.0.1:*" --endpoint-file "$TMP/ep" --policy "$1" "${@:2}" \
    --model svm --data "libsvm:train=$TMP/text.svm" --lr 0.35 --batch 16 --target-acc 0.75 \
    --eval-every 0.2 --max-time 60 --threads 1 > "$TMP/server.out" 2>&1 &
  local server=$!
  for _ in $(seq 100); do [ -s "$TMP/ep" ] && break; sleep 0.05; done
  for i in 1 2 3; do "$SW" worker --connect "$(cat "$TMP/ep")" --threads 1 -q & done
  wait "$server"
  checks=$((checks + 1))
  [ $? -eq 0 ] || { echo "FAIL: $1: the server failed"; failures=$((failures + 1)); }
  wait
  OUT=$(cat "$TMP/server.out")
}

for policy in ssp:s=2 asp; do
  run "$policy"
  expect_output "target reached" "$policy: sparse SVM reaches 0.75"
  expect_output "0 refused messages" "$policy: every sparse message was valid"
done

# Concurrent applies: asp with two apply threads, lock-free both ways.
for mode in hogwild atomic; do
  run asp --apply-threads 2 --apply-mode "$mode"
  expect_output "target reached" "asp with 2 $mode apply threads reaches 0.75"
  expect_output "0 refused messages" "$mode: every push was applied"
done
expect_status 1 "threads need asp" -- "$SW" server --policy bsp --apply-threads 2 --model svm \
  --data "sparse:n=100,test=10,dim=50" --max-time 1
expect_output "needs --policy asp" "the refusal says why"
expect_status 1 "unknown apply mode" -- "$SW" server --apply-threads 2 --apply-mode lockless \
  --model svm --data "sparse:n=100,test=10,dim=50" --max-time 1
expect_output "lockless" "the bad mode is named"

expect_status 1 "checkpoints are dense only" -- "$SW" server --model svm \
  --data "sparse:n=100,test=10,dim=50" --checkpoint "$TMP/x.ckpt" --max-time 1
expect_output "dense models only" "the refusal says why"
expect_status 1 "unknown sparse data" -- "$SW" server --model svm --data "fashion-mnist" \
  --max-time 1
expect_output "unknown sparse data" "sparse models need sparse data"
finish
