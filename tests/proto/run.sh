#!/bin/bash
# usage: tests/proto/run.sh SYNCWISE_BINARY
#
# Checks docs/protocol.md against a running syncwise with a raw client written from the
# documentation alone (tests/proto/client.py, wire.py, shards.py). Starts, on free loopback ports:
#   - an unsharded asp server (checksums: auto, i.e. on over plain TCP),
#   - an unsharded asp server with --checksum off --max-applies 4,
#   - two `syncwise shard` processes and an asp server with --shards,
#   - an unsharded asp server with --wait-workers 2 --heartbeat-timeout 3;
# and the client starts two sharded servers of its own against a shard it plays itself.
# Everything it starts is killed on exit. Exit status 0 only if every check passed.
set -u

BIN=${1:?usage: $0 SYNCWISE_BINARY}
shift
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3          # Debian's python3, which sees python3-zmq
TMP=$(mktemp -d "${TMPDIR:-/tmp}/proto_client.XXXXXX")
PIDS=()

cleanup() {   # newest first: the sharded server ends its shards; killed first, they would
              # leave it waiting out its --shard-wait (10 s once the run is over)
    local i
    for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
        kill "${PIDS[i]}" 2>/dev/null
        wait "${PIDS[i]}" 2>/dev/null
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# tiny runs: 67 parameters, a one-thread server, no evaluation to speak of; --max-time is a
# safety net should the trap never run
RUN=(--data synthetic:task=logistic,d=10,n=200 --model mlp:h=1,u=5 --threads 1
     --eval-every 30 --max-time 55 --policy asp)

start() {   # start NAME ARGS...: run the binary in the background, log to $TMP/NAME.log
    local name=$1
    shift
    "$BIN" "$@" >"$TMP/$name.log" 2>&1 &
    PIDS+=($!)
}

endpoint() {   # endpoint NAME: wait (10 s at most) for $TMP/NAME.ep, print it
    local f=$TMP/$1.ep i
    for i in $(seq 100); do
        if [ -s "$f" ] && grep -Eq '^tcp://[0-9.]+:[0-9]+$' "$f"; then
            cat "$f"
            return 0
        fi
        sleep 0.1
    done
    echo "proto/run.sh: $1 wrote no endpoint; its log:" >&2
    cat "$TMP/$1.log" >&2
    return 1
}

start shard0 shard --bind 'tcp://127.0.0.1:*' --endpoint-file "$TMP/shard0.ep"
start shard1 shard --bind 'tcp://127.0.0.1:*' --endpoint-file "$TMP/shard1.ep"
start server server --bind 'tcp://127.0.0.1:*' --endpoint-file "$TMP/server.ep" "${RUN[@]}" \
    --heartbeat-timeout 30
start off server --bind 'tcp://127.0.0.1:*' --endpoint-file "$TMP/off.ep" "${RUN[@]}" \
    --heartbeat-timeout 30 --checksum off --max-applies 4
start live server --bind 'tcp://127.0.0.1:*' --endpoint-file "$TMP/live.ep" "${RUN[@]}" \
    --heartbeat-timeout 3 --wait-workers 2
S0=$(endpoint shard0) && S1=$(endpoint shard1) || exit 1
start sharded server --bind 'tcp://127.0.0.1:*' --endpoint-file "$TMP/sharded.ep" "${RUN[@]}" \
    --heartbeat-timeout 30 --shards "$S0,$S1"
SERVER=$(endpoint server) && OFF=$(endpoint off) && LIVE=$(endpoint live) &&
    SHARDED=$(endpoint sharded) || exit 1

# in the background, so that a signal to this script runs the trap at once (bash runs traps
# only between foreground commands, but interrupts `wait`)
"$PY" "$HERE/client.py" --server "$SERVER" --server-off "$OFF" --sharded "$SHARDED" \
    --live "$LIVE" --binary "$BIN" --tmp "$TMP" "$@" &
PIDS+=($!)
wait $!
rc=$?
if [ $rc -ne 0 ]; then
    echo "proto/run.sh: FAILED (exit $rc); the servers' logs:"
    for f in "$TMP"/*.log; do
        echo "--- $(basename "$f")"
        tail -n 20 "$f"
    done
fi
exit $rc
