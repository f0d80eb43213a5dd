#!/usr/bin/env bash
# A sharded run's faults and checkpoints, with real processes on loopback: a shard killed and
# resumed from its checkpoint rejoins the run (also one started again before it took the
# restore another's return began), one that stays dead ends it with its name, one resumed from
# another's file too, one started again afresh too (and ends with it); a server killed and resumed goes on from the version every shard holds; a
# server stopped for longer than --shard-wait blames no shard; the shards of a dead server
# without checkpoints end; a run over while a shard is stopped still answers ctl and its
# workers while its last gather waits; checkpoint files misused are refused. A resumed shard
# knows its run's largest message from its checkpoint, and drops a stranger's larger frame
# unread. Every process is reaped at the end.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net_lib.sh"
HOSTILE=${2:?usage: $0 SYNCWISE NET_HOSTILE}
trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT

edit_record() { # sed-script FROM TO: the server's record FROM edited into TO, its checksum
  # line made again (an edit a damage check cannot see: only what the lines say can be judged)
  sed "$1; /^crc=/d" "$2" > "$3"
  python3 -c 'import sys, zlib; t = open(sys.argv[1], "rb").read(); print("crc=%08x" % zlib.crc32(t))' \
    "$3" >> "$3"
}

resume_all() { # RECORD server-options...: both shards and a bsp server started again with
  # --resume from their checkpoints and RECORD; WPIDS emptied for the workers the caller starts
  for j in 0 1; do resume_shard "$j"; done
  WPIDS=()
  KEEP_LOG=1 start_server bsp --wait-workers 2 --checkpoint "$1" --resume "${@:2}"
}

# A checkpointed run refused at its start (its shard keeps no checkpoints) keeps its start
# record (another shard may have saved the start): a fresh start over it is refused, saying how
# to take the run up again, and the server's --resume starts it with a shard that keeps them.
start_shards 1
start_server asp --checkpoint "$TMP/refused.ckpt" --max-applies 20
expect_server_fails "a checkpointed run on a shard without --checkpoint" 1
expect_output "start this shard with --checkpoint FILE" "says what the shard needs"
expect_shard_failed 0 "the shard of the refused run ends with it"
start_shards 1 --checkpoint "$TMP/mended@J@.ckpt"
expect_status 1 "a fresh start over the refused run's record" -- "$SW" server \
  --bind "tcp://127.0.0.1:*" --shards "$SHARDS" --data "$DATA" --model mlp:h=1,u=32 \
  --checkpoint "$TMP/refused.ckpt"
expect_output "records the start of a sharded run that stopped before every shard saved it: \
give the server --resume" "says how to take the run up again"
WPIDS=()
start_server asp --checkpoint "$TMP/refused.ckpt" --resume --max-applies 20
start_worker
expect_server "the refused run taken up again, its shard keeping checkpoints now"
wait "${WPIDS[@]}"
expect_shards "the shard of the run started again"

# A shard stopped by a signal (as a crash to the run) and started again from its checkpoint:
# every shard goes back to the last checkpoint all of them hold, the version counter goes on,
# and the run completes (under DBW, whose pushes may be waiting for an apply's norms that the
# dead shard will never report).
WPIDS=()
rm -f "$TMP"/shard*.ckpt* "$TMP/server.ckpt" # a fresh run: no record to overwrite
start_shards 2 --checkpoint "$TMP/shard@J@.ckpt"
start_server dbw:agg=mean --target-acc 0.95 --wait-workers 2 --checkpoint "$TMP/server.ckpt" \
  --checkpoint-applies 10 --shard-wait 30
for i in 1 2; do start_worker --delay-ms 20; done # ~7 s to the target: the kill comes first
wait_status 20 'every shard holds version [1-9]'
killed_at=$("$SW" ctl --timeout 30 --connect "$EP" status | sed -n 's/^version \([0-9]*\).*/\1/p')
kill -TERM "${SHPIDS[1]}" # a signal in the middle of a run is as a crash to the run (SIGKILL below)
expect_exit "${SHPIDS[1]}" "a shard stopped by a signal mid-run"
OUT=$(cat "$TMP/shard1.err")
expect_output "stopped in the middle of a run, as a crash would stop it" "says what that means"
wait_status 10 'not answering'
expect_status 0 "ctl status while a shard is out" -- "$SW" ctl --timeout 30 --connect "$EP" status
expect_output "not answering: the workers wait" "status says which shard is out"
expect_output " blocked " "and shows the workers waiting for it as blocked"
expect_output "(blocked " "in the totals too"
resume_shard 1
wait_status 20 '1 restore undid'
# Read whole, a frame over the run's largest would be refused and counted (expect_shards
# below counts nothing refused).
expect_status 0 "a stranger's 4 MB frame to the resumed shard" -- \
  "$HOSTILE" "$(cat "$TMP/shard1.ep")" flood 4000000
expect_status 0 "ctl status after a restore" -- "$SW" ctl --timeout 30 --connect "$EP" status
expect_output "1 restore undid" "status counts the restore and the applies it undid"
expect_server "dbw on 2 shards, one killed and resumed"
expect_output "target reached" "the run completes after the restore"
version=$(sed -n 's/.*version \([0-9]*\) (from.*/\1/p' "$TMP/server.out")
checks=$((checks + 1))
[ "${version:-0}" -gt "${killed_at:-0}" ] ||
  { echo "FAIL: versions did not carry on ($killed_at, then $version)"; failures=$((failures + 1)); }
OUT=$(cat "$TMP/server.err")
expect_output "connected again (started again, or a network fault broke its link)" \
  "the server says why every shard went back"
OUT=$(grep '"ev":"restore"' "$LOG")
expect_output '"ev":"restore"' "the server's log records the restore (and check reads it)"
wait "${WPIDS[@]}"
expect_shards "one shard killed and resumed"
OUT=$(cat "$TMP/shard1.out")
expect_output "1 restores" "the resumed shard was restored once"
OUT=$(cat "$TMP/shard0.out")
expect_output "1 restores" "and so was the one that lived"
checks=$((checks + 1))
[ -s "$TMP/shard0.ckpt" ] && [ -s "$TMP/shard0.ckpt.prev" ] && grep -q "^version=$version$" "$TMP/server.ckpt" ||
  { echo "FAIL: the final checkpoint is not on every shard and in the server's record"; failures=$((failures + 1)); }
# The shards hold a slice each; the whole model at the end is beside the record, for eval.
expect_status 1 "eval of the record" -- "$SW" eval --model-file "$TMP/server.ckpt"
expect_output "the model at the run's end is $TMP/server.ckpt.model" "says where the model is"
expect_status 0 "eval of the sharded run's model" -- "$SW" eval --model-file \
  "$TMP/server.ckpt.model" --data "$DATA"
expect_output "version $version" "at the run's last version"
cp "$TMP/server.ckpt" "$TMP/record-alone"
expect_status 1 "eval of a record with no model beside it" -- "$SW" eval --model-file \
  "$TMP/record-alone"
expect_output "there is no $TMP/record-alone.model" "says there is none, not where it is"
# The record of a run that resumed and went on, beside the model of its earlier end.
sed "s/^version=.*/version=$((version + 1000))/" "$TMP/server.ckpt" > "$TMP/record-on"
cp "$TMP/server.ckpt.model" "$TMP/record-on.model"
expect_status 1 "eval of a record beside an earlier end's model" -- "$SW" eval --model-file \
  "$TMP/record-on"
expect_output "$TMP/record-on.model holds version $version, an earlier end's; the run went on to version $((version + 1000))" \
  "says the model is older than the run"

# The only shard killed while workers push without pause (bsp: a barrier of three, so a push is
# almost always on its way): a push the shard took to its death, told to no one, is sent again
# by its worker, who heard no answer, and the barriers go on to the apply limit (they stopped
# for good in 2 of 3 runs before, and the run ended at its time limit).
WPIDS=()
rm -f "$TMP"/shard*.ckpt* "$TMP/server.ckpt" # a fresh run: no record to overwrite
start_shards 1 --checkpoint "$TMP/shard@J@.ckpt"
start_server bsp --max-applies 3000 --wait-workers 3 --checkpoint "$TMP/server.ckpt" \
  --checkpoint-applies 10 --shard-wait 30
for i in 1 2 3; do start_worker; done
wait_status 20 '^version [0-9]*[0-9][0-9][0-9][0-9] '
kill_shard 0
resume_shard 0
expect_server "bsp on 1 shard, killed with pushes on their way and resumed"
OUT=$(tail -1 "$LOG")
expect_output '"why":"apply limit"' "the barriers go on after the restore"
wait "${WPIDS[@]}"
expect_shards "the only shard killed and resumed"

# A shard started again from another shard's checkpoint (files swapped or copied): restoring
# its slice in this one's place would scramble θ, so the server ends the run, naming both.
WPIDS=()
rm -f "$TMP"/shard*.ckpt* "$TMP/server.ckpt" # a fresh run: no record to overwrite
start_shards 2 --checkpoint "$TMP/shard@J@.ckpt"
start_server bsp --wait-workers 2 --checkpoint "$TMP/server.ckpt" --checkpoint-applies 10 \
  --shard-wait 30
for i in 1 2; do start_worker --delay-ms 20; done
wait_status 20 'every shard holds version [1-9]'
kill_shard 1
cp "$TMP/shard0.ckpt" "$TMP/other.ckpt"
resume_shard 1 "$TMP/other.ckpt"
expect_server_fails "a shard resumed from another shard's checkpoint"
expect_output "shard 1 (tcp://127.0.0.1:" "the server names the shard"
expect_output "holds the slice of shard 0: its --checkpoint file is that shard's" \
  "and whose slice it resumed"
kill -9 "${WPIDS[@]}" "${SHPIDS[@]}" 2>/dev/null
wait "${WPIDS[@]}" "${SHPIDS[@]}" 2>/dev/null

# A shard started again afresh (its --resume forgotten, a new file) holds no run: the server
# ends the run, and the new shard ends with it, the server's reason its own (it waited for a
# server for ever). Without checksums, as under CURVE: the run's end comes unchecked.
WPIDS=()
rm -f "$TMP"/shard*.ckpt* "$TMP/server.ckpt" # a fresh run: no record to overwrite
start_shards 2 --checkpoint "$TMP/shard@J@.ckpt"
start_server bsp --wait-workers 2 --checkpoint "$TMP/server.ckpt" --checkpoint-applies 10 \
  --shard-wait 30 --checksum off
for i in 1 2; do start_worker --delay-ms 20; done
wait_status 20 'every shard holds version [1-9]'
kill_shard 1
"$SW" shard --bind "$(cat "$TMP/shard1.ep")" --checkpoint "$TMP/afresh.ckpt" \
  > "$TMP/shard1.out" 2> "$TMP/shard1.err" &
SHPIDS[1]=$!
expect_server_fails "a shard started again afresh" 1
expect_output "refused the server's order: this shard holds no run" "the server says why"
expect_shard_failed 1 "the shard started afresh ends with the run"
expect_output "the run failed: shard 1 (" "with the server's reason"
kill -9 "${WPIDS[@]}" "${SHPIDS[0]}" 2>/dev/null
wait "${WPIDS[@]}" "${SHPIDS[0]}" 2>/dev/null

# The server killed and started again with --resume: every shard goes back to the version the
# server's record names, the workers join again by themselves, and the run goes on from there.
# Until a worker has joined the new server, the shards refuse its messages as a non-member's.
# Given no optimizer, the resumed server takes up the record's (momentum: the shards' state).
WPIDS=()
rm -f "$TMP"/shard*.ckpt* # a fresh run: no slice to overwrite
start_shards 2 --checkpoint "$TMP/shard@J@.ckpt" -v
start_server bsp --target-acc 0.95 --wait-workers 2 --checkpoint "$TMP/server2.ckpt" \
  --checkpoint-applies 10 --momentum 0.5
for i in 1 2; do start_worker --delay-ms 20; done
wait_for 20 grep -q "^version=[1-9]" "$TMP/server2.ckpt"
kill -9 "$SPID"
wait "$SPID" 2>/dev/null
from=$(sed -n 's/^version=//p' "$TMP/server2.ckpt")
BIND=$EP KEEP_LOG=1 start_server bsp --target-acc 0.95 --wait-workers 2 \
  --checkpoint "$TMP/server2.ckpt" --resume
checks=$((checks + 1))
wait_status 10 "; 1 restore undid" ||
  { echo "FAIL: ctl status of the resumed server does not count its one restore"
    failures=$((failures + 1)); }
# Each shard's line counts the restores it took (it showed the restore's random number).
OUT=$("$SW" ctl --timeout 30 --connect "$EP" status | grep -c "restores 1 ")
expect_output "2" "each shard's line counts its one restore"
expect_server "a sharded server killed and resumed"
expect_output "resuming with sgd:momentum=0.5, the optimizer of" "with the record's optimizer"
expect_output "target reached" "the resumed sharded run completes"
expect_output "(from $from)" "it goes on from the version every shard holds ($from)"
wait "${WPIDS[@]}"
expect_shards "a sharded server killed and resumed" strangers
# The record is no model (eval says what it is), and an edited one is refused: it would have
# every shard restore a version none holds.
expect_status 1 "eval of the sharded server's record" -- "$SW" eval --model-file "$TMP/server2.ckpt"
expect_output "is a sharded server's record" "says what the file is"
expect_status 1 "a resume with another optimizer" -- "$SW" server --bind "tcp://127.0.0.1:*" \
  --shards "$SHARDS" --data "$DATA" --model mlp:h=1,u=32 --checkpoint "$TMP/server2.ckpt" --resume \
  --optimizer adam
expect_output "records a run of the optimizer sgd:momentum=0.5, whose state the shards hold" \
  "is refused: the shards restore their own optimizer"
expect_status 1 "a resume with another --wd" -- "$SW" server --bind "tcp://127.0.0.1:*" \
  --shards "$SHARDS" --data "$DATA" --model mlp:h=1,u=32 --checkpoint "$TMP/server2.ckpt" --resume \
  --wd 0.5
expect_output "records a run of --wd 0, which the shards apply as they saved it" \
  "is refused: the shards keep theirs (it was taken silently and never applied)"
expect_status 1 "a resume with another model" -- "$SW" server --bind "tcp://127.0.0.1:*" \
  --shards "$SHARDS" --data "$DATA" --model mlp:h=1,u=64 --checkpoint "$TMP/server2.ckpt" --resume
expect_output "records a run of 1698 parameters; --model mlp:h=1,u=64" "says which, before any restore"
expect_status 1 "a resume with another --chunk" -- "$SW" server --bind "tcp://127.0.0.1:*" \
  --shards "$SHARDS" --data "$DATA" --model mlp:h=1,u=32 --checkpoint "$TMP/server2.ckpt" --resume \
  --chunk 400
expect_output "records a run cut into chunks of 3396 bytes; --chunk 400 would cut its slices \
otherwise" "says which, before any restore"
cp "$TMP/server2.ckpt" "$TMP/record.good"
sed -i 's/^version=.*/version=1/' "$TMP/server2.ckpt"
expect_status 1 "a resume from an edited record" -- "$SW" server --bind "tcp://127.0.0.1:*" \
  --shards "$SHARDS" --data "$DATA" --model mlp:h=1,u=32 --checkpoint "$TMP/server2.ckpt" --resume
expect_output "fails its checksum" "says why"
# Edited with its checksum made again, a line that says nothing a run writes is damage too (an
# unreadable optimizer or rate was passed over, and a version past 2^53 wrapped).
for edit in "version=9007199254740993/over 2^53" "optimizer=warp/records optimizer=warp" \
  "lr=nan/records lr=nan" "wd=-1/records wd=-1" "slots=many/records slots=many" "params=-1/records params=-1" \
  "chunk=0/a chunk size of none" "chunk=99999/a chunk size of none" \
  "chunk=1000/records chunks of 1000 floats, more than 2 shards"; do
  line=${edit%%/*}
  edit_record "s/^${line%%=*}=.*/$line/" "$TMP/record.good" "$TMP/server2.ckpt"
  expect_status 1 "a resume from a record saying $line" -- "$SW" server \
    --bind "tcp://127.0.0.1:*" --shards "$SHARDS" --data "$DATA" --model mlp:h=1,u=32 \
    --checkpoint "$TMP/server2.ckpt" --resume
  expect_output "${edit#*/}" "is refused as damage"
done

# A run ended, then one shard's newest checkpoint damaged (a bad disk), then every process
# started again with --resume: that shard reads its FILE.prev, older than the version the
# server's record names. Every shard still holds that one in FILE.prev, so the run goes back to
# it, the applies between counted as lost, and goes on (it ended, naming the file, before).
# With the other shard's FILE.prev damaged too, no checkpoint all hold is left: the run ends,
# saying so, and nothing hangs.
damage() { printf '\xff\xff\xff\xff' | dd of="$1" bs=1 seek=$(($(stat -c %s "$1") / 2)) \
  conv=notrunc status=none; }
WPIDS=()
rm -f "$TMP"/shard*.ckpt* "$TMP/server3.ckpt"
start_shards 2 --checkpoint "$TMP/shard@J@.ckpt"
start_server bsp --wait-workers 2 --checkpoint "$TMP/server3.ckpt" --checkpoint-applies 10 \
  --max-applies 25 --momentum 0.5
for i in 1 2; do start_worker --delay-ms 20; done
expect_server "a sharded run to 25 applies, checkpointed every 10"
wait "${WPIDS[@]}" "${SHPIDS[@]}"
mkdir -p "$TMP/saved3" && cp "$TMP"/shard*.ckpt* "$TMP/server3.ckpt" "$TMP/saved3/"
damage "$TMP/shard1.ckpt"
resume_all "$TMP/server3.ckpt" --checkpoint-applies 10 --max-applies 60
for i in 1 2; do start_worker --delay-ms 20; done
expect_server "a sharded run resumed with one shard's newest checkpoint damaged"
expect_output "version 85 (from 25)" "goes on to its limit"
OUT=$(cat "$TMP/server.err")
expect_output "shard 1 (tcp://127.0.0.1:" "the server names the shard"
expect_output "cannot go back to version 25 (its log says why: a damaged file?): every shard goes \
back to version 20, the newest that shard holds below it, if every shard does, and the run goes \
on as version 25 (5 applies lost)" "and goes back to the version before, which every shard holds"
OUT=$(cat "$TMP/shard1.err")
expect_output "shard1.ckpt: checksum mismatch" "the shard says what it found"
wait "${WPIDS[@]}"
expect_shards "one shard's newest checkpoint damaged"
cp "$TMP"/saved3/* "$TMP/"
damage "$TMP/shard1.ckpt"
damage "$TMP/shard0.ckpt.prev"
resume_all "$TMP/server3.ckpt" --max-applies 60
expect_server_fails "a resume with no checkpoint every shard holds" 1
expect_output "shard 0 (tcp://127.0.0.1:" "names the shard that holds no older one"
expect_output "cannot go back to version 20 (its log says why: a damaged file?) nor \
to an older one: no checkpoint every shard holds is left, and the run ends" "and says why"
for j in 0 1; do expect_shard_failed "$j" "shard $j ends with the run"; done
checks=$((checks + 1))
grep -q "^version=20$" "$TMP/server3.ckpt" ||
  { echo "FAIL: the record does not name the version the run went back to (20)"
    failures=$((failures + 1)); }
# The damaged FILE.prev put right, the run resumes from 20 (shard 1 made its 20 its FILE: a
# record still naming 25 would have found that FILE older than asked, an old file, for ever).
cp "$TMP/saved3/shard0.ckpt.prev" "$TMP/"
resume_all "$TMP/server3.ckpt" --max-applies 20
for i in 1 2; do start_worker --delay-ms 20; done
expect_server "a resume once the damaged file is put right"
expect_output "version 40 (from 20)" "goes on from the version the run went back to"
wait "${WPIDS[@]}"
expect_shards "the damaged file put right"
# The record names the chunk size the shards' slices were cut by (849 floats here: one chunk a
# shard), and a resumed server cuts the table by it: one edited to another size, its checksum
# made again, cuts other slices than the shards hold, and the server ends the run, naming the
# shard, before any gradient lands in the wrong place.
edit_record 's/^chunk=.*/chunk=64/' "$TMP/server3.ckpt" "$TMP/server4.ckpt"
resume_all "$TMP/server4.ckpt" --max-applies 20
expect_server_fails "a resume from a record of another chunk size" 1
expect_output "holds the parameters [" "names the shard whose slice is not the table's"
expect_output "where this server's chunk table (chunks of 64) gives it" "says what it expected"
for j in 0 1; do expect_shard_failed "$j" "shard $j ends with the run"; done
# A record without chunk= (an older syncwise's) is cut by the rule of its time, which for a
# model of at most 1 MiB a shard is today's: the run resumes.
edit_record '/^chunk=/d' "$TMP/server3.ckpt" "$TMP/server4.ckpt"
resume_all "$TMP/server4.ckpt" --max-applies 5
for i in 1 2; do start_worker --delay-ms 20; done
expect_server "a resume from a record without chunk="
expect_output "version 45 (from 40)" "goes on from the record's version"
wait "${WPIDS[@]}"
expect_shards "a record without chunk="

# No shard at the endpoint: a run over at --max-time has nothing to gather from it, and ends at
# once (it spun a core and ran 12 s of a 3 s run, blaming --shard-wait).
start=$SECONDS
expect_status 1 "a server whose shard is not there" -- "$SW" server --bind "tcp://127.0.0.1:*" \
  --shards "tcp://127.0.0.1:$((20000 + RANDOM % 20000))" --data "$DATA" --model mlp:h=1,u=32 \
  --max-time 2 -q
expect_output "the run is over, and its last gather waits no longer): is a shard running there?" \
  "says why, and which limit"
checks=$((checks + 1))
[ $((SECONDS - start)) -le 8 ] ||
  { echo "FAIL: the run over at 2 s took $((SECONDS - start)) s to end"; failures=$((failures + 1)); }

# A shard killed and not started again: the run cannot go on without its slice; the server ends
# it after --shard-wait, saying which.
WPIDS=()
start_shards 2
start_server asp --wait-workers 2 --shard-wait 1
for i in 1 2; do start_worker --delay-ms 5; done
wait_status 15 'workers live 2'
kill -9 "${SHPIDS[1]}"
expect_server_fails "a shard lost for good"
expect_output "shard 1 (tcp://127.0.0.1:" "the server names the lost shard"
expect_output "has been silent for" "and says why"
expect_output "a run without --checkpoint cannot take a shard back" "and that it could not wait"
OUT=$(tail -1 "$LOG")
expect_output '"ev":"end"' "the failed run's log ends with its end line"
expect_output '"why":"failed: shard 1' "which says why it failed"
expect_status 0 "the failed run's log keeps its promises" -- "$SW" check "$LOG"
for pid in "${WPIDS[@]}"; do # the workers fail with the run, saying why
  expect_exit "$pid" "a worker of the failed run" 1
done
OUT=$(cat "$TMP/workers.out")
expect_output "the server's run failed: shard 1" "the workers say why they failed"
wait "${SHPIDS[0]}" 2>/dev/null

# The server itself stopped for longer than --shard-wait (a frozen VM, SIGSTOP): the shards'
# silence counts only while it listened and pinged, so the run goes on, blaming no shard. The
# workers are stopped first, so that no shard has anything queued for the server but its last
# answer to a ping.
WPIDS=()
start_shards 2
start_server asp --wait-workers 2 --shard-wait 1 --max-time 6
for i in 1 2; do start_worker --delay-ms 5; done
wait_status 15 'workers live 2'
kill -STOP "${WPIDS[@]}"
sleep 0.5
kill -STOP "$SPID"
sleep 2.5
kill -CONT "$SPID"
kill -CONT "${WPIDS[@]}"
expect_server "a sharded server stopped for longer than --shard-wait"
expect_output "0 crashed" "no worker was dropped for the server's own silence"
wait "${WPIDS[@]}" "${SHPIDS[@]}" 2>/dev/null

# A server that died in a run without checkpoints leaves no run to resume: its shards give it up
# after --server-timeout and end, saying so, where they held it for ever.
WPIDS=()
start_shards 2 --server-timeout 1
start_server asp --wait-workers 1 --max-time 60
start_worker --delay-ms 5
wait_status 15 'workers live 1'
kill -9 "$SPID"
wait "$SPID" 2>/dev/null
for j in 0 1; do
  expect_shard_failed "$j" "shard $j of a dead server's run ends"
  expect_output "silent for 1 s (--server-timeout), and the run keeps no checkpoints" \
    "shard $j says why, and that nothing can resume the run"
done
kill -9 "${WPIDS[@]}" 2>/dev/null
wait "${WPIDS[@]}" 2>/dev/null

# Two shards given one --checkpoint file would overwrite each other's saves: the second refuses
# to start.
start_shards 1 --checkpoint "$TMP/one.ckpt"
wait_for 10 test -s "$TMP/shard0.ep"
expect_status 1 "a second shard on the same --checkpoint" -- "$SW" shard --bind "tcp://127.0.0.1:*" \
  --checkpoint "$TMP/one.ckpt"
expect_output "--checkpoint $TMP/one.ckpt: another process writes it already" "it says why"
kill_shard 0

# A shard started with --resume and no checkpoint, or without --checkpoint, says so.
expect_status 2 "shard --resume without --checkpoint" -- "$SW" shard --bind "tcp://127.0.0.1:*" --resume
expect_output "--resume needs --checkpoint" "the error says what is missing"
expect_status 1 "shard --resume from nothing" -- "$SW" shard --bind "tcp://127.0.0.1:*" \
  --checkpoint "$TMP/none.ckpt" --resume
expect_output "none.ckpt" "the error names the file"
# A slice an earlier run saved is not overwritten by a shard started afresh (a forgotten --resume).
cp "$TMP/shard0.ckpt" "$TMP/kept.ckpt"
expect_status 1 "a shard started afresh over a saved slice" -- "$SW" shard \
  --bind "tcp://127.0.0.1:*" --checkpoint "$TMP/kept.ckpt"
expect_output "would overwrite it: --resume goes on from it" "says why, and what to do"
checks=$((checks + 1))
cmp -s "$TMP/shard0.ckpt" "$TMP/kept.ckpt" ||
  { echo "FAIL: the refused shard changed the file"; failures=$((failures + 1)); }
# Nor one whose FILE.prev alone is left (a save that failed on a full disk, a kill as it saved).
mv "$TMP/kept.ckpt" "$TMP/kept.ckpt.prev"
expect_status 1 "a shard started afresh over a saved slice's FILE.prev" -- "$SW" shard \
  --bind "tcp://127.0.0.1:*" --checkpoint "$TMP/kept.ckpt"
expect_output "kept.ckpt.prev is not empty" "says which file it would overwrite"

# A server that checkpoints its run with a shard that cannot: refused at INIT, before training.
start_shards 1
start_server asp --checkpoint "$TMP/nock.ckpt" --checksum off # the end comes unchecked
expect_server_fails "a checkpointed run on a shard without --checkpoint" 1
expect_output "start this shard with --checkpoint FILE" "says what the shard needs"
expect_no_output "target reached" "before any training"
expect_shard_failed 0 "the shard fails with the run"

# A shard started again before it took the RESTORE that another's return began (stopped while
# it came, then killed): it awaits a restore, and gets one, as does every shard again; the run
# goes on. The server waited for it for good, and spun a core, before.
WPIDS=()
rm -f "$TMP"/shard*.ckpt* "$TMP/server.ckpt" # a fresh run: no record to overwrite
start_shards 2 --checkpoint "$TMP/shard@J@.ckpt"
start_server asp --max-applies 1500 --wait-workers 2 --checkpoint "$TMP/server.ckpt" \
  --checkpoint-applies 10 --shard-wait 30
for i in 1 2; do start_worker --delay-ms 2; done
wait_status 20 'every shard holds version [1-9]'
kill -STOP "${SHPIDS[1]}"
kill_shard 0
resume_shard 0
wait_for 10 grep -q "every shard goes back to version" "$TMP/server.err" # the RESTORE is sent
kill_shard 1
resume_shard 1
expect_server "a shard started again before it took a restore"
# Sent again: its new connection says the old broke (or, were that missed, its STATE says it
# still awaits a restore).
checks=$((checks + 1))
grep -qE "still awaits a restore|1 \(.*\) connected again" <<< "$OUT" ||
  { echo "FAIL: the server does not say it sends the restore again"; failures=$((failures + 1)); }
OUT=$(tail -1 "$LOG")
expect_output '"why":"apply limit"' "the run goes on to its limit"
wait "${WPIDS[@]}"
expect_shards "a shard started again before it took a restore"
OUT=$(cat "$TMP/shard0.out")
expect_output "2 restores" "the shard that came back first was restored twice"

# A run over while a shard is stopped (SIGSTOP) waits for its last gather at most --shard-wait,
# and meanwhile answers ctl, saying so, and echoes its workers' heartbeats, so that they wait
# to hear why it failed. It read neither before, and spun a core in the meantime.
WPIDS=()
: > "$TMP/workers.out"
start_shards 2
start_server asp --wait-workers 2 --max-time 3 --shard-wait 6
for i in 1 2; do start_worker --delay-ms 5 --server-timeout 2; done
wait_status 15 'workers live 2'
kill -STOP "${SHPIDS[1]}"
checks=$((checks + 1))
wait_status 10 "run over (time limit): ending, once the shards" ||
  { echo "FAIL: ctl status of a run waiting for its last gather does not say so"
    failures=$((failures + 1)); }
expect_status 0 "ctl status while the run ends" -- "$SW" ctl --timeout 30 --connect "$EP" status
expect_output "shard 1 " "it shows the shards"
expect_status 0 "a worker joining while the run ends" -- "$SW" worker --connect "$EP" --threads 1 \
  --server-timeout 5
expect_output "the server's run was over when we joined: nothing to train" "is told so at once"
expect_server_fails "a run over while a shard is stopped"
expect_output "the run is over, and its last gather waits no longer" "the server says why"
for pid in "${WPIDS[@]}"; do # the workers wait for the run's end, and fail with it
  expect_exit "$pid" "a worker of a run whose last gather failed" 1
done
OUT=$(cat "$TMP/workers.out")
expect_output "the server's run failed: shard 1" "the workers say why"
expect_no_output "the server at" "and were not left to time out (the server at ... has been silent)"
kill -9 "${SHPIDS[@]}" 2>/dev/null
wait "${SHPIDS[@]}" 2>/dev/null

# A checkpointed run's shards save its start: a shard killed before the first apply is started
# again with --resume, and the run goes on (it could only start over before).
WPIDS=()
rm -f "$TMP"/shard*.ckpt* "$TMP/server.ckpt" # a fresh run: no record to overwrite
start_shards 2 --checkpoint "$TMP/shard@J@.ckpt"
start_server asp --max-applies 300 --wait-workers 2 --checkpoint "$TMP/server.ckpt" \
  --shard-wait 30
checks=$((checks + 1))
wait_for 10 grep -q "^version=0$" "$TMP/server.ckpt" ||
  { echo "FAIL: no record of the run's start"; failures=$((failures + 1)); }
kill_shard 1
resume_shard 1
for i in 1 2; do start_worker --delay-ms 2; done
expect_server "a shard killed before the first apply, resumed"
OUT=$(tail -1 "$LOG")
expect_output '"V":300,"why":"apply limit"' "the run goes on from its start"
wait "${WPIDS[@]}"
expect_shards "a shard killed before the first apply, resumed"

# A server killed before every shard saved the run's start (one shard stopped): its record names
# the run's start alone, and the server started again with --resume takes the start up again as
# the same run, its shards configured for it taking it again (a fresh server would be refused by
# them, and a resume had no record to go on from). A shard that claimed its file and never saved
# it resumes as a fresh one.
WPIDS=()
rm -f "$TMP"/shard*.ckpt* "$TMP/server.ckpt"
start_shards 2 --checkpoint "$TMP/shard@J@.ckpt"
kill -STOP "${SHPIDS[1]}"
start_server asp --max-applies 200 --checkpoint "$TMP/server.ckpt" --shard-wait 30
checks=$((checks + 1))
wait_for 10 grep -q "parameters \[" "$TMP/shard0.err" && grep -q "^version=start$" "$TMP/server.ckpt" ||
  { echo "FAIL: no start record before the shards were configured"; failures=$((failures + 1)); }
kill -9 "$SPID"
wait "$SPID" 2>/dev/null
kill -9 "${SHPIDS[1]}" # killed stopped: it never saved the start
wait "${SHPIDS[1]}" 2>/dev/null
resume_shard 1
KEEP_LOG=1 start_server asp --max-applies 200 --checkpoint "$TMP/server.ckpt" --shard-wait 30 \
  --resume
start_worker --delay-ms 2
expect_server "a server killed before its shards saved the start, resumed"
OUT=$(cat "$TMP/server.err")
expect_output "records the start of a run that ended before every shard had saved it" \
  "the resumed server says it starts the run again"
OUT=$(tail -1 "$LOG")
expect_output '"V":200,"why":"apply limit"' "the run goes on to its limit"
checks=$((checks + 1)) # --log is appended to under --resume, even when the run starts again
[ "$(grep -c '"ev":"start"' "$LOG")" = 2 ] ||
  { echo "FAIL: the resumed server's log lost the killed attempt"; failures=$((failures + 1)); }
OUT=$(cat "$TMP/shard0.err")
expect_output "it takes the start again" "the shard that lived takes the start again"
OUT=$(cat "$TMP/shard1.err")
expect_output "holds no checkpoint: the shard that claimed it ended before its first save" \
  "the shard that never saved resumes as a fresh one"
wait "${WPIDS[@]}"
expect_shards "a server killed before its shards saved the start, resumed" strangers

# A server killed before its first checkpoint (left only its lock) starts afresh on --resume
# (no worker comes: the run never starts, exit 1).
rm -f "$TMP/unsaved.ckpt"*
touch "$TMP/unsaved.ckpt.lock"
expect_status 1 "a resume of a checkpoint never saved" -- "$SW" server --bind "tcp://127.0.0.1:*" \
  --data "$DATA" --model mlp:h=1,u=32 --checkpoint "$TMP/unsaved.ckpt" --resume --max-time 0.5
expect_output "holds no checkpoint: the run that claimed it ended before its first save" \
  "says it starts afresh"
checks=$((checks + 1))
[ -s "$TMP/unsaved.ckpt" ] || { echo "FAIL: the fresh run saved nothing"; failures=$((failures + 1)); }
expect_status 1 "a resume of no checkpoint at all" -- "$SW" server --bind "tcp://127.0.0.1:*" \
  --data "$DATA" --model mlp:h=1,u=32 --checkpoint "$TMP/none.ckpt" --resume --max-time 0.5
expect_output "cannot open" "is refused, as a path mistyped would be"
# Its lock says the run that had it saved it: moved or deleted since, a resume is refused, not
# started afresh without a word.
mv "$TMP/unsaved.ckpt" "$TMP/moved.ckpt"
expect_status 1 "a resume of a checkpoint moved away" -- "$SW" server --bind "tcp://127.0.0.1:*" \
  --data "$DATA" --model mlp:h=1,u=32 --checkpoint "$TMP/unsaved.ckpt" --resume --max-time 0.5
expect_output "though a run saved checkpoints there" "is refused, saying why"

# A network fault between the server and a shard (a proxy between them resets every connection
# it carries; the workers' to that shard go through it too): ZeroMQ connects again, but what was
# on its way is lost. With checkpoints every shard goes back to the last one and the run goes
# on; without, the run ends saying why. (The shard used to refuse the reconnected server as a
# stranger, ending the run with a wrong reason.)
for ckpt in yes no; do
  WPIDS=()
  server_ckpt=() shard_ckpt=()
  if [ "$ckpt" = yes ]; then
    rm -f "$TMP"/net-*.ckpt*
    server_ckpt=(--checkpoint "$TMP/net-server.ckpt" --checkpoint-applies 10)
    shard_ckpt=(--checkpoint "$TMP/net-shard@J@.ckpt")
  fi
  start_shards 2 "${shard_ckpt[@]}"
  rm -f "$TMP/proxy.port"
  /usr/bin/python3 "$(dirname "$0")/reset_proxy.py" "$(sed 's/.*://' "$TMP/shard0.ep")" \
    "$TMP/proxy.port" &
  proxy=$!
  wait_for 10 test -s "$TMP/proxy.port"
  SHARDS="tcp://127.0.0.1:$(cat "$TMP/proxy.port"),$(cat "$TMP/shard1.ep")" \
    start_server bsp --max-applies 300 "${server_ckpt[@]}"
  for i in 1 2; do start_worker; done
  if [ "$ckpt" = yes ]; then
    wait_status 20 'every shard holds version [1-9]'
  else
    wait_status 20 'version [1-9][0-9]'
  fi
  kill -USR1 "$proxy"
  if [ "$ckpt" = yes ]; then
    expect_server "a reset between the server and a shard, with checkpoints"
    expect_output "connected again (started again, or a network fault broke its link)" \
      "the server says why"
    expect_output "stopped: version 300 " "and the run goes on to its end"
  else
    expect_server_fails "a reset between the server and a shard, without checkpoints" 1
    expect_output "broke its link), and what was on its way may be lost" \
      "the run ends, saying why"
    expect_output "without --checkpoint cannot go back" "and what would have saved it"
  fi
  wait "${WPIDS[@]}" 2>/dev/null
  for j in 0 1; do
    wait_for 10 sh -c "! kill -0 ${SHPIDS[$j]}" || kill -9 "${SHPIDS[$j]}"
    wait "${SHPIDS[$j]}" 2>/dev/null # gone, its endpoint file's lock with it
  done
  kill "$proxy" 2>/dev/null
  wait "$proxy" 2>/dev/null
done

finish
