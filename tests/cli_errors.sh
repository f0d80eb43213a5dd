#!/usr/bin/env bash
# The command's contract with a user: help that tells the truth, clear errors and exit codes on
# bad input (2 for a bad command line, 1 for a failure), and a train/eval round trip.
. "$(dirname "$0")/lib.sh"

expect_status 2 "no command" -- "$SW"
expect_output "usage: syncwise COMMAND" "usage on no command"
expect_status 2 "unknown command" -- "$SW" frobnicate
expect_output "unknown command 'frobnicate'" "names the unknown command"
expect_status 0 "top-level help" -- "$SW" --help
expect_output "train" "help lists train"
expect_output "eval" "help lists eval"
expect_status 0 "help COMMAND" -- "$SW" help sim
expect_output "usage: syncwise sim" "is the command's help"
for cmd in train eval; do
  expect_status 0 "$cmd --help" -- "$SW" $cmd --help
  expect_output "usage: syncwise $cmd" "$cmd help has a usage line"
done
# Every command's options come from one table: --help lists each of them within 100
# columns, and an unknown option, a missing value or a bad one is a usage error (2) naming it.
for cmd in train eval sim compare zipline report check "data gen" peer server shard worker ctl \
  launch keygen "rl train" "rl eval"; do
  # shellcheck disable=SC2086
  expect_status 0 "$cmd --help" -- "$SW" $cmd --help
  expect_output "usage: syncwise $cmd" "$cmd help has a usage line"
  checks=$((checks + 1))
  wide=$(printf '%s\n' "$OUT" | awk 'length($0) > 100' | head -1)
  [ -z "$wide" ] || { echo "FAIL: $cmd --help has a line over 100 columns: $wide"; failures=$((failures + 1)); }
  first=$(printf '%s\n' "$OUT" | sed -n 's/^  \(-., \)\?--\([a-z-]*\) [A-Z].*/\2/p' | head -1)
  if [ -n "$first" ]; then
    # shellcheck disable=SC2086
    expect_status 2 "$cmd --$first without its value" -- "$SW" $cmd --$first
    expect_output "--$first needs a value" "$cmd says which option lacks its value"
  fi
  # shellcheck disable=SC2086
  expect_status 2 "$cmd with an unknown option" -- "$SW" $cmd --no-such-option
  expect_output "unknown option '--no-such-option'" "$cmd names the unknown option"
  # shellcheck disable=SC2086
  expect_status 2 "$cmd --help=1" -- "$SW" $cmd --help=1
  expect_output "--help takes no value" "$cmd names the flag given a value"
done
expect_status 0 "syncwise --help" -- "$SW" --help
checks=$((checks + 1))
wide=$(printf '%s\n' "$OUT" | awk 'length($0) > 100' | head -1)
[ -z "$wide" ] || { echo "FAIL: syncwise --help has a line over 100 columns: $wide"; failures=$((failures + 1)); }
expect_status 2 "a choice out of its list" -- "$SW" sim --batch-mode random
expect_output "--batch-mode: 'random' is not one of shard, sample" "lists the choices"
expect_status 0 "train --help lists data sets" -- "$SW" train --help
expect_output "synthetic" "train help lists the synthetic data"
expect_output "cnn" "train help lists the cnn"

# --out is checked before any training; a diverged run writes no file eval would refuse.
expect_status 1 "train --out into a missing directory" -- "$SW" train --data synthetic:n=500,d=5 \
  --model softmax --epochs 1 --out "$TMP/missing/m.ckpt"
expect_output "--out $TMP/missing/m.ckpt: cannot write there" "before the first epoch"
expect_no_output "epoch 1" "no epoch ran"
expect_status 1 "train --out a directory" -- "$SW" train --data synthetic:n=500,d=5 --model softmax \
  --epochs 1 --out "$TMP"
expect_output "is a directory" "is refused before the first epoch"
expect_no_output "epoch 1" "no epoch ran for it"
expect_status 1 "train that diverges" -- "$SW" train --data synthetic:n=500,d=5 --model softmax \
  --lr 1e6 --epochs 1 --out "$TMP/diverged.ckpt"
expect_output "the model diverged in epoch 1" "says why"
expect_output "Nothing was saved." "and that it saved nothing"
checks=$((checks + 1))
[ ! -e "$TMP/diverged.ckpt" ] || { echo "FAIL: a diverged checkpoint was written"; failures=$((failures + 1)); }
# One file for two purposes would lose one of them: refused before anything is written, however
# the paths are spelled; an input a log would overwrite is left as it was.
expect_status 2 "server --checkpoint and --log on one file" -- "$SW" server \
  --checkpoint "$TMP/same" --log "$TMP/./same"
expect_output "--checkpoint and --log name the same file" "names both options"
# Nor may one output be the lock or the save before the last that another keeps beside it.
expect_status 2 "server --log on its --endpoint-file's lock" -- "$SW" server \
  --endpoint-file "$TMP/ep2" --log "$TMP/ep2.lock"
expect_output "--log $TMP/ep2.lock is --endpoint-file $TMP/ep2's lock" "names both options"
expect_status 2 "shard --endpoint-file on its --checkpoint's save before" -- "$SW" shard \
  --checkpoint "$TMP/sh.ckpt" --endpoint-file "$TMP/sh.ckpt.prev"
expect_output "'s save before the last" "says which"
printf '1\n2\n' > "$TMP/trace.csv"
expect_status 2 "sim --log over its own cluster trace" -- "$SW" sim --no-model --max-time 5 \
  --cluster "trace:$TMP/trace.csv" --log "$TMP/trace.csv"
expect_output "is a file this run reads" "says the log would overwrite an input"
checks=$((checks + 1))
[ "$(cat "$TMP/trace.csv")" = "$(printf '1\n2')" ] ||
  { echo "FAIL: the trace was overwritten"; failures=$((failures + 1)); }
expect_status 1 "sim --log into a missing directory" -- "$SW" sim --no-model --max-time 1 \
  --log "$TMP/nodir/x.jsonl"
expect_output "nodir/x.jsonl: cannot write there: No such file or directory" "says why"
# A server resumed on other data, another seed or learning rate goes on (it may be meant),
# saying so. (No worker comes: each run never starts, which is a failure, exit 1.)
expect_status 1 "a server that saves" -- "$SW" server --bind "tcp://127.0.0.1:*" --max-time 0.3 \
  --data synthetic:n=500,d=5 --model softmax --checkpoint "$TMP/r.ckpt" -q
expect_output "the run never started: no worker joined" "no worker came: the run never started"
expect_status 1 "a server waiting for 2 workers, none came" -- "$SW" server --max-time 0.3 \
  --bind "tcp://127.0.0.1:*" --data synthetic:n=500,d=5 --model softmax --wait-workers 2 -q
expect_output "the run never started: 0 workers joined, 2 wanted (--wait-workers)" \
  "names the option given"
expect_status 1 "resumed on other data and seed" -- "$SW" server --bind "tcp://127.0.0.1:*" \
  --max-time 0.3 --data synthetic:n=600,d=5 --model softmax --checkpoint "$TMP/r.ckpt" --resume \
  --seed 4 --lr 0.5 --wd 0.1
expect_output "was trained on --data synthetic:n=500,d=5; this run reads synthetic:n=600,d=5" \
  "names both data sets"
expect_output "was made with --seed 1; this run has 4" "and both seeds"
expect_output "was made at --lr 0.01; this run goes on at 0.5" "and both learning rates"
expect_output "was made at --wd 0; this run goes on at 0.1" "and both weight decays"
# Other worker slots would make the resumed log a second run in one file (check and report
# would refuse it): refused, saying what to give.
expect_status 1 "resumed with other --max-workers" -- "$SW" server --bind "tcp://127.0.0.1:*" \
  --max-time 0.3 --data synthetic:n=600,d=5 --model softmax --checkpoint "$TMP/r.ckpt" --resume \
  --max-workers 16
expect_output "give --max-workers 64" "says what to give"
# 0 is no limit nowhere in sim: it would have meant the 50,000-second default, a long surprise.
expect_status 2 "sim --max-time 0" -- "$SW" sim --max-time 0
expect_output "--max-time: 0 is outside" "names the option"
expect_status 2 "bad batch" -- "$SW" train --batch 0
expect_output "--batch: 0 is outside" "names the bad option"
expect_status 2 "non-numeric lr" -- "$SW" train --lr fast
expect_output "--lr: 'fast' is not a number" "names the bad value"
expect_status 2 "a number no double holds" -- "$SW" sim --no-model --max-time 1e309
expect_output "--max-time: '1e309' is too large for a double" "says so, as a spec's number does"
expect_status 2 "unknown option" -- "$SW" train --bogus
expect_status 2 "stray argument" -- "$SW" train extra
expect_output "unexpected argument 'extra'" "names the stray argument"
expect_status 2 "unknown model key" -- "$SW" train --data synthetic:n=100 --model mlp:x=1
expect_output "unknown parameter 'x'" "names the unknown key"
expect_output "known: h, u" "lists the known keys"
expect_status 2 "unknown data set" -- "$SW" train --data imagenet
expect_output "unknown data set 'imagenet'" "names the data set"
expect_status 1 "missing data file" -- "$SW" train --data libsvm:train=$TMP/none.svm
expect_output "$TMP/none.svm: cannot open" "names the missing file"
printf '1 1:1\n1 x\n' > "$TMP/bad.svm"
expect_status 1 "bad LIBSVM line" -- "$SW" train --data libsvm:train=$TMP/bad.svm
expect_output "bad.svm:2:3" "names file, line and column"
# A carriage return inside a line (old Mac line ends) ended its reading: the rest of the line,
# or of the file, was dropped without a word, and training ran on one row. CR LF is fine.
printf '+1 1:0.5\r-1 2:0.3\r+1 1:1\r' > "$TMP/mac.svm"
expect_status 1 "LIBSVM with CR line ends" -- "$SW" train --data libsvm:train=$TMP/mac.svm
expect_output "mac.svm:1:9: a carriage return inside a line" "names where, and what"
printf '+1 1:0.5 2:0.3\r\n-1 1:1\r\n' > "$TMP/crlf.svm"
# A model's value out of range is a usage error (2) in every command, as the man page says
# (server and peer said 1).
for cmd in "server --max-time 1 --data synthetic:d=5,n=100" "peer --max-time 1 --data sparse:n=100,dim=50"; do
  model=mlp:h=99
  [ "${cmd%% *}" = peer ] && model=svm:lambda=-1
  expect_status 2 "${cmd%% *} --model $model" -- "$SW" $cmd --model "$model" -q
  expect_output "is outside [" "${cmd%% *}: says which value"
done
# A model whose frames would pass the protocol's 2 GiB is refused at the start, saying what
# holds it (a server's dense model: 4 bytes a parameter; a peer's changes: 8); the server
# served it, and its workers dropped every welcome as malformed and trained nothing. Refused
# before the parameters are made: no memory spent.
expect_status 2 "server of a 590M-parameter model" -- "$SW" server --max-time 1 -q \
  --bind 'tcp://127.0.0.1:*' --model mlp:h=1,u=65536 --data synthetic:d=9000,n=100,test=20
expect_output "parameters is over the protocol's 2 GiB frames: hold it on shards (--shards)" \
  "server: says why, and what holds such a model"
expect_status 2 "peer of a 275M-parameter model" -- "$SW" peer --max-time 1 -q \
  --model mlp:h=1,u=65536 --data synthetic:d=4200,n=100,test=20
expect_output "a peer group cannot hold it" "peer: says why"
# ... said before the data are read (Fashion-MNIST takes seconds): data that cannot be read at
# all are not what the refusal names.
for cmd in "sim --max-time 1 -q --model" "server --max-time 1 -q --model" \
  "peer --max-time 1 -q --model" "train --model" "rl train --out $TMP/never.swrl --models"; do
  expect_status 2 "${cmd%% *}: a bad model spec, then unreadable data" -- "$SW" $cmd \
    mlp:h=99 --data "idx:dir=$TMP/no-such-dir"
  expect_output "h=99 is outside [0, 15]" "${cmd%% *}: the model's fault, before the data's"
done
expect_status 2 "train of a sparse model" -- "$SW" train --model svm --data libsvm:train=$TMP/crlf.svm
expect_output "train trains the dense models (softmax, mlp, cnn); svm and logistic train under" \
  "says where they train (it called svm unknown)"
expect_status 0 "LIBSVM with CR LF line ends" -- "$SW" data export \
  --data libsvm:train=$TMP/crlf.svm,val=0 --out "$TMP/crlf-out.svm"
expect_output "2 rows, 2 features, 3 nonzeros" "reads every row and feature"

# A train / eval round trip on synthetic data; eval reads the data spec from the checkpoint.
expect_status 0 "train on synthetic data" -- "$SW" train --data synthetic:task=logistic,d=8,n=2000 \
  --model mlp:h=1,u=16 --epochs 2 --batch 32 --lr 0.1 --out "$TMP/m.ckpt"
expect_output "epoch 2/2" "progress line per epoch"
expect_output "val_acc" "progress shows validation accuracy"
train_line=$(printf '%s\n' "$OUT" | grep '^test:')
expect_status 0 "eval the checkpoint" -- "$SW" eval --model-file "$TMP/m.ckpt"
expect_output "${train_line%%(*}" "eval agrees with train's final figures"
expect_output "model mlp:h=1,u=16" "eval names the model"
expect_status 0 "eval on the validation split" -- "$SW" eval --model-file "$TMP/m.ckpt" --split val
expect_output "val: loss" "validation split"

expect_status 2 "eval without a file" -- "$SW" eval
expect_output "--model-file FILE is required" "says what is missing"
expect_status 2 "eval with a bad split" -- "$SW" eval --model-file "$TMP/m.ckpt" --split dev
# A spec that is not valid is the command line's fault (2) in every command.
expect_status 2 "eval on an unknown data set" -- "$SW" eval --model-file "$TMP/m.ckpt" --data bogus
expect_output "unknown data set 'bogus'" "names it"
expect_status 2 "data export of an unknown data set" -- "$SW" data export --data bogus \
  --out "$TMP/bogus.svm"
expect_status 2 "a peer of an unknown model" -- "$SW" peer --model bogus --max-time 1
expect_status 2 "a peer bound to no endpoint" -- "$SW" peer --bind foo --max-time 1
expect_output "not an endpoint" "says why"
head -c 100 "$TMP/m.ckpt" > "$TMP/cut.ckpt"
expect_status 1 "truncated checkpoint" -- "$SW" eval --model-file "$TMP/cut.ckpt"
expect_output "cut.ckpt" "names the file"
expect_status 1 "wrong data for the model" -- "$SW" eval --model-file "$TMP/m.ckpt" \
  --data synthetic:task=logistic,d=9
expect_output "shape" "explains the mismatch"
[ -z "$(ls "$TMP" | grep tmp)" ] || { echo "FAIL: temporary checkpoint files left"; failures=$((failures+1)); }
mkfifo "$TMP/fifo.ckpt"
expect_status 1 "a FIFO as a checkpoint is refused, not waited on" -- timeout 10 "$SW" eval \
  --model-file "$TMP/fifo.ckpt"
expect_output "not a regular file" "says why"
expect_status 1 "a data set too large to generate" -- "$SW" eval --model-file "$TMP/m.ckpt" \
  --data synthetic:task=logistic,d=1024,n=1048576
expect_output "over the 1 GiB a generator makes" "says so before allocating it"

# The server refuses a configuration as sim does: a usage error (2), before it binds.
expect_status 2 "server with an unknown model" -- "$SW" server --bind "tcp://127.0.0.1:*" \
  --model nonesuch --max-time 1
expect_output "unknown model 'nonesuch'" "names it"
expect_status 2 "server: bsp with concurrent applies" -- "$SW" server --bind "tcp://127.0.0.1:*" \
  --policy bsp --apply-threads 2 --max-time 1 --log "$TMP/refused.jsonl"
expect_output "cannot run with concurrent applies" "says why"
checks=$((checks + 1))
[ ! -e "$TMP/refused.jsonl" ] ||
  { echo "FAIL: a refused server left an empty log"; failures=$((failures + 1)); }

# A log that cannot be written (a full disk: /dev/full) fails the run, saying so, where the
# server's line-buffered log failed in silence.
if [ -w /dev/full ]; then
  expect_status 1 "a server whose log cannot be written" -- "$SW" server -q \
    --bind "tcp://127.0.0.1:*" --data synthetic:d=5,n=100 --model softmax --max-time 0.5 \
    --log /dev/full
  expect_output "could not be written (a full disk?)" "warns as it happens"
  expect_output "/dev/full: write error" "and fails at the end"
  expect_status 1 "a simulation whose log cannot be written" -- "$SW" sim -q --no-model \
    --max-time 10 --log /dev/full
  expect_output "/dev/full: write error" "says so"
fi

# A run whose model meets the target before training (a finished run resumed) says so, not that
# too few workers joined.
expect_status 0 "a server whose model meets the target at once" -- "$SW" server -q \
  --bind "tcp://127.0.0.1:*" --data synthetic:task=logistic,d=5,n=200 --model softmax \
  --target-acc 0.01
expect_output "before any training: the model met the target already" "says so"

# A worker whose server never answers gives up after --server-timeout, saying so (a generous
# bound: the test is that it ends, not how fast).
expect_status 1 "a worker with no server" -- timeout 15 "$SW" worker \
  --connect tcp://127.0.0.1:9 --server-timeout 1
expect_output "no server answered at tcp://127.0.0.1:9 within 1 s" "says so"
# ... and one that waits longer says, once and before it gives up, that nobody answered yet.
expect_status 1 "a worker with no server, waiting 3 s" -- timeout 20 "$SW" worker \
  --connect tcp://127.0.0.1:9 --server-timeout 3
expect_output "no answer yet from a server at tcp://127.0.0.1:9: joining again every 1 s, for up to 3 s" \
  "says it is still waiting"
expect_output "no server answered at tcp://127.0.0.1:9 within 3 s" "then gives up, saying so"

# Endpoints: ports in range, and host names where ZeroMQ takes only addresses; a bad one is the
# command line's (2), said before anything starts.
expect_status 2 "a port out of range" -- "$SW" server --bind tcp://127.0.0.1:99999 --max-time 1
expect_output "port '99999' is not a number in [1, 65535]" "names the port"
expect_status 2 "a worker's port out of range" -- "$SW" worker --connect tcp://127.0.0.1:70000
expect_output "port '70000'" "names it"
expect_status 2 "a shard's port out of range" -- "$SW" shard --bind tcp://127.0.0.1:99999
expect_status 2 "a shard list of no endpoint" -- "$SW" server --shards nonsense --max-time 1
expect_output "--shards: nonsense: not an endpoint" "names the entry"
expect_no_output "operator commands" "before the server starts"
expect_status 2 "a port with a sign" -- "$SW" worker --connect "tcp://127.0.0.1:+5555"
expect_status 2 "a shard list naming every interface" -- "$SW" server --shards "tcp://*:5601" \
  --max-time 1
expect_output "--shards: tcp://*:5601: '*' (every interface) is a host to bind" "a bind address"
expect_status 2 "a worker connecting to every interface" -- "$SW" worker --connect "tcp://*:5600"
expect_output "name the host (tcp://127.0.0.1:5600 on this machine)" "is told what to give"
expect_status 2 "ctl of no endpoint" -- "$SW" ctl --connect foo status
expect_output "--connect: foo: not an endpoint" "is a usage error, as the man page says"
for words in "policy bsp extra" "status extra" "policy"; do # one spec: quoted if it has spaces
  # shellcheck disable=SC2086
  expect_status 2 "ctl $words" -- "$SW" ctl --timeout 0.2 $words
  expect_output "give 'status' or 'policy SPEC'" "ctl $words is refused before it is sent"
done
# Endpoints ZeroMQ would refuse only late, or take and serve nobody on: said at once.
for ep in tcp://127.0.0.1:5555:5556 "tcp://127.0.0.1:5600;tcp://127.0.0.1:5601" \
  "tcp://127.0.0.1:5600,tcp://127.0.0.1:5601" ipc:// inproc://x "ipc:///tmp/a;ipc:///tmp/b" \
  "tcp://[]:5555"; do
  expect_status 2 "a server bound at '$ep'" -- "$SW" server --bind "$ep" --max-time 1
  expect_output "$ep: " "names it"
  expect_no_output "operator commands" "before the server starts"
done
expect_status 2 "two shards run together" -- "$SW" server --shards \
  "tcp://127.0.0.1:5600;tcp://127.0.0.1:5601" --max-time 1
expect_output "two endpoints run together" "is told to give one each"
# What is wrong with a shard list, said whole however long the list (the whole list was quoted,
# and cut where the message is kept); more shards than parameters is a usage error too (it exited 1).
many=$(for i in $(seq 1 257); do printf 'tcp://127.0.0.1:%d,' $((6000 + i)); done)
expect_status 2 "257 shards" -- "$SW" server --shards "${many%,}" --max-time 1
expect_output "a shard list names at most 256 shards" "says the limit"
expect_status 2 "an empty shard list entry" -- "$SW" server --shards \
  "tcp://127.0.0.1:5600,,tcp://127.0.0.1:5601" --max-time 1
expect_output "shard list entry 2 is empty" "names the entry"
many=$(for i in $(seq 1 80); do printf 'tcp://127.0.0.1:%d,' $((6000 + i)); done)
expect_status 2 "more shards than parameters" -- "$SW" server --shards "${many%,}" \
  --model softmax --data synthetic:task=logistic,d=8,n=100 --max-time 1
expect_output "cannot cut 18 parameters over 80 shards" "says why"
# A number too large for any integer is out of range, not "not an integer".
expect_status 2 "a push limit past 2^64" -- "$SW" sim --no-model --max-pushes 18446744073709551616
expect_output "--max-pushes: 18446744073709551616 is too large" "says it is too large"
expect_status 2 "a shard's frame limit past a long" -- "$SW" shard --max-frame 99999999999999999999
expect_output "99999999999999999999 is outside [65536, 2147483648]" "says its range"
# --batch-mode shard with more slots than examples: some shares empty, refused as the simulator
# refuses it (a worker in such a slot failed as it joined; one in a low slot read a row or two).
expect_status 2 "a server sharing 135 examples over 200 slots" -- "$SW" server \
  --batch-mode shard --max-workers 200 --data synthetic:d=5,n=150,test=20 --model softmax \
  --max-time 1
expect_output "give at most 135 slots (the worker count)" "says how many"
expect_status 2 "a worker's two endpoints" -- "$SW" worker --connect "tcp://127.0.0.1:5600;x:5601"
expect_output "one endpoint" "is told at once, not after its server timeout"
expect_status 2 "a shard resumed without its file" -- "$SW" shard --resume
expect_output "--resume needs --checkpoint" "says what it needs"
expect_status 1 "a server bound by host name (no worker: never started)" -- "$SW" server \
  --bind "tcp://localhost:*" \
  --endpoint-file "$TMP/ep" --data synthetic:d=5,n=100 --model softmax --max-time 0.3 -q
OUT=$(cat "$TMP/ep")
expect_output "tcp://127.0.0.1:" "localhost was resolved to its address"
checks=$((checks + 1)) # its claim on the file (FILE.lock) went with it
[ ! -e "$TMP/ep.lock" ] || { echo "FAIL: the server left ep.lock"; failures=$((failures + 1)); }

# A resumed checkpoint of another shape: the refusal names both shapes.
rm -f "$TMP/r.ckpt" # an earlier test's: a fresh server refuses to overwrite it
"$SW" server --bind "tcp://127.0.0.1:*" --data synthetic:task=logistic,d=50,n=200 \
  --model softmax --checkpoint "$TMP/r.ckpt" --max-time 0.3 -q > /dev/null 2>&1
expect_status 1 "resume another shape" -- "$SW" server --bind "tcp://127.0.0.1:*" \
  --data synthetic:task=logistic,d=20,n=200 --model softmax --checkpoint "$TMP/r.ckpt" --resume
expect_output "holds 'softmax' on 1x1x50 inputs, 2 classes, 102 parameters; the server runs \
'softmax' on 1x1x20 inputs" "names both shapes"

# A checkpoint that cannot be written is refused at the start, naming the option, not at the
# first save in the middle of the run.
for cmd in "server --max-time 5 --model softmax" "shard"; do
  expect_status 1 "$cmd with a --checkpoint in no directory" -- timeout 10 "$SW" $cmd \
    --bind "tcp://127.0.0.1:*" --checkpoint "$TMP/no/such/dir/x.ckpt"
  expect_output "--checkpoint $TMP/no/such/dir/x.ckpt: cannot write there" "${cmd%% *} says where"
done

# No command writes over what it reads (a data file, a file in a data set's directory, a
# cluster trace), and none replaces a FIFO or device with a file: each is refused before
# anything is written, and the inputs are left as they were.
"$SW" data gen --n 300 --dim 50 --out "$TMP/in.svm" > /dev/null
mkdir -p "$TMP/idxdir" "$TMP/cmp"
echo "not read: refused first" > "$TMP/idxdir/t10k-labels-idx1-ubyte.gz"
printf '0,1.0\n1,2.0\n0,1.5\n1,2.5\n' > "$TMP/cmp/results.csv"
cp "$TMP/cmp/results.csv" "$TMP/rltrace.csv"
inputs=("$TMP/in.svm" "$TMP/idxdir/t10k-labels-idx1-ubyte.gz" "$TMP/cmp/results.csv" "$TMP/rltrace.csv")
SUM=$(cat "${inputs[@]}" | cksum)
for run in "train --data libsvm:train=$TMP/in.svm --model softmax --epochs 1 --out $TMP/in.svm" \
    "data export --data libsvm:train=$TMP/in.svm --out $TMP/in.svm" \
    "server --data libsvm:train=$TMP/in.svm --model svm --log $TMP/in.svm" \
    "server --data libsvm:train=$TMP/in.svm --model svm --checkpoint $TMP/in.svm" \
    "server --data libsvm:train=$TMP/in.svm --model svm --endpoint-file $TMP/in.svm" \
    "train --data idx:dir=$TMP/idxdir --out $TMP/idxdir/t10k-labels-idx1-ubyte.gz" \
    "compare --policies asp --no-model --workers 2 --cluster trace:$TMP/cmp/results.csv --log-dir $TMP/cmp" \
    "rl eval --cluster trace:$TMP/rltrace.csv --csv $TMP/rltrace.csv" \
    "rl train --cluster trace:$TMP/rltrace.csv --out $TMP/rltrace.csv"; do
  read -ra args <<< "$run"
  expect_status 2 "${args[0]} ${args[1]} writing a file it reads" -- "$SW" "${args[@]}"
  expect_output "is a file this run reads" "${args[0]} says why"
done
OUT=$(cat "${inputs[@]}" | cksum)
expect_output "$SUM" "every input is as it was"
# The two-class sparse models refuse data of more classes (labels 2 and up read as +1).
printf '0 1:1\n1 2:1\n2 3:1\n3 1:1\n' > "$TMP/four.svm"
expect_status 2 "svm on four classes" -- "$SW" sim --model svm --data "libsvm:train=$TMP/four.svm" \
  --max-time 10
expect_output "two-class model and this data has 4 classes" "says why"
cp "$(dirname "$0")/../policies/rlp.swrl" "$TMP/mine.swrl"
expect_status 2 "rl eval writing its CSV over its policy" -- "$SW" rl eval \
  --policy "$TMP/mine.swrl" --csv "$TMP/mine.swrl" --instances 1 --seeds 1
expect_status 0 "the policy left as it was" -- "$SW" sim --policy "rlp:file=$TMP/mine.swrl" \
  --no-model --max-pushes 10 -q
mkfifo "$TMP/fifo"
mkdir -p "$TMP/fifo-prev" && mkfifo "$TMP/fifo-prev/s.ckpt.prev"
expect_status 1 "train --out a FIFO" -- "$SW" train --data synthetic:task=logistic,d=8,n=500 \
  --model softmax --epochs 1 --out "$TMP/fifo"
expect_output "not a regular file" "says why"
expect_status 1 "data gen --out a FIFO" -- "$SW" data gen --n 10 --dim 10 --out "$TMP/fifo"
checks=$((checks + 1))
[ -p "$TMP/fifo" ] || { echo "FAIL: the FIFO was replaced"; failures=$((failures + 1)); }
expect_status 1 "a shard whose FILE.prev is a FIFO" -- "$SW" shard --bind "tcp://127.0.0.1:*" \
  --checkpoint "$TMP/fifo-prev/s.ckpt"
expect_output "FILE.prev" "says which file"
expect_status 2 "train --out an empty path" -- "$SW" train --data synthetic:task=logistic,d=8,n=500 \
  --model softmax --epochs 1 --out ""
expect_output "--out: an empty value" "says so before training"
# An empty name or an endpoint that is not one is the command line's fault (2) everywhere.
expect_status 2 "data gen --out an empty path" -- "$SW" data gen --n 5 --dim 5 --out ""
expect_output "--out: an empty value" "says so"
# An empty input (an unset variable) is a slip of the command line too, said as one, not a
# file of no name that cannot be opened.
expect_status 2 "zipline --input ''" -- "$SW" zipline --input ""
expect_output "--input: an empty value" "names the option"
expect_status 2 "check ''" -- "$SW" check ""
expect_output "an empty argument" "says so"
expect_status 2 "report ''" -- "$SW" report -o "$TMP/empty-arg-report" ""
checks=$((checks + 1))
[ ! -e "$TMP/empty-arg-report" ] ||
  { echo "FAIL: a refused report made its directory"; failures=$((failures + 1)); }
expect_status 2 "an empty value in a policy spec" -- "$SW" sim --no-model --max-time 1 \
  --policy "rlp:file="
expect_output "parameter 'file' without a value" "says which"
expect_status 2 "-q=1" -- "$SW" sim --no-model -q=1
expect_output "-q takes no value" "says the flag takes none"
expect_status 2 "peer --bind that is no endpoint" -- "$SW" peer --bind bogus
expect_output "--bind: bogus: not an endpoint" "names the option"
# A refused command line is said before anything is made or loaded: a report's directory, a
# training's lock, a sim's data (an unknown model before the limit's note, a log that cannot
# be written before the data load).
"$SW" sim --no-model --max-time 5 -q --log "$TMP/bsp-run.jsonl" >/dev/null
# A log written to a FIFO waits for its reader and reaches it whole (opened to read as well, a
# FIFO nobody read swallowed a short log and hung a long one).
mkfifo "$TMP/log.fifo"
"$SW" sim --no-model --max-time 20 -q --log "$TMP/fifo.jsonl" >/dev/null
(sleep 0.5; timeout 5 cat "$TMP/log.fifo" > "$TMP/from.fifo") &
expect_status 0 "sim --log into a FIFO, read late" -- timeout 30 "$SW" sim --no-model \
  --max-time 20 -q --log "$TMP/log.fifo"
wait
checks=$((checks + 1))
cmp -s "$TMP/fifo.jsonl" "$TMP/from.fifo" ||
  { echo "FAIL: the log through a FIFO differs from the same run's file"; failures=$((failures + 1)); }
expect_status 2 "report --baselines of no run's policy" -- "$SW" report -o "$TMP/bl-report" \
  --baselines ssp:s=9 "$TMP/bsp-run.jsonl"
checks=$((checks + 1))
[ ! -e "$TMP/bl-report" ] ||
  { echo "FAIL: a refused report left its directory"; failures=$((failures + 1)); }
expect_status 2 "rl train on an unknown cluster" -- "$SW" rl train --out "$TMP/p.swrl" \
  --cluster bogus
checks=$((checks + 1))
[ ! -e "$TMP/p.swrl.lock" ] ||
  { echo "FAIL: a refused training left its lock"; failures=$((failures + 1)); }
expect_status 2 "sim --model bogus" -- "$SW" sim --model bogus
expect_no_output "no time, apply or push limit" "says nothing before the error"
expect_status 1 "sim --log where it cannot be written" -- "$SW" sim --model softmax \
  --data synthetic:task=logistic,d=8,n=500 --max-time 1 --log "$TMP/nodir/x.jsonl"
expect_output "cannot write there" "says so"
echo x > "$TMP/afile"
expect_status 1 "compare --log-dir a regular file" -- "$SW" compare --policies "bsp;asp" \
  --no-model --max-time 10 --seeds 1 --log-dir "$TMP/afile"
expect_output "cannot write there: Not a directory" "says why (as root it said Permission denied)"
# A switch to a built-in policy's impossible spec is a bad command line, said before any server
# is asked (it waited for the server's answer, or for none, and exited 1).
expect_status 2 "ctl policy of an impossible spec" -- timeout 20 "$SW" ctl --connect \
  "tcp://127.0.0.1:9" policy "ssp:s=-1"
expect_output "ssp: s=-1 is outside" "says why"
# One a server of some size could take, or one naming the server's file, goes to the server
# (none here: 1 after the timeout), not refused for this process's slots or files.
for spec in "ebsp:algo=naive" "backup:k=5" "rlp:file=/nowhere/p.swrl"; do
  expect_status 1 "ctl policy $spec, no server" -- timeout 20 "$SW" ctl --timeout 0.2 \
    --connect "tcp://127.0.0.1:9" policy "$spec"
  expect_output "no answer from" "is asked of the server"
done
expect_status 2 "keygen of an empty name" -- "$SW" keygen ""
expect_status 2 "eval of an empty --model-file" -- "$SW" eval --model-file ""
expect_status 2 "server --ctl-bind of no endpoint" -- "$SW" server --ctl-bind foo --max-time 1
expect_output "--ctl-bind: foo: not an endpoint" "names the option"
mkdir -p "$TMP/outdir"
# Only whole names are options: getopt's prefixes turned compare's --seed into --seeds and --log
# into --log-dir without a word.
expect_status 2 "compare --seed (a prefix of --seeds)" -- "$SW" compare --policies bsp --seed 3 \
  --no-model --max-time 10
expect_output "unknown option '--seed'" "is refused as the option it is not"
expect_status 2 "compare --log (a prefix of --log-dir)" -- "$SW" compare --policies bsp \
  --log "$TMP/x.jsonl" --no-model --max-time 10
checks=$((checks + 1))
[ ! -e "$TMP/x.jsonl" ] || { echo "FAIL: --log made a directory"; failures=$((failures + 1)); }
expect_status 0 "a value that looks like an option" -- bash -c \
  'cd "$1" && "$2" sim --no-model --max-time 10 -q --log --odd.jsonl' _ "$TMP" "$SW"
expect_status 0 "a short option's value that looks like one" -- bash -c \
  'cd "$1" && "$2" report -q ./--odd.jsonl -o --odd-report' _ "$TMP" "$SW"
expect_status 1 "rl train --out a directory" -- timeout 20 "$SW" rl train --pre-instances 3 \
  --episodes 2 --models mlp:h=0 --max-pushes 300 --out "$TMP/outdir"
expect_output "is a directory" "refused before pre-training, as train's --out is (1)"
# Every output that is a directory is refused before anything starts (a server bound and served
# before its --endpoint-file /tmp was found to be one).
expect_status 1 "server --endpoint-file a directory" -- timeout 20 "$SW" server \
  --endpoint-file "$TMP/outdir" --data synthetic:task=logistic,d=10,n=500 --max-time 1
expect_output "--endpoint-file $TMP/outdir: is a directory" "before it serves"
expect_no_output "serving" "nothing served"

# An IDX set whose test images have another shape than the training images, though as many
# pixels (14x56 beside 28x28): refused, as a convolution would read them as 28x28.
be32() { printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) \
  $(($1 >> 8 & 255)) $(($1 & 255)))"; }
idx_set() { # NAME N ROWS COLS: images (all zero) and labels (all 0) of N examples
  { printf '\x00\x00\x08\x03'; be32 "$2"; be32 "$3"; be32 "$4"; head -c $(($2 * $3 * $4)) /dev/zero
  } > "$TMP/shapes/$1-images-idx3-ubyte"
  { printf '\x00\x00\x08\x01'; be32 "$2"; head -c "$2" /dev/zero; } > "$TMP/shapes/$1-labels-idx1-ubyte"
}
mkdir -p "$TMP/shapes"
idx_set train 20 28 28
idx_set t10k 10 14 56
expect_status 1 "IDX test images of another shape" -- "$SW" train --data "idx:dir=$TMP/shapes" \
  --model softmax --epochs 1 --out "$TMP/shapes.ckpt"
expect_output "test images are 14x56, training images 28x28" "says both shapes"

# A training refused before its first save leaves no FILE.lock behind, which a server's --resume
# of that path would take for a run killed before its first save.
expect_status 1 "a training of data that is not there" -- "$SW" train \
  --data "csv:train=$TMP/none.csv,test=$TMP/none.csv,label=first" --model softmax --epochs 1 \
  --out "$TMP/refused.ckpt"
checks=$((checks + 1))
[ ! -e "$TMP/refused.ckpt.lock" ] || { echo "FAIL: the refused training left its lock"; failures=$((failures + 1)); }

# What a command prints must reach its reader: a table sent to a full disk or a closed stdout
# is work lost, not done (exit 0 before, an empty table.txt).
if [ -c /dev/full ]; then
  expect_status 1 "a table sent to a full disk" -- sh -c '"$1" sim --policy bsp --workers 3 \
    --no-model --max-time 100 > /dev/full' sh "$SW"
  expect_output "standard output could not be written (No space left on device)" "says so"
  # check's 1 is a broken promise: a report lost is 2, as a log it cannot read is.
  "$SW" sim --policy bsp --workers 3 --no-model --max-time 100 --log "$TMP/kept.jsonl" -q > /dev/null
  expect_status 2 "check's report sent to a full disk" -- sh -c '"$1" check "$2" > /dev/full' \
    sh "$SW" "$TMP/kept.jsonl"
fi
expect_status 1 "help sent to a closed stdout" -- sh -c '"$1" --help >&-' sh "$SW"
expect_output "standard output could not be written" "says so"
finish
