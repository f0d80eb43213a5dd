#!/usr/bin/env bash
# The sim and compare commands end to end: summary, JSONL log, determinism, errors.
. "$(dirname "$0")/lib.sh"

data="synthetic:task=logistic,d=10,n=2000"
expect_status 0 "sim help" -- "$SW" sim --help
expect_output "--policy SPEC" "sim help lists --policy"
expect_output "ssp" "sim help lists the policies"
expect_output "straggle" "sim help lists the cluster models"

expect_status 0 "sim with a log" -- "$SW" sim --policy ssp:s=2 --workers 4 --data "$data" \
  --model softmax --lr 0.1 --target-acc 0.8 --max-time 2000 --seed 3 --log "$TMP/a.jsonl"
expect_output "policy ssp:s=2: stopped by target accuracy" "summary names the stop"
expect_output "staleness" "summary has a staleness histogram"
expect_output "idle %" "summary has idle shares"
expect_status 0 "a spec with an empty parameter list" -- "$SW" sim --policy ssp: --workers 2 \
  --data "$data" --model softmax --max-time 10 --log "$TMP/colon.jsonl"
expect_output "policy ssp: stopped by" "the summary does not double the spec's colon"
expect_status 0 "a run that switches policies" -- "$SW" sim --policy bsp --workers 4 --no-model \
  --max-time 300 --events "switch:t=100,policy=asp;switch:t=200,policy=ssp:s=2"
expect_output "policy bsp (then 2 switches, the last to ssp:s=2): stopped by" \
  "its summary says the figures are of every policy in turn"
expect_status 0 "check of its log" -- "$SW" check "$TMP/colon.jsonl"
expect_output "colon.jsonl: ssp: " "nor does check"
OUT=$(head -1 "$TMP/a.jsonl")
expect_output '"ev":"start","policy":"ssp:s=2"' "the log starts by saying what ran"
OUT=$(grep -c '"ev":"push"' "$TMP/a.jsonl")
checks=$((checks + 1)); [ "$OUT" -gt 10 ] || { echo "FAIL: too few pushes in the log"; failures=$((failures + 1)); }
"$SW" sim --policy ssp:s=2 --workers 4 --data "$data" --model softmax --lr 0.1 --target-acc 0.8 \
  --max-time 2000 --seed 3 --log "$TMP/b.jsonl" -q >/dev/null
checks=$((checks + 1)); cmp -s "$TMP/a.jsonl" "$TMP/b.jsonl" || { echo "FAIL: same seed, different logs"; failures=$((failures + 1)); }

# The scenario where dssp once released worker 3 seven steps ahead with hi=6 (issue 16): the log
# keeps every promise, and `check` says so; a bound broken in a log is caught with its line.
expect_status 0 "dssp on the scenario that broke hi" -- "$SW" sim --policy dssp:lo=2,hi=6 \
  --workers 9 --model mlp:h=1,u=64 --data fashion-mnist --target-acc 0.75 --cluster shexp:0.7 \
  --seed 3 --log "$TMP/d.jsonl" -q
expect_status 0 "check the dssp log" -- "$SW" check "$TMP/d.jsonl"
expect_output "every promise kept" "dssp kept hi and spent its grants"
grep -c '"ev":"grant"' "$TMP/d.jsonl" > /dev/null || { echo "FAIL: dssp logged no grant"; failures=$((failures + 1)); }
sed 's/"policy":"dssp:lo=2,hi=6"/"policy":"ssp:s=2"/' "$TMP/d.jsonl" | grep -v '"ev":"grant"' \
  > "$TMP/e.jsonl"
expect_status 1 "the same log held to ssp:s=2" -- "$SW" check "$TMP/e.jsonl"
expect_output "BROKEN: $TMP/e.jsonl:" "names the line"
expect_output "steps ahead of the slowest live worker (s=2)" "names the bound"
expect_status 2 "check a file that is not a log" -- "$SW" check "$0"
# An accuracy of 5/6 meets a target of 0.8333333: the log keeps as many digits of it as of the
# target, or check would call the run's end line a forgery.
"$SW" sim -q --workers 2 --data synthetic:task=logistic,d=6,n=300,val=6 --model softmax \
  --batch 4 --target-acc 0.8333333 --seed 1 --log "$TMP/sixths.jsonl" >/dev/null
expect_status 0 "a run that met a target of 0.8333333 with 5/6" -- "$SW" check "$TMP/sixths.jsonl"
expect_status 0 "rlp without a model" -- "$SW" sim --policy rlp --no-model --max-time 20 -q
expect_output "rlp decides from the model's loss, which a run without a model" "says what it sees"
for given in "--model cnn" "--data synthetic:d=5"; do # in either order, not silently unused
  expect_status 2 "--no-model with $given" -- "$SW" sim --no-model $given --max-time 5
  expect_output "would not be used" "says why"
  expect_status 2 "$given with --no-model" -- "$SW" sim $given --no-model --max-time 5
done
expect_status 2 "more shards than the model has parameters" -- "$SW" sim --max-time 1 \
  --data synthetic:task=logistic,d=8,n=500 --model softmax --net shards=100
expect_output "cannot place 18 parameters on 100 shards" "says why, before the run"
sed 's/"policy":"dssp:lo=2,hi=6"/"policy":"dsp:lo=2,hi=6"/' "$TMP/d.jsonl" > "$TMP/typo.jsonl"
expect_status 0 "a log whose policy has a typo" -- "$SW" check "$TMP/typo.jsonl"
expect_output "neither built in nor loaded from SYNCWISE_PLUGINS: a typo" \
  "is held to the rules every run keeps, saying the policy is unknown"
# A cluster of one group per worker (a spec of 420 characters) is kept whole in the log, which
# check reads back; one longer than the log keeps is refused before the run.
groups=$(for i in $(seq 0 29); do printf 'const:%d@%d-%d;' $((i + 1)) "$i" "$i"; done)
expect_status 0 "a long cluster spec" -- "$SW" sim -q --policy ssp:s=1 --workers 30 --no-model \
  --max-time 100 --cluster "${groups%;}" --log "$TMP/long.jsonl"
expect_status 0 "check its log" -- "$SW" check "$TMP/long.jsonl"
groups=$(for i in $(seq 0 79); do printf 'const:%d@%d-%d;' $((i + 1)) "$i" "$i"; done)
expect_status 1 "a cluster spec too long to log" -- "$SW" sim -q --workers 80 --no-model \
  --max-time 100 --cluster "${groups%;}"
expect_output "the log keeps at most 1023" "says the limit"
# Workers that would each keep an order of the whole training set past the machine's memory
# (1.6 TB here) are refused at once, not killed by the kernel after minutes of setting up.
expect_status 1 "a million workers each ordering 395,000 examples" -- "$SW" sim -q \
  --workers 1048576 --batch-mode sample --data synthetic:task=logistic,d=10,n=400000,test=100 \
  --model softmax --max-pushes 10
expect_output "need 1656.8 GB for their orders, over the" "says what it needs"
# A log whose last line a crash cut mid-write is read up to its last whole line (docs/log.md);
# a broken line with a newline after it is still a fault.
{ head -n 40 "$TMP/d.jsonl"; sed -n 41p "$TMP/d.jsonl" | head -c 25; } > "$TMP/cut.jsonl"
expect_status 0 "check a log cut mid-line" -- "$SW" check "$TMP/cut.jsonl"
expect_output "without its end line" "says the log was cut"
expect_status 0 "report a log cut mid-line" -- "$SW" report -q "$TMP/cut.jsonl" -o "$TMP/cut-report"
{ head -n 40 "$TMP/d.jsonl"; sed -n 41p "$TMP/d.jsonl" | head -c 25; echo; sed -n 42p "$TMP/d.jsonl"; } \
  > "$TMP/broken.jsonl"
expect_status 2 "check a log with a broken line inside" -- "$SW" check "$TMP/broken.jsonl"
expect_output "broken.jsonl:41" "names the line"
# Found by make soak: ebsp's only worker left during a prediction, and the superstep never
# ended, so the next joiner waited for a barrier nobody could complete.
expect_status 0 "ebsp when the last worker leaves mid-prediction" -- "$SW" sim --no-model \
  --policy ebsp:R=3 --workers 1 --cluster shexp:0.01,base=2.79 \
  --events "leave:w=0,t=41.035;join:t=114.127" --seed 597 --max-time 200 -q
# Found by an audit: a worker that pushed, left and joined its slot again before the barrier put
# a second gradient of the slot into it (bsp, k-of-n); and a joiner after everyone left, their
# gradients buffered, completes the barrier itself (sim checks every promise as it runs).
for policy in bsp backup:k=2 dbw bdbw \
  "rlswitch:file=$(dirname "$0")/../policies/rlswitch.swrl,choose=once"; do
  for ev in "leave:w=0,t=1.5;join:w=0,t=2" "leave:w=0,t=1.5;leave:w=1,t=2;leave:w=2,t=2;join:t=3" \
    "crash:w=0,t=1.5;leave:w=1,t=2;leave:w=2,t=2;join:w=0,t=3"; do
    expect_status 0 "$policy: $ev" -- "$SW" sim --no-model --workers 3 --policy "$policy" \
      --cluster "const:1@0;const:5" --events "$ev" --max-time 20 -q
  done
done

expect_status 0 "sim without a model" -- "$SW" sim --no-model --workers 50 --policy bsp --max-pushes 5000
expect_output "(workers 0-31 of 50; the event log" "a wide cluster's table shows the first 32"
expect_output "applies 100, pushes 5000" "50 workers: 100 supersteps in 5000 pushes"
expect_status 0 "crash and join" -- "$SW" sim --no-model --workers 3 --policy bsp --max-time 100 \
  --cluster const:1 --events "crash:w=1,t=10.5;join:t=20.5"
expect_output "stopped by time limit" "the run goes on to its limit"

expect_status 0 "a sparse model is simulated" -- "$SW" sim --model svm --lr 0.35 \
  --data sparse:n=3000,test=300,dim=1000 --policy ssp:s=2 --max-time 300 --log "$TMP/svm.jsonl"
expect_output "final test loss" "the sparse run reports its loss on the test set (no validation split)"
expect_status 0 "the sparse run kept its promise" -- "$SW" check "$TMP/svm.jsonl"
# A generated sparse set, exported, is the same data read back: the same run, the same end,
# whatever the run's --seed (its data set is its spec's alone; export takes no --seed).
SPARSE=sparse:n=3000,test=300,dim=1000
for split in train test; do
  expect_status 0 "data export of a sparse:... $split split" -- "$SW" data export --data "$SPARSE" \
    --split $split --out "$TMP/sparse-$split.svm"
done
svm_run=(sim --model svm --lr 0.35 --policy ssp:s=2 --max-time 300 --seed 3)
expect_status 0 "the generated data" -- "$SW" "${svm_run[@]}" --data "$SPARSE"
generated=$(grep -o "final test loss.*" <<< "$OUT")
expect_status 0 "the exported files" -- "$SW" "${svm_run[@]}" \
  --data "libsvm:train=$TMP/sparse-train.svm,test=$TMP/sparse-test.svm,dim=1000"
expect_output "$generated" "the exported files train as the generated set does ($generated)"
expect_status 2 "export given gen's options" -- "$SW" data export --n 10 --out "$TMP/x.svm"
expect_output "are for gen" "is refused before the export"
expect_status 2 "export given a run's --seed" -- "$SW" data export --seed 3 --out "$TMP/x.svm"
expect_output "the spec's alone in every run, whatever its --seed" "is told the seed changes nothing"
expect_status 2 "gen given export's options" -- "$SW" data gen --n 10 --split test --out "$TMP/x.svm"
expect_output "are for export" "is refused before the rows are made"
expect_status 2 "sparse data have no val split" -- "$SW" data export --data "$SPARSE" --split val \
  --out "$TMP/none.svm"
expect_status 2 "a sparse model on dense data" -- "$SW" sim --model svm --max-pushes 10
expect_output "model 'svm' reads sparse rows" "the refusal says which data it reads"
expect_status 2 "a sparse model pulls every step" -- "$SW" sim --model svm --max-pushes 10 \
  --data sparse:n=300,test=30,dim=100 --get-model-frequency 2
expect_output "(--get-model-frequency) must be 1" "the refusal says why, naming the option"
expect_status 2 "an empty cluster spec" -- "$SW" sim --no-model --cluster @
expect_output "cluster '@': an empty spec" "says it is the cluster's"
expect_status 2 "unknown policy" -- "$SW" sim --no-model --policy fastest --max-pushes 10
expect_output "unknown policy 'fastest' (known: bsp, asp, ssp" "lists the policies"
expect_status 2 "unknown policy key" -- "$SW" sim --no-model --policy ssp:x=1 --max-pushes 10
expect_output "known: s" "lists the keys"
expect_status 2 "grads_to_wait beyond the workers" -- "$SW" sim --no-model --workers 4 \
  --policy sync:grads_to_wait=1000000 --max-applies 10
expect_output "exceeds the 4 worker slots" "refused, saying why, instead of never applying"
expect_status 0 "no limit given: a stated default" -- "$SW" sim --no-model --cluster const:10
expect_output "stops at 50000 virtual s at the latest" "says which limit it took"
expect_output "stopped by time limit at t=50000.0 s" "and stops there"
expect_status 2 "bad cluster" -- "$SW" sim --no-model --cluster "uniform:2" --max-pushes 10
expect_output "LO,HI" "explains the cluster spec"
expect_status 1 "unwritable log" -- "$SW" sim --no-model --max-pushes 10 --log /nonexistent/x.jsonl
# A run refused at its start leaves an existing log as it was.
"$SW" sim -q --no-model --max-pushes 10 --log "$TMP/kept.jsonl" > /dev/null
cp "$TMP/kept.jsonl" "$TMP/kept.before"
expect_status 2 "too few examples for the workers' shares" -- "$SW" sim --data synthetic:n=1 \
  --max-time 10 --log "$TMP/kept.jsonl"
expect_status 2 "a sparse model with a pull frequency" -- "$SW" sim --model logistic \
  --data sparse:n=300,dim=200 --get-model-frequency 2 --max-time 10 --log "$TMP/kept.jsonl"
checks=$((checks + 1))
cmp -s "$TMP/kept.jsonl" "$TMP/kept.before" ||
  { echo "FAIL: a refused run emptied the log it was given"; failures=$((failures + 1)); }
expect_status 2 "bad option value" -- "$SW" sim --workers 0
# A log's numbers are read back as doubles: a seed above 2^53 would come back another.
expect_status 2 "a seed no log keeps exactly" -- "$SW" sim --no-model --max-time 5 \
  --seed 9007199254740993
expect_output "above 9007199254740992" "says the largest"

expect_status 0 "compare" -- "$SW" compare --policies "bsp,asp,ssp:s=1" --seeds 3 --jobs 2 \
  --data "$data" --model softmax --lr 0.1 --target-acc 0.8 --max-time 3000 -q
expect_output "time to target" "compare prints its table"
expect_output "3/3" "every run reached the target"
expect_output "speedup: mean time of the best baseline" "compare explains the speedup"
expect_output "speedup seed by seed over" "and gives the speedups seed by seed"
checks=$((checks + 1))
[ "$(printf '%s\n' "$OUT" | grep -c "x (95% interval .*), faster on [0-3] of 3 seeds")" = 2 ] ||
  { echo "FAIL: a paired speedup for each policy but the best baseline"; failures=$((failures + 1)); }

# A compare run is the sim run of its seed, byte for byte (the data set is the spec's alone),
# whatever OpenBLAS would choose on its own: both default to one thread.
expect_status 0 "compare keeping its logs" -- "$SW" compare --policies "ssp:s=1" --seeds 2 \
  --data "$data" --model softmax --lr 0.1 --target-acc 0.8 --max-time 3000 -q \
  --log-dir "$TMP/cmp"
expect_status 0 "sim of compare's seed 2" -- env -u OPENBLAS_NUM_THREADS "$SW" sim --policy "ssp:s=1" --seed 2 \
  --data "$data" --model softmax --lr 0.1 --target-acc 0.8 --max-time 3000 -q \
  --log "$TMP/seed2.jsonl"
checks=$((checks + 1))
cmp -s "$TMP/cmp/ssp-s=1-seed2.jsonl" "$TMP/seed2.jsonl" ||
  { echo "FAIL: compare's seed 2 and sim --seed 2 wrote different logs"; failures=$((failures + 1)); }
expect_status 2 "compare without policies" -- "$SW" compare --seeds 2
expect_status 2 "a target without a model" -- "$SW" compare --no-model --target-acc 0.5 \
  --policies bsp --seeds 1
expect_no_output "0/0" "is refused before any run"
# What only the data can refuse is refused once, before any run or log: an existing log stays.
mkdir -p "$TMP/kept-dir"
echo precious > "$TMP/kept-dir/asp-seed1.jsonl"
expect_status 2 "compare with a target accuracy on a regression task" -- "$SW" compare \
  --policies asp --seeds 1 --data synthetic:task=lsq,d=5,n=500 --model softmax --target-acc 0.5 \
  --log-dir "$TMP/kept-dir"
expect_output "regression" "says why"
expect_no_output "reached" "before any run"
OUT=$(cat "$TMP/kept-dir/asp-seed1.jsonl")
expect_output "precious" "the log there is as it was"
# A run whose model diverges says so and fails; it still runs to its limit, never reaching.
expect_status 1 "a diverging run" -- "$SW" sim --policy asp --workers 3 --data "$data" \
  --model mlp:h=2,u=16 --lr 1e5 --max-time 100 --log "$TMP/diverged.jsonl"
expect_output "DIVERGED at t=" "the summary says when"
expect_output "the model diverged" "and the error why"
expect_output "loss not finite (diverged)" "its final loss is said, not printed as -nan"
OUT=$(tail -1 "$TMP/diverged.jsonl") # as its status says: a run that failed
expect_output '"why":"failed: the model diverged at t=' "its log's end says it failed"
expect_output "(stopped by time limit)" "and where it stopped"
expect_status 0 "the diverged run's log" -- "$SW" check "$TMP/diverged.jsonl"
# A comparison of which every run diverged compares nothing, and fails as sim does; one without
# a baseline still says what its columns are.
expect_status 1 "a comparison of runs that all diverge" -- "$SW" compare --policies "asp;bsp" \
  --seeds 2 --workers 3 --data "$data" --model mlp:h=2,u=16 --lr 1e5 --max-time 100
expect_output "every run diverged" "says why it failed"
expect_status 0 "a comparison without a baseline" -- "$SW" compare --policies "dssp:lo=1,hi=2;dbw" \
  --seeds 2 --no-model --max-time 50
expect_output "no policy is a baseline" "says why no speedups"
expect_output "no target was given" "and what the times are"
# A data spec's value out of its range is a bad command line (2), as a cluster's or a policy's is.
for bad in "--data synthetic:d=0" "--data synthetic:d=5,frac=0" "--model svm --data sparse:test=0"; do
  # shellcheck disable=SC2086
  expect_status 2 "a data spec's value out of range: $bad" -- "$SW" sim -q --max-pushes 5 $bad
done
# Numbers are decimal as users write them: strtod's hex, signs and spaces are refused.
for bad in "--max-time 0x10" "--policy asp:lr=0x1p-3" "--policy ssp:s=+1" "--cluster const:1@+0-3"; do
  # shellcheck disable=SC2086
  expect_status 2 "not decimal: $bad" -- "$SW" sim -q --workers 4 --no-model --max-pushes 5 $bad
done
expect_status 2 "not decimal: a model's width" -- "$SW" sim -q --workers 4 --max-pushes 5 \
  --data synthetic:d=5,n=100 --model mlp:h=1,u=+8
# Steps so heavy-tailed that the virtual clock overflows: the run fails before a time it cannot
# write (its log said "t":inf, which no JSON reader takes), and its log stays readable. Here
# the clock grows too coarse for the other workers' steps first (at about 1e294 s), which ends
# the run as well; either way it says why.
expect_status 1 "an overflowing clock" -- "$SW" sim -q --policy asp --workers 4 \
  --cluster pareto:0.01,1 --no-model --max-pushes 20000 --log "$TMP/inf.jsonl"
expect_output "the virtual clock " "the error says why"
expect_status 0 "its log checked" -- "$SW" check "$TMP/inf.jsonl"
OUT=$(tail -1 "$TMP/inf.jsonl")
expect_output '"why":"failed: t=' "the log ends failed"
expect_no_output '"t":inf' "at a time JSON can hold"
expect_status 0 "a time limit before the overflow" -- "$SW" sim -q --seed 2 --policy bsp \
  --workers 2 --no-model --cluster 'const:1@0;pareto:0.001,1@1' --max-time 100 --log "$TMP/inf.jsonl"
OUT=$(tail -1 "$TMP/inf.jsonl")
expect_output '"why":"time limit"' "ends at its limit"
# A part with '=' and no ':' continues the policy before it, with or without parameters.
expect_status 0 "continued specs" -- "$SW" compare -q --policies "bsp,lr=0.1;backup:k=2,dbw,lr=0.08,agg=mean" \
  --seeds 1 --no-model --workers 4 --max-pushes 20
expect_output "bsp:lr=0.1 " "a policy without parameters takes the continuation"
expect_output "dbw:lr=0.08,agg=mean " "one with parameters too"
expect_status 0 "baselines in the same syntax" -- "$SW" compare -q --policies "bsp,lr=0.1;dbw,agg=mean" \
  --baselines "dbw,agg=mean" --seeds 1 --no-model --workers 4 --max-pushes 20
expect_output "best baseline (dbw:agg=mean)" "name the policy as it ran"
# Every spec is tried before anything runs: no table of zeros, exit 2.
for bad in "bsp,aps" "bsp,ssp:t=1" "bsp,sync:grads_to_wait=99"; do
  expect_status 2 "compare refuses $bad" -- "$SW" compare --policies "$bad" --seeds 1 --no-model \
    --workers 4 --max-time 100
  expect_no_output "reached" "$bad: nothing ran"
done
expect_output "grads_to_wait" "the refusal names the parameter"
# Optimizer options that contradict each other are refused, naming both.
for bad in "--momentum 0.9 --optimizer sgd:momentum=0.5" "--momentum 0.9 --optimizer adam" \
  "--nesterov"; do
  expect_status 2 "sim refuses $bad" -- "$SW" sim $bad --no-model --workers 4 --max-time 100
done
expect_status 2 "two momenta" -- "$SW" sim --optimizer sgd:momentum=0.5 --momentum 0.9 --no-model
expect_output "--momentum 0.9 and --optimizer sgd:momentum=0.5" "the refusal names both"
# A policy twice (its runs would share one log) and a baseline that is not run are refused too.
for bad in "--policies bsp;asp;bsp" "--policies ssp:s=1;ssp_s=1" "--policies bsp --baselines asp" \
  "--policies backup:k=2,agg=sum;bsp --baselines backup:k=2"; do
  expect_status 2 "compare refuses $bad" -- "$SW" compare $bad --seeds 1 --no-model --workers 4 \
    --max-time 100
  expect_no_output "reached" "$bad: nothing ran"
done
expect_status 0 "a baseline spelled as in --policies" -- "$SW" compare -q --seeds 1 --no-model \
  --workers 4 --max-time 100 --policies "backup:k=2,agg=sum;bsp" --baselines "backup:k=2,agg=sum"
expect_status 2 "compare refuses a switch to a bad spec" -- "$SW" compare --policies bsp,asp \
  --seeds 1 --no-model --max-time 100 --events "switch:t=10,policy=ssp:t=1"
expect_output "switch to ssp:t=1" "the refusal names the event"
expect_status 2 "a bad spec in sim's events too" -- "$SW" sim --no-model --max-time 100 \
  --events "switch:t=10,policy=dssp:lo=5,hi=2"
expect_status 2 "a switch names no worker" -- "$SW" sim --no-model --max-time 10 \
  --events "switch:t=1,w=0,policy=bsp"
expect_status 2 "t= after policy=" -- "$SW" sim --no-model --max-time 10 \
  --events "switch:policy=asp,t=1"
expect_output "before policy=, which takes the rest" "says where t= goes"
expect_status 2 "join:w= of a new worker's slot before its own join" -- "$SW" sim --no-model \
  --workers 3 --max-time 10 --events "join:w=3,t=1;join:t=5"
expect_output "a new worker joins without w=" "says how a new worker joins"
expect_status 0 "join:w= brings a new worker back" -- "$SW" sim --no-model --workers 3 \
  --max-time 10 -q --events "join:t=1;crash:w=3,t=2;join:w=3,t=5"
# Events of one time run in the order listed: a join, the crash of the worker it brought in and
# its return, all at t=6, are taken; the return listed before the join is not.
expect_status 0 "a new worker's join, crash and return at one time" -- "$SW" sim --no-model \
  --workers 1 --max-time 10 -q --events "join:t=6;crash:w=1,t=6;join:w=1,t=6"
expect_status 2 "its return listed before its join at one time" -- "$SW" sim --no-model \
  --workers 1 --max-time 10 -q --events "join:w=1,t=6;join:t=6"
for ev in "crash:w=1,t=50,policy=bsp" "join:t=50,policy=ssp:s=2" "leave:w=0,t=5,policy=asp"; do
  expect_status 2 "a policy on an event that takes none: $ev" -- "$SW" sim --no-model \
    --max-time 100 --events "$ev"
  expect_output "policy= belongs to a switch" "$ev: the refusal says why"
done
finish
