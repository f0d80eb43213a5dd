#!/usr/bin/env bash
# syncwise launch: rank 0 serves, other ranks work, ranks and the server found from a launcher's
# environment (SYNCWISE_RANK, OpenMPI, Slurm); and clear errors when they cannot be found.
. "$(dirname "$0")/lib.sh"
trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
port=$((20000 + RANDOM % 30000))
SYNCWISE_RANK=0 SYNCWISE_SIZE=3 "$SW" launch --port "$port" -- --data synthetic:task=logistic,d=20,n=5000 \
  --model softmax --lr 0.1 --target-acc 0.85 --eval-every 0.2 --max-time 30 -q \
  > "$TMP/rank0.out" 2>&1 &
server=$!
OMPI_COMM_WORLD_RANK=1 SYNCWISE_SERVER=127.0.0.1 "$SW" launch --port "$port" > "$TMP/rank1.out" 2>&1 &
w1=$!
# Three processes: the server holds rank 1 until rank 2 is in too.
for _ in $(seq 100); do
  OUT=$("$SW" ctl --connect "tcp://127.0.0.1:$port" status 2>&1) && [[ $OUT == *"1 of 2"* ]] && break
  sleep 0.1
done
expect_output "not started: 1 of 2 workers in" "the server waits for every rank (SYNCWISE_SIZE=3)"
SLURM_PROCID=2 "$SW" launch --port "$port" --server 127.0.0.1 > "$TMP/rank2.out" 2>&1 &
w2=$!
wait "$server"
OUT=$(cat "$TMP/rank0.out")
expect_output "target reached" "rank 0 served the run"
expect_output "2 joins" "ranks 1 and 2 worked"
wait "$w1" "$w2"
OUT=$(cat "$TMP/rank1.out" "$TMP/rank2.out")
expect_output "as worker" "the workers joined"
expect_status 1 "no rank" -- env -u SYNCWISE_RANK HOSTNAME=x "$SW" launch --port "$port" --server nowhere
expect_status 1 "no server for a worker" -- env SYNCWISE_RANK=3 "$SW" launch --port "$port"
expect_output "cannot find the server" "says what is missing"
finish
