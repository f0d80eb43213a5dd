#!/usr/bin/env bash
# A sharded run with real processes on loopback (syncwise shard, server --shards): policies on 2
# and 3 shards train to a target and keep their promises on the server's log, the shards end
# with the run at the server's version having refused nothing; a worker killed and a late
# joiner; ctl status on the shards; a shard killed ends the run with its name; what a sharded
# run does not take yet is refused up front. Every process is reaped at the end.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net_lib.sh"
trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
start_shards() { # count: starts the shards, sets SHPIDS and SHARDS (their endpoints)
  SHPIDS=() SHARDS=""
  local j
  for j in $(seq 0 $(($1 - 1))); do
    rm -f "$TMP/shard$j.ep"
    "$SW" shard --bind "tcp://127.0.0.1:*" --endpoint-file "$TMP/shard$j.ep" \
      > "$TMP/shard$j.out" 2> "$TMP/shard$j.err" &
    SHPIDS+=($!)
  done
  for j in $(seq 0 $(($1 - 1))); do
    SHARDS="$SHARDS${SHARDS:+,}$(endpoint_of "$TMP/shard$j.ep")"
  done
}

expect_shards() { # description: every shard ended with the run, at the server's version, having
  # refused nothing
  local version j
  version=$(sed -n 's/.*version \([0-9]*\) (from.*/\1/p' "$TMP/server.out")
  for j in "${!SHPIDS[@]}"; do
    wait_for 10 sh -c "! kill -0 ${SHPIDS[$j]}" || kill -9 "${SHPIDS[$j]}"
    expect_exit "${SHPIDS[$j]}" "$1: shard $j ends with the run"
    OUT=$(cat "$TMP/shard$j.out")
    expect_output "run over: version $version," "$1: shard $j holds the server's version"
    expect_output " 0 refused" "$1: shard $j refused nothing"
  done
}

# Policies on 2 and 3 shards (one with momentum: the shards keep its state; one without
# checksums, agreed at join).
for run in "bsp 2" "ssp:s=2 2 --checksum off" "backup:b=1 3" "asp 3 --momentum 0.5 --lr 0.02" \
  "sync:grads_to_wait=2 2"; do
  set -- $run
  policy=$1 shards=$2
  shift 2
  WPIDS=()
  start_shards "$shards"
  start_server "$policy" --target-acc 0.9 --wait-workers 3 "$@"
  for i in 1 2 3; do start_worker --delay-ms 2; done
  expect_server "$policy on $shards shards: 3 workers train to the target"
  expect_output "target reached" "$policy on $shards shards reaches 0.9"
  expect_output " 0 refused" "$policy on $shards shards: the server refused nothing"
  expect_output "over $shards shards" "$policy: the parameters are cut over $shards shards"
  wait "${WPIDS[@]}"
  expect_shards "$policy on $shards shards"
done

# A worker killed mid-run and a late joiner: the run completes, versions carry on, and ctl
# status shows the shards.
WPIDS=()
start_shards 2
start_server bsp --target-acc 0.93 --wait-workers 3
for i in 1 2 3; do start_worker --delay-ms 20; done
wait_for 15 sh -c "'$SW' ctl --connect '$EP' status | grep -q 'workers live 3'"
kill -9 "${WPIDS[0]}"
wait_for 6 sh -c "'$SW' ctl --connect '$EP' status | grep -q 'crashed 1'"
start_worker --delay-ms 20 --name late-one
wait_for 15 sh -c "'$SW' ctl --connect '$EP' status | grep -q 'late-one'"
expect_status 0 "ctl status of a sharded run" -- "$SW" ctl --connect "$EP" status
expect_output "shards 2:" "status counts the shards"
expect_output "load skew" "and says how even their load is"
expect_output "shard 1  tcp://127.0.0.1:" "and lists each with its endpoint"
expect_server "bsp on 2 shards with a worker killed and a late joiner"
expect_output "target reached" "the run completes without the killed worker"
expect_output "1 crashed" "the dead worker was noticed"
expect_output "4 joins" "the late worker joined"
wait "${WPIDS[@]:1}"
expect_shards "with a worker killed"

# A shard killed: the run cannot go on without its slice; the server ends it saying which.
WPIDS=()
start_shards 2
start_server asp --wait-workers 2
for i in 1 2; do start_worker --delay-ms 5; done
wait_for 15 sh -c "'$SW' ctl --connect '$EP' status | grep -q 'workers live 2'"
kill -9 "${SHPIDS[1]}"
wait "$SPID"
rc=$?
OUT=$(cat "$TMP/server.out" "$TMP/server.err")
checks=$((checks + 1))
[ "$rc" -ne 0 ] || { echo "FAIL: the server went on without a shard"; failures=$((failures + 1)); }
expect_output "shard 1 (tcp://127.0.0.1:" "the server names the lost shard"
wait "${WPIDS[@]}" "${SHPIDS[0]}" 2>/dev/null

# What a sharded run does not take yet is refused before anything starts.
SHARDS="tcp://127.0.0.1:1"
for bad in "--policy dbw" "--checkpoint $TMP/c.ckpt" "--apply-threads 2 --policy asp" \
  "--model svm --data sparse:n=100,dim=50"; do
  expect_status 1 "server --shards $bad" -- "$SW" server --shards "$SHARDS" $bad --max-time 1
  expect_output "shards" "server --shards $bad: the error names the shards"
done
expect_status 1 "an empty shard in the list" -- "$SW" server --shards "a,,b" --max-time 1
expect_output "endpoints separated by commas" "the error says what a list is"

finish
