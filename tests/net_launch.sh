#!/usr/bin/env bash
# syncwise launch: rank 0 serves, other ranks work, ranks and the server found from a launcher's
# environment (SYNCWISE_RANK, OpenMPI, Slurm); --servers S makes ranks 1..S shards; --curve DIR
# puts every link under CURVE; and clear errors when they cannot be found.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net_lib.sh"
trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
# Ports P, P+1, P+2 below Linux's ephemeral range (32768 and up), which the connections of tests
# running beside this one take from: a shard's port taken that way would stall its run.
port=$((20000 + RANDOM % 12000))
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
# --servers 2: ranks 1 and 2 are the shards (on ports P+1, P+2 of the hosts SYNCWISE_HOSTS
# names), ranks 3 and 4 the workers; the server waits for the two workers.
hosts=127.0.0.1,127.0.0.1,127.0.0.1
pids=()
# launch_sharded NAME LAUNCH-OPTIONS...: ranks 2 1 0 3 4 of a run with 2 shards on a fresh
# port, their outputs in $TMP/NAME<rank>.out, waiting for rank 0; the others' pids in pids. OUT
# is rank 0's output, led by the shards' and workers' last lines when it misses its target.
launch_sharded() {
  local name=$1 rank
  shift
  port=$((20000 + RANDOM % 12000))
  for rank in 2 1 0 3 4; do
    SYNCWISE_RANK=$rank SYNCWISE_SIZE=5 SYNCWISE_HOSTS=$hosts "$SW" launch --port "$port" \
      --servers 2 "$@" > "$TMP/$name$rank.out" 2>&1 &
    pids[rank]=$!
  done
  wait "${pids[0]}"
  OUT=$(cat "$TMP/${name}0.out")
  grep -q "target reached" <<< "$OUT" ||
    OUT=$(tail -n 5 "$TMP/$name"[1-4].out; cat "$TMP/${name}0.out")
}
RUN=(--data synthetic:task=logistic,d=20,n=5000 --model softmax --lr 0.1 --target-acc 0.85
  --eval-every 0.2 --max-time 30)
launch_sharded sharded --shard-state "$TMP/state" -- "${RUN[@]}" -q
expect_output "target reached" "rank 0 served a run on the shards of ranks 1 and 2"
expect_output "2 joins" "ranks 3 and 4 worked"
wait "${pids[1]}" "${pids[2]}" "${pids[3]}" "${pids[4]}"
OUT=$(cat "$TMP/sharded1.out" "$TMP/sharded2.out")
expect_output "run over: version" "ranks 1 and 2 held the shards to the end"
checks=$((checks + 1))
[ -s "$TMP/state/shard-1.ckpt" ] && [ -s "$TMP/state/shard-2.ckpt" ] &&
  [ -s "$TMP/state/server.ckpt" ] ||
  { echo "FAIL: --shard-state: no checkpoints of the shards and the server's record"
    failures=$((failures + 1)); }
# A shard's rank killed and started again with the same command rejoins the run: --shard-state
# made it checkpoint (the server's record beside), so it resumes and every shard goes back to
# the version all of them hold.
port=$((20000 + RANDOM % 12000))
start_rank() { # rank: runs it as the launcher would, its output in $TMP/again<rank>.out
  SYNCWISE_RANK=$1 SYNCWISE_SIZE=5 SYNCWISE_HOSTS=$hosts "$SW" launch --port "$port" --servers 2 \
    --shard-state "$TMP/state2" -- --data synthetic:task=logistic,d=20,n=5000 --model softmax \
    --lr 0.1 --max-time 6 --checkpoint-applies 10 >> "$TMP/again$1.out" 2>&1 &
  pids[$1]=$!
}
for rank in 2 1 0 3 4; do start_rank "$rank"; done
wait_for 20 grep -q "^version=[1-9]" "$TMP/state2/server.ckpt"
kill -9 "${pids[1]}"
wait "${pids[1]}" 2>/dev/null
start_rank 1
wait "${pids[0]}"
rc=$?
checks=$((checks + 1))
[ "$rc" -eq 0 ] || { echo "FAIL: the run with a restarted shard rank ended with $rc"
                     tail -n 3 "$TMP"/again*.out; failures=$((failures + 1)); }
OUT=$(cat "$TMP/again0.out")
# The shard rank comes back within a second: the server restores every shard because its link
# was made again.
expect_output "every shard goes back to version" "the server restored the shards"
for rank in 1 2 3 4; do # every rank ends with the run (a shard left waiting is a failure)
  wait_for 15 sh -c "! kill -0 ${pids[rank]}" || kill -9 "${pids[rank]}"
  wait "${pids[rank]}" 2>/dev/null
done
OUT=$(cat "$TMP/again1.out")
expect_output "1 restores" "the restarted rank rejoined the run"
expect_status 0 "a dry run makes no state directory" -- env SYNCWISE_RANK=1 SYNCWISE_HOSTS=$hosts \
  "$SW" launch -n --servers 2 --shard-state "$TMP/nodir"
checks=$((checks + 1))
[ ! -e "$TMP/nodir" ] || { echo "FAIL: launch -n made its --shard-state"; failures=$((failures + 1)); }
# --curve DIR: every link under CURVE, the keys from one directory: the server and its shards
# take server.key and clients, rank 3 its own rank-3.key, rank 4 the shared worker.key
# (net_curve.sh holds the server and the shards to refusing keys that are not in clients.)
keys="$TMP/keys"
mkdir -p "$keys"
for who in server worker rank-3; do "$SW" keygen "$keys/$who" > /dev/null; done
cat "$keys/worker.pub" "$keys/rank-3.pub" > "$keys/clients"
launch_sharded curve --curve "$keys" -- "${RUN[@]}"
expect_output "target reached" "a sharded run under CURVE, keys from --curve DIR"
expect_output "2 joins" "rank 3 (its own key) and rank 4 (the shared key) worked"
expect_output "CURVE: encrypted" "the server listened under CURVE"
wait "${pids[1]}" "${pids[2]}" "${pids[3]}" "${pids[4]}"
for rank in 1 2; do
  OUT=$(cat "$TMP/curve$rank.out")
  expect_output "run over: version" "CURVE shard $rank held its slice to the end"
  expect_output "CURVE: encrypted" "shard $rank listened under CURVE"
done
rm "$keys/worker.key"
expect_status 1 "--curve without a worker key" -- env SYNCWISE_RANK=4 SYNCWISE_SERVER=127.0.0.1 \
  "$SW" launch --port "$port" --curve "$keys"
expect_output "cannot read $keys/worker.key" "says which key is missing"
expect_status 1 "--curve without the server's key" -- env SYNCWISE_RANK=0 \
  "$SW" launch --port "$port" --curve "$TMP/nowhere"
expect_output "server.key" "says which key is missing"
expect_status 1 "a shard's host unknown" -- env SYNCWISE_RANK=0 SYNCWISE_HOSTS=127.0.0.1 \
  "$SW" launch --port "$port" --servers 2
expect_output "cannot find the host of rank 1" "says which rank"
expect_status 1 "no rank" -- env -u SYNCWISE_RANK HOSTNAME=x "$SW" launch --port "$port" --server nowhere
expect_status 1 "no server for a worker" -- env SYNCWISE_RANK=3 "$SW" launch --port "$port"
expect_output "cannot find the server" "says what is missing"
# Slurm with several tasks per node: a fake scontrol expands the node list to n0 n1 n2, and
# --dry-run prints what each rank would run. Tasks fill nodes in blocks by default ("2(x2),2":
# ranks 0-1 on n0, 2-3 on n1), or go round them under SLURM_DISTRIBUTION=cyclic.
mkdir -p "$TMP/bin"
printf '#!/bin/sh\n[ "$1 $2" = "show hostnames" ] && printf "n0\\nn1\\nn2\\n"\n' > "$TMP/bin/scontrol"
chmod +x "$TMP/bin/scontrol"
slurm=(env -u SYNCWISE_RANK -u SYNCWISE_HOSTS -u SYNCWISE_SERVER PATH="$TMP/bin:$PATH"
       SLURM_JOB_NODELIST="n[0-2]" SLURM_TASKS_PER_NODE="2(x2),2" SLURM_NTASKS=6)
expect_status 0 "Slurm, blocks of two tasks per node" -- "${slurm[@]}" SLURM_PROCID=0 \
  "$SW" launch --dry-run --servers 2 -- --policy asp
expect_output "server --bind tcp://0.0.0.0:5555 --shards tcp://n0:5556,tcp://n1:5557 --wait-workers 3" \
  "rank 1 shares n0 with the server, rank 2 is on n1"
# A launcher's count or rank that is no number a job has is refused, naming the variable (an
# overflowing size became --wait-workers 9223372036854775806; -5 and abc were passed over).
for bad in 99999999999999999999 -5 abc 0; do
  expect_status 2 "SLURM_NTASKS=$bad" -- "${slurm[@]}" SLURM_NTASKS="$bad" SLURM_PROCID=0 \
    "$SW" launch -n
  expect_output "SLURM_NTASKS=$bad is not a whole number of processes" "names the variable"
done
expect_status 2 "SLURM_PROCID=-1" -- "${slurm[@]}" SLURM_PROCID=-1 "$SW" launch -n
expect_output "SLURM_PROCID=-1 is not a rank" "names the variable"
expect_status 0 "Slurm, a worker" -- "${slurm[@]}" SLURM_PROCID=5 "$SW" launch -n
expect_output "worker --connect tcp://n0:5555 --name rank-5" "the workers find the server on n0"
expect_status 0 "Slurm, cyclic" -- "${slurm[@]}" SLURM_DISTRIBUTION=cyclic SLURM_PROCID=0 \
  "$SW" launch -n --servers 2
expect_output "--shards tcp://n1:5556,tcp://n2:5557" "cyclic tasks go round the nodes"
expect_status 0 "Slurm, uneven" -- "${slurm[@]}" SLURM_TASKS_PER_NODE="1,3(x2)" SLURM_PROCID=0 \
  "$SW" launch -n --servers 3
expect_output "--shards tcp://n1:5556,tcp://n1:5557,tcp://n1:5558" "one task on n0, then three on n1"
expect_status 0 "Slurm, a shard's frame limit and threads" -- "${slurm[@]}" SLURM_PROCID=1 \
  "$SW" launch -n --servers 2 --shard-max-frame 1000000 --shard-apply-threads 4
expect_output "shard --bind tcp://0.0.0.0:5556 --max-frame 1000000 --apply-threads 4" \
  "rank 1 passes them on"
# The shards' options said wrong fail before any rank starts.
expect_status 2 "--servers with no rank left for a worker" -- env SYNCWISE_RANK=0 SYNCWISE_SIZE=3 \
  SYNCWISE_HOSTS=a,b,c "$SW" launch -n --servers 2
expect_output "--servers 2 needs at least 4 processes" "says how many it needs"
expect_status 2 "a shard's frame limit a shard would refuse" -- env SYNCWISE_RANK=1 \
  SYNCWISE_SIZE=5 SYNCWISE_HOSTS=a,b,c,d,e "$SW" launch -n --servers 2 --shard-max-frame 1000
expect_output "--shard-max-frame: 1000 is outside" "says the range"
expect_status 2 "--shard-state without --servers" -- env SYNCWISE_RANK=0 SYNCWISE_SIZE=3 \
  "$SW" launch -n --shard-state "$TMP/state"
expect_output "give --servers S too" "says what it needs"
# A host list's blank item is no host (it became --connect "tcp:// a:5555"), and a Slurm layout
# launch cannot follow is named as such, not blamed on SLURM_TASKS_PER_NODE.
expect_status 1 "a blank in SYNCWISE_HOSTS" -- env SYNCWISE_RANK=1 SYNCWISE_HOSTS=' a,b' \
  "$SW" launch -n
expect_output "SYNCWISE_HOSTS has no item 0, counting from 0, or it holds a blank" "says so"
expect_status 1 "Slurm, a plane layout" -- "${slurm[@]}" SLURM_DISTRIBUTION=plane=2 \
  SLURM_PROCID=5 "$SW" launch -n
expect_output "SLURM_DISTRIBUTION=plane=2: launch knows tasks laid out in blocks or cyclic" \
  "names the layout"
# Every rank is told its launcher's job (--job), so that a worker whose job's server could not
# bind (two jobs on one node, one port) leaves another job's server rather than train its run.
expect_status 0 "Slurm, the server of job 4711" -- "${slurm[@]}" SLURM_JOB_ID=4711 SLURM_PROCID=0 \
  "$SW" launch -n
expect_output " --job 4711" "the server serves job 4711"
expect_status 0 "Open MPI, a worker" -- env SYNCWISE_RANK=1 SYNCWISE_SERVER=s \
  PMIX_NAMESPACE='prterun-n0-42@1' "$SW" launch -n
expect_output "--job prterun-n0-42_1" "a worker of that job, its name made a job name"
expect_status 2 "--job among the server's options" -- env SYNCWISE_RANK=0 "$SW" launch -n -- --job x
expect_output "set SYNCWISE_JOB" "says how to name another"
# A sharded run's --checkpoint without --shard-state: the shards would save nothing, and the
# server refused to start after every rank had (its workers waited out their --server-timeout).
expect_status 2 "--checkpoint with --servers and no --shard-state" -- env SYNCWISE_RANK=1 \
  SYNCWISE_SIZE=4 SYNCWISE_HOSTS=a,b,c,d "$SW" launch -n --servers 1 -- --checkpoint run.ckpt
expect_output "give --shard-state DIR" "says what to give"
# The ranks listen on IPv4: an IPv6 host would be waited for in vain.
expect_status 1 "an IPv6 server" -- env SYNCWISE_RANK=1 SYNCWISE_SERVER=::1 "$SW" launch -n
expect_output "::1 is an IPv6 address, and launch's ranks listen on IPv4" "says why"
port=$((20000 + RANDOM % 12000))
SYNCWISE_JOB=100 SYNCWISE_RANK=0 SYNCWISE_SIZE=2 "$SW" launch --port "$port" -- "${RUN[@]}" -q \
  > "$TMP/job100.out" 2>&1 &
server=$!
expect_status 1 "a worker of job 200 at job 100's server" -- env SYNCWISE_JOB=200 SYNCWISE_RANK=1 \
  SYNCWISE_SERVER=127.0.0.1 "$SW" launch --port "$port"
expect_output "serves job 100, not job 200" "it is refused before it takes a slot, saying why"
expect_status 0 "job 100's worker" -- env SYNCWISE_JOB=100 SYNCWISE_RANK=1 \
  SYNCWISE_SERVER=127.0.0.1 "$SW" launch --port "$port"
wait "$server"
OUT=$(cat "$TMP/job100.out")
expect_output "target reached" "job 100's run went on with its own worker"
# What launch gives the server itself is refused among its options, in every rank (the server
# took the last --shards, and the shards' ranks waited for a server forever).
for rank in 0 1 3; do
  expect_status 2 "rank $rank: --shards beside --servers" -- env SYNCWISE_RANK=$rank \
    SYNCWISE_SIZE=5 SYNCWISE_HOSTS=a,b,c,d,e "$SW" launch -n --servers 2 -- --shards tcp://x:1
  expect_output "give one or the other" "rank $rank says launch names the shards"
done
expect_status 2 "--bind among the server's options" -- env SYNCWISE_RANK=0 SYNCWISE_SIZE=3 \
  "$SW" launch -n -- --bind tcp://127.0.0.1:7000
expect_output "give --port instead" "says how to choose the server's port"
for dir in --shard-state --curve; do
  expect_status 2 "$dir ''" -- env SYNCWISE_RANK=0 SYNCWISE_SIZE=3 SYNCWISE_HOSTS=a,b,c "$SW" \
    launch -n --servers 1 "$dir" ""
  expect_output "$dir: an empty value" "is refused before any rank starts"
done
for host in "" "tcp://a:1"; do
  expect_status 2 "--server '$host'" -- env SYNCWISE_RANK=2 SYNCWISE_SIZE=3 "$SW" launch -n \
    --server "$host"
  expect_output "$([ -n "$host" ] && echo "the server's host name or address alone" ||
    echo "--server: an empty value")" "a worker rank is told before it starts"
done
expect_status 1 "a rank beyond the job's size" -- env SYNCWISE_RANK=7 SYNCWISE_SIZE=5 \
  SYNCWISE_SERVER=a "$SW" launch -n
expect_output "rank 7 of a job of 5 processes" "says the rank and the size"
expect_status 1 "Slurm, a layout it cannot tell" -- "${slurm[@]}" SLURM_DISTRIBUTION=plane=2 \
  SLURM_PROCID=0 "$SW" launch -n --servers 1
expect_output "set SYNCWISE_HOSTS" "says how to name the hosts"
finish
