# Helpers of the tests that run a server and worker processes (after lib.sh): a server and
# workers started on a small synthetic task, a condition waited for, a server's exit and event
# log judged.
DATA="synthetic:task=logistic,d=50,n=20000"

runs=0
start_server() { # policy, then extra server options; sets SPID, EP and LOG, the server's event
  # log (BIND: where to listen; KEEP_LOG=1: append to the last run's log, as a resumed run does;
  # SHARDS: the shards' endpoints, for a sharded run)
  local policy=$1
  shift
  rm -f "$TMP/ep"
  [ "${KEEP_LOG:-0}" = 1 ] || { runs=$((runs + 1)); LOG="$TMP/server-$runs.jsonl"; }
  "$SW" server --bind "${BIND:-tcp://127.0.0.1:*}" --endpoint-file "$TMP/ep" --policy "$policy" \
    --log "$LOG" ${SHARDS:+--shards "$SHARDS"} \
    --data "$DATA" --model mlp:h=1,u=32 --lr 0.05 --heartbeat-timeout 1 --eval-every 0.2 \
    --max-time 60 --threads 1 "$@" > "$TMP/server.out" 2> "$TMP/server.err" &
  SPID=$!
  EP=$(endpoint_of "$TMP/ep")
}

start_worker() { # extra worker options; appends the pid to WPIDS
  "$SW" worker --connect "$EP" --threads 1 --server-timeout 20 -q "$@" >> "$TMP/workers.out" 2>&1 &
  WPIDS+=($!)
}

wait_for() { # seconds, then a command: polls until the command succeeds (1 if it never does)
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

wait_status() { # seconds, then a pattern: polls until ctl status of the server at EP matches it
  wait_for "$1" sh -c "'$SW' ctl --connect '$EP' status | grep -q '$2'"
}

expect_server_fails() { # description [status]: waits for the server, which must end with a
  # failure (status 1 when given: the run, not the command line, failed); OUT = its output
  wait "$SPID"
  local rc=$?
  OUT=$(cat "$TMP/server.out" "$TMP/server.err")
  checks=$((checks + 1))
  if [ "$rc" -eq 0 ] || { [ -n "${2:-}" ] && [ "$rc" -ne "$2" ]; }; then
    echo "FAIL: $1: the server exited with $rc"
    failures=$((failures + 1))
  fi
}

expect_server() { # description: waits for the server, which must succeed and keep its
  # policy's promise on every event of its log (docs/promises.md); OUT = its output
  wait "$SPID"
  local rc=$?
  OUT=$(cat "$TMP/server.out" "$TMP/server.err")
  checks=$((checks + 1))
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: $1: the server exited with $rc"
    echo "$OUT" | tail -5 | sed 's/^/    /'
    failures=$((failures + 1))
  fi
  # nothing left behind: the private operator socket's file goes with the server
  local ops
  ops=$(grep -o 'operator commands on ipc://[^ ]*' <<< "$OUT" | head -1 | sed 's|.*ipc://||')
  checks=$((checks + 1))
  [ -z "$ops" ] || [ ! -e "$ops" ] ||
    { echo "FAIL: $1: the server left its operator socket $ops"; failures=$((failures + 1)); }
  local said
  said=$("$SW" check "$LOG" 2>&1)
  checks=$((checks + 1))
  case "$said" in
    *"every promise kept"*) ;;
    *) echo "FAIL: $1: the server's log: $said"; failures=$((failures + 1)) ;;
  esac
}

expect_no_member_refused() { # description: OUT, a server's or a shard's output, counts no
  # refused message but of messages from no member ("unknown worker N: join again", "from no
  # member of the run"), each said. Those are no fault of the run's: a dialer of another test's
  # dead server still calling at the port the kernel gave this one, or a worker dropped while
  # starved of CPU past --heartbeat-timeout, which joins again. Only the first five refusals
  # are said (sw_log_counted): past five, those five judge.
  local count others
  count=$(sed -n 's/.* \([0-9][0-9]*\) refused messages.*/\1/p' <<< "$OUT" | tail -1)
  others=$(grep "refused a message" <<< "$OUT" |
    grep -vE "unknown worker [0-9]+: join again|from no member of the run")
  checks=$((checks + 1))
  if [ -z "$count" ] || [ -n "$others" ] ||
    { [ "$count" -gt 0 ] && ! grep -q "refused a message" <<< "$OUT"; }; then
    echo "FAIL: $1: the server refused ${count:-an unknown number of} messages"
    grep "refused a message" <<< "$OUT" | sed 's/^/    /'
    failures=$((failures + 1))
  elif [ "$count" -gt 0 ]; then
    echo "note: $1: $count refused from no member:"
    grep "refused a message" <<< "$OUT" | sed 's/^/    /'
  fi
}

expect_joined_again() { # worker output file: the worker whose link broke (a reset, a silent
  # drop) says why it joins again, and does. Which sign reaches it first is a race: its own
  # connection made again, or its heartbeats hearing that the server dropped it; either will do.
  OUT=$(cat "$1")
  checks=$((checks + 1))
  grep -qE "our connection to the server at .* broke|the server does not know us" "$1" ||
    { echo "FAIL: the worker says why it joins again"; echo "$OUT" | sed 's/^/    /'
      failures=$((failures + 1)); }
  expect_output "2 joins; the run is over" "and joins again"
}

unwatched_links() { # port: prints the established TCP connections at 127.0.0.1:port (either
  # end) whose keepalive timer (/proc/net/tcp's "tr" 02) was never armed in 2 s of samples
  # (any retransmit pending shows instead), or "none" when there are no such connections
  local hex i
  hex=$(printf ':%04X' "$1")
  for i in $(seq 20); do
    awk -v p="$hex" 'NR > 1 && $4 == "01" && (substr($2, 9) == p || substr($3, 9) == p) {
      split($6, t, ":"); print $2 "-" $3, t[1] }' /proc/net/tcp
    sleep 0.1
  done | awk '{ seen[$1] = 1; if ($2 == "02") armed[$1] = 1 }
    END { n = 0; for (c in seen) { n++; if (!(c in armed)) print c }; if (!n) print "none" }'
}

# Sharded runs (net_shards.sh, net_shards_faults.sh).
start_shards() { # count, then extra shard options: starts the shards, sets SHPIDS and
  # SHARDS (their endpoints)
  SHPIDS=() SHARDS=""
  local j n=$1
  shift
  for j in $(seq 0 $((n - 1))); do
    rm -f "$TMP/shard$j.ep"
    "$SW" shard --bind "tcp://127.0.0.1:*" --endpoint-file "$TMP/shard$j.ep" "${@//@J@/$j}" \
      > "$TMP/shard$j.out" 2> "$TMP/shard$j.err" &
    SHPIDS+=($!)
  done
  for j in $(seq 0 $((n - 1))); do
    SHARDS="$SHARDS${SHARDS:+,}$(endpoint_of "$TMP/shard$j.ep")"
  done
}

expect_shards() { # description [strangers]: every shard ended with the run, at the server's
  # version, having refused no member (strangers: any number of messages from workers who were
  # no members then; shards say the first five refusals)
  local version j
  version=$(sed -n 's/.*version \([0-9]*\) (from.*/\1/p' "$TMP/server.out")
  for j in "${!SHPIDS[@]}"; do
    wait_for 10 sh -c "! kill -0 ${SHPIDS[$j]}" || kill -9 "${SHPIDS[$j]}"
    expect_exit "${SHPIDS[$j]}" "$1: shard $j ends with the run"
    OUT=$(cat "$TMP/shard$j.out")
    expect_output "run over: version $version," "$1: shard $j holds the server's version"
    if [ "${2:-}" = strangers ]; then
      OUT=$(grep "refused a message" "$TMP/shard$j.err" | grep -v "from no member")
      expect_no_output "refused" "$1: shard $j refused nothing but non-members"
    else
      OUT=$(cat "$TMP/shard$j.out" "$TMP/shard$j.err")
      expect_no_member_refused "$1: shard $j refused no member"
    fi
  done
}

expect_shard_failed() { # j description: shard j ends (killed after 10 s) with status 1, the
  # run failed; OUT = what it said on stderr
  wait_for 10 sh -c "! kill -0 ${SHPIDS[$1]}" || kill -9 "${SHPIDS[$1]}"
  expect_exit "${SHPIDS[$1]}" "$2" 1
  OUT=$(cat "$TMP/shard$1.err")
}

kill_shard() { # j: SIGKILLs shard j and reaps it
  kill -9 "${SHPIDS[$1]}"
  wait "${SHPIDS[$1]}" 2>/dev/null
}

resume_shard() { # j [FILE]: starts shard j again on its endpoint with --resume, from its
  # checkpoint (or FILE); sets SHPIDS[j]
  "$SW" shard --bind "$(cat "$TMP/shard$1.ep")" --checkpoint "${2:-$TMP/shard$1.ckpt}" --resume \
    > "$TMP/shard$1.out" 2> "$TMP/shard$1.err" &
  SHPIDS[$1]=$!
}
