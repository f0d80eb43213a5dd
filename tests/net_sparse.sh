#!/usr/bin/env bash
# The sparse path with real processes: `syncwise data gen` writes text-like LIBSVM data, a server
# trains a linear SVM on it with 3 workers that pull only the weights their batches touch and
# push (index, value) pairs; ssp and asp reach the target, asp also with 2 lock-free apply
# threads; a worker whose file holds other data leaves at once; a killed server resumes from its
# checkpoint; bad options are refused.
. "$(dirname "$0")/lib.sh"
trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT

expect_status 0 "data gen" -- "$SW" data gen --n 12000 --dim 2000 --density 0.01 --seed 3 \
  --out "$TMP/text.svm"
expect_output "12000 rows, 2000 features" "gen says what it wrote"
OUT=$(head -1 "$TMP/text.svm")
expect_output ":" "the file is LIBSVM text"

run() { # policy, then server options: server + 3 workers; OUT = the server's output, and its
  # event log keeps the policy's promise
  rm -f "$TMP/ep"
  "$SW" server --bind "tcp://127.0.0.1:*" --endpoint-file "$TMP/ep" --policy "$1" "${@:2}" \
    --model svm --data "libsvm:train=$TMP/text.svm" --lr 0.35 --batch 16 --target-acc 0.75 \
    --eval-every 0.2 --max-time 60 --threads 1 --log "$TMP/run.jsonl" > "$TMP/server.out" 2>&1 &
  local server=$!
  for i in 1 2 3; do "$SW" worker --connect "$(endpoint_of "$TMP/ep")" --threads 1 -q & done
  expect_exit "$server" "$1: the server"
  wait
  expect_status 0 "$1 ${*:2}: the server's log" -- "$SW" check "$TMP/run.jsonl"
  expect_output "every promise kept" "$1 ${*:2} kept its promise"
  OUT=$(cat "$TMP/server.out")
}

for policy in ssp:s=2 asp; do
  run "$policy"
  expect_output "target reached" "$policy: sparse SVM reaches 0.75"
  expect_no_member_refused "$policy: every sparse message was valid"
done

# A worker whose file of the same name holds other rows (it runs elsewhere, or a copy went
# stale) would train on other data: WELCOME's fingerprint of the server's training set tells it,
# and it leaves at once, naming both fingerprints, instead of training (the server counts no
# crash). The same file in another place is fine.
mkdir -p "$TMP/elsewhere" "$TMP/copy"
"$SW" data gen --n 12000 --dim 2000 --density 0.01 --seed 4 --out "$TMP/elsewhere/text.svm" \
  > /dev/null
cp "$TMP/text.svm" "$TMP/copy/text.svm"
rm -f "$TMP/ep"
(cd "$TMP" && exec "$SW" server --bind "tcp://127.0.0.1:*" --endpoint-file "$TMP/ep" \
  --policy asp --model svm --data libsvm:train=text.svm --max-time 4 > "$TMP/server.out" 2>&1) &
server=$!
EP=$(endpoint_of "$TMP/ep")
expect_status 1 "a worker whose data differ" -- sh -c "cd '$TMP/elsewhere' && '$SW' worker \
  --connect $EP --threads 1"
expect_output "differs from the server's (fingerprint" "the worker says why it leaves"
expect_status 0 "a worker with a copy of the data" -- sh -c "cd '$TMP/copy' && '$SW' worker \
  --connect $EP --threads 1 -q"
expect_exit "$server" "the server with one worker on other data"
OUT=$(cat "$TMP/server.out")
expect_output "0 crashed" "the worker that left was no crash"

# Concurrent applies: two apply threads, lock-free both ways, under asp and ssp.
for mode in hogwild atomic; do
  run asp --apply-threads 2 --apply-mode "$mode"
  expect_output "target reached" "asp with 2 $mode apply threads reaches 0.75"
  expect_no_member_refused "$mode: every push was applied"
done
run ssp:s=2 --apply-threads 2
expect_output "target reached" "ssp with 2 locked apply threads reaches 0.75"
expect_status 2 "threads need a policy that applies on arrival" -- "$SW" server --policy bsp \
  --apply-threads 2 --model svm --data "sparse:n=100,test=10,dim=50" --max-time 1
expect_output "cannot run with concurrent applies" "the refusal says why"
expect_status 2 "unknown apply mode" -- "$SW" server --apply-threads 2 --apply-mode lockless \
  --model svm --data "sparse:n=100,test=10,dim=50" --max-time 1
expect_output "lockless" "the bad mode is named"

# The sparse server killed and restarted from its checkpoint: the version carries on, the
# workers rejoin by themselves, and `syncwise eval` reads the checkpoint. Neither server has a
# target: the first could reach it (and exit) before the kill, and the resumed one could stop on
# its first evaluation before any worker rejoined. The resumed one stops after 40 applies of its
# own, which only the rejoined workers can make.
rm -f "$TMP/ep" "$TMP/s.ckpt"
serve() { # extra server options
  "$SW" server --policy asp --model svm --data "libsvm:train=$TMP/text.svm" --lr 0.35 \
    --batch 16 --eval-every 0.2 --max-time 60 --threads 1 \
    --checkpoint "$TMP/s.ckpt" "$@" > "$TMP/server.out" 2>&1 &
  SPID=$!
}
serve --bind "tcp://127.0.0.1:*" --endpoint-file "$TMP/ep" --checkpoint-applies 20
EP=$(endpoint_of "$TMP/ep")
WPIDS=()
for i in 1 2 3; do "$SW" worker --connect "$EP" --threads 1 --delay-ms 30 -q & WPIDS+=($!); done
for _ in $(seq 200); do [ -s "$TMP/s.ckpt" ] && break; sleep 0.05; done
# That one is the start's (version 0): the kill comes after a checkpoint of applies.
cp "$TMP/s.ckpt" "$TMP/s.ckpt.start" 2>/dev/null
for _ in $(seq 400); do cmp -s "$TMP/s.ckpt" "$TMP/s.ckpt.start" || break; sleep 0.05; done
kill -9 "$SPID"
wait "$SPID" 2>/dev/null
checks=$((checks + 1))
[ -s "$TMP/s.ckpt" ] || { echo "FAIL: no sparse checkpoint"; failures=$((failures + 1)); }
serve --bind "$EP" --resume --wait-workers 3 --max-applies 40
expect_exit "$SPID" "the resumed sparse server"
wait "${WPIDS[@]}"
OUT=$(cat "$TMP/server.out")
expect_output "stopped: version" "the resumed sparse run completes"
final=$(printf '%s' "$OUT" | sed -n 's/.*test accuracy \([0-9.]*\).*/\1/p')
from=$(sed -n 's/.*(from \([0-9]*\)).*/\1/p' "$TMP/server.out")
checks=$((checks + 1))
[ "${from:-0}" -gt 0 ] || { echo "FAIL: resumed from version ${from:-?}"; failures=$((failures + 1)); }
expect_output "3 joins" "the workers rejoined the new server by themselves"
expect_status 0 "eval reads a sparse checkpoint" -- "$SW" eval --model-file "$TMP/s.ckpt"
expect_output "model svm:lambda=" "eval names the sparse model"
# The checkpoint holds the server's final model: eval scores it as the server's last evaluation
# did (the same held-out rows; 1e-3 allows for summation order).
acc=$(printf '%s' "$OUT" | sed -n 's/.*accuracy \([0-9.]*\).*/\1/p')
checks=$((checks + 1))
awk -v a="${acc:--1}" -v f="${final:--9}" 'BEGIN { d = a - f; exit !(d < 1e-3 && d > -1e-3) }' ||
  { echo "FAIL: eval scores the checkpoint ${acc:-?}, the server ${final:-?}"
    failures=$((failures + 1)); }
expect_status 2 "eval has no val split for sparse data" -- "$SW" eval --model-file "$TMP/s.ckpt" \
  --split val
expect_output "no val split" "the refusal says why"
expect_status 2 "unknown sparse data" -- "$SW" server --model svm --data "fashion-mnist" \
  --max-time 1
expect_output "unknown sparse data" "sparse models need sparse data"
finish
