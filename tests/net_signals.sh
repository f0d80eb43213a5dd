#!/usr/bin/env bash
# Signals of the networked commands (docs/syncwise.1, SIGNALS): a signal during the data load
# ends the command before it binds or writes anything (no log, checkpoint or endpoint file left
# behind); a signal during the goodbyes ends the wait, and a second signal during a stop ends the
# process at once; a SIGHUP is a request to stop, as SIGINT and SIGTERM are, unless it was
# ignored (nohup). The data are read from a FIFO, which holds a command in its load until the
# test writes them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net_lib.sh"

awk 'BEGIN { srand(1); for (i = 0; i < 400; i++) printf "%d,%.4f,%.4f\n", i % 2, rand(), rand() }' \
  > "$TMP/train.csv"
FIFO_DATA="csv:train=$TMP/train.fifo,test=$TMP/train.csv,label=first"

# held_in_load COMMAND...: starts COMMAND in the background (PID), its data read from the FIFO,
# which this shell holds open (fd 3), so that the command's read waits for the data; true once
# the command has the FIFO open, in its load (its signal handlers are in place before).
held_in_load() {
  rm -f "$TMP/train.fifo"
  mkfifo "$TMP/train.fifo"
  exec 3<> "$TMP/train.fifo"
  "$@" > "$TMP/cmd.out" 2>&1 3>&- & # fd 3 not inherited: the command's own open is waited for
  PID=$!
  opened_fifo "$PID"
}

# opened_fifo PID: true once syncwise itself, as PID, has the FIFO open. Not the shell forked to
# start it, which holds fd 3 a moment: data written then and fd 3 closed would be lost with the
# pipe, and until syncwise runs a SIGINT may be ignored as a background job's.
opened_fifo() {
  wait_for 20 sh -c "[ \"\$(readlink /proc/$1/exe)\" = '$(readlink -f "$SW")' ] &&
    ls -l /proc/$1/fd 2>/dev/null | grep -q train.fifo"
}

# signalled_in_load WHO STATUS COMMAND...: COMMAND held in its load (held_in_load), SIGINT sent
# there, then its data written: it must exit with STATUS; OUT = what it said.
signalled_in_load() {
  local who=$1 status=$2
  shift 2
  checks=$((checks + 1))
  if ! held_in_load "$@"; then
    echo "FAIL: $who never opened its data"
    failures=$((failures + 1))
  fi
  kill -INT "$PID"
  sleep 0.2 # the signal lands in the load
  cat "$TMP/train.csv" >&3
  exec 3>&-
  expect_exit "$PID" "$who stopped in its load" "$status"
  OUT=$(cat "$TMP/cmd.out")
}

for cmd in server peer; do
  if [ $cmd = server ]; then
    run=("$SW" server --bind "tcp://127.0.0.1:*" --endpoint-file "$TMP/new.ep" --data "$FIFO_DATA"
         --model softmax --checkpoint "$TMP/c.ckpt" --log "$TMP/l.jsonl" --max-time 30)
  else
    run=("$SW" peer --endpoint-file "$TMP/new.ep" --data "$FIFO_DATA" --model softmax
         --out "$TMP/w.txt" --wait-peers 2 --max-time 30)
  fi
  signalled_in_load "$cmd" 1 "${run[@]}"
  expect_output "stopped by a signal as it loaded its data" "$cmd: says it stopped in its load"
  for f in c.ckpt l.jsonl w.txt new.ep; do
    checks=$((checks + 1))
    [ ! -e "$TMP/$f" ] || { echo "FAIL: $cmd stopped in its load left $f"; failures=$((failures + 1)); }
  done
done

# A worker stopped in its load (the data its server names, read from the FIFO once more) leaves
# before its first push, as one stopped later leaves before its next: exit 0, saying so, and
# the server's log has its join and its leave, no push.
rm -f "$TMP/train.fifo"
mkfifo "$TMP/train.fifo"
exec 3<> "$TMP/train.fifo"
"$SW" server --bind "tcp://127.0.0.1:*" --endpoint-file "$TMP/w.ep" --data "$FIFO_DATA" \
  --model softmax --log "$TMP/w.jsonl" --max-time 30 > "$TMP/ws.out" 2>&1 3>&- &
WSPID=$!
opened_fifo "$WSPID"
cat "$TMP/train.csv" >&3
exec 3>&-
WEP=$(endpoint_of "$TMP/w.ep")
signalled_in_load "a worker" 0 "$SW" worker --connect "$WEP" --server-timeout 20
expect_output "stopped by a signal as it loaded its data (" "the worker says so"
expect_output "): left before its first push" "and that it pushed nothing"
wait_for 20 grep -q '"ev":"leave"' "$TMP/w.jsonl"
kill -TERM "$WSPID"
expect_exit "$WSPID" "its server, stopped" 0
OUT=$(cat "$TMP/w.jsonl")
expect_output '"ev":"join"' "the server's log has its join"
expect_output '"ev":"leave"' "and its leave"
expect_no_output '"ev":"push"' "and no push"

# A run over, one of its two workers stopped (SIGSTOP): the server waits for its goodbye (at
# most 10 s), and a signal then ends the wait (the run's checkpoint and log are already whole).
start_server asp --max-applies 300 --heartbeat-timeout 30 --checkpoint "$TMP/s.ckpt"
start_worker --delay-ms 10
start_worker --delay-ms 10
wait_for 20 grep -q '"ev":"apply"' "$LOG"
kill -STOP "${WPIDS[0]}"
wait_for 30 grep -q '"ev":"end"' "$LOG"
sleep 0.5 # into the wait
signalled=$SECONDS
kill -TERM "$SPID"
expect_server "a signal during the goodbyes"
checks=$((checks + 1))
[ $((SECONDS - signalled)) -lt 8 ] || { echo "FAIL: a signal did not end the wait for goodbyes"; failures=$((failures + 1)); }
kill -KILL "${WPIDS[@]}" 2>/dev/null
wait "${WPIDS[@]}" 2>/dev/null
WPIDS=()

# Stopped by a signal, the same wait: a second signal ends the process at once.
start_server asp --heartbeat-timeout 30 --checkpoint "$TMP/s2.ckpt"
start_worker --delay-ms 10
wait_for 20 grep -q '"ev":"apply"' "$LOG"
kill -STOP "${WPIDS[0]}"
kill -TERM "$SPID"
wait_for 20 grep -q '"ev":"end"' "$LOG"
sleep 1.2 # a second signal within a second of the first is the same request (a launcher's)
kill -TERM "$SPID"
expect_exit "$SPID" "a second SIGTERM during a stop (killed)" 143
expect_status 0 "its last checkpoint is whole" -- "$SW" eval --model-file "$TMP/s2.ckpt" \
  --data "$DATA"
kill -KILL "${WPIDS[0]}"
wait "${WPIDS[0]}" 2>/dev/null
WPIDS=()

# A closed terminal (SIGHUP) stops a server as Ctrl-C does: a last checkpoint, an end line.
start_server asp --checkpoint "$TMP/s3.ckpt" --checkpoint-every 0 --checkpoint-applies 0
start_worker
wait_for 20 grep -q '"ev":"apply"' "$LOG"
kill -HUP "$SPID"
expect_server "a SIGHUP stops the server cleanly"
OUT=$(tail -1 "$LOG")
expect_output '"why":"stopped"' "its log ends"
expect_status 0 "its last checkpoint" -- "$SW" eval --model-file "$TMP/s3.ckpt" --data "$DATA"
expect_output ", version " "is read"
expect_no_output ", version 0)" "and holds the run's work"
wait "${WPIDS[@]}" 2>/dev/null
WPIDS=()

# Under nohup (SIGHUP ignored when it starts) a server stays ignoring it, as the user asked.
trap '' HUP
start_server asp
trap - HUP
start_worker
wait_for 20 grep -q '"ev":"apply"' "$LOG"
kill -HUP "$SPID"
sleep 0.5
expect_status 0 "a server whose SIGHUP was ignored, after one" -- "$SW" ctl --connect "$EP" status
kill -TERM "$SPID"
expect_server "and stopped by SIGTERM"
wait "${WPIDS[@]}" 2>/dev/null

finish
