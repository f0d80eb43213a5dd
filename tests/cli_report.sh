#!/usr/bin/env bash
# The report command: every CSV with its columns, plots when gnuplot is there, clear errors.
. "$(dirname "$0")/lib.sh"

"$SW" sim --policy bsp --workers 3 --data synthetic:task=logistic,d=8,n=1000 --model softmax \
  --lr 0.1 --max-time 60 --eval-every 10 --log "$TMP/bsp.jsonl" -q >/dev/null
"$SW" sim --policy backup:k=2 --workers 3 --data synthetic:task=logistic,d=8,n=1000 \
  --model softmax --lr 0.1 --max-time 60 --eval-every 10 --log "$TMP/backup.jsonl" -q >/dev/null
"$SW" sim --policy dssp:lo=1,hi=3 --workers 3 --data synthetic:task=logistic,d=8,n=1000 \
  --model softmax --lr 0.1 --max-time 60 --eval-every 10 --log "$TMP/dssp.jsonl" -q >/dev/null
"$SW" zipline --workers 5 --R 6 --algo zipline --trace "$TMP/zl.csv" >/dev/null
expect_status 0 "report" -- "$SW" report "$TMP/bsp.jsonl" "$TMP/backup.jsonl" "$TMP/dssp.jsonl" \
  "$TMP/zl.csv" -o "$TMP/out"
expect_output "report of 3 runs and 1 zipline trace" "says what it read"
# Traces of one name in two directories are two traces, each its own series (they were one
# unlabelled series, both named t).
mkdir -p "$TMP/t1" "$TMP/t2"
"$SW" zipline --workers 5 --R 6 --algo zipline --trace "$TMP/t1/t.csv" >/dev/null
"$SW" zipline --workers 4 --R 5 --algo zipline --trace "$TMP/t2/t.csv" >/dev/null
expect_status 0 "report of two traces" -- "$SW" report "$TMP/t1/t.csv" "$TMP/t2/t.csv" \
  -o "$TMP/two"
expect_output "report of 0 runs and 2 zipline traces" "counts both"
OUT=$(cut -d, -f1 "$TMP/two/zipline.csv" | LC_ALL=C sort -u | tr '\n' ' ')
expect_output "t trace t~2" "each trace's rows carry a name of its own"
OUT=$(grep -c '^dssp,dssp:lo=1 hi=3,[0-9]*,running,' "$TMP/out/timeline.csv")
checks=$((checks + 1)); [ "$OUT" -gt 0 ] || { echo "FAIL: a policy with a comma breaks the CSV"; failures=$((failures + 1)); }
for f in runs:run,policy,workers,seed,model,events evals:run,policy,t,V,loss,acc \
         applies:run,policy,t,V,n timeline:run,policy,worker,state,start,end \
         staleness:run,policy,staleness,count,share zipline:trace,candidate,d \
         targets:run,policy,seed,reached,time,end accuracy_mean:policy,t,mean,lo,hi,runs; do
  name=${f%%:*} header=${f#*:}
  OUT=$(head -1 "$TMP/out/$name.csv")
  expect_output "$header" "$name.csv has its columns"
  rows=$(($(wc -l < "$TMP/out/$name.csv") - 1))
  checks=$((checks + 1)); [ "$rows" -gt 0 ] || { echo "FAIL: $name.csv has no rows"; failures=$((failures + 1)); }
done
# What a report killed midway left in DIR (its .report-PID) goes with the next report; a live
# report's stage is left alone.
mkdir -p "$TMP/out/.report-2147483646" "$TMP/out/.report-$$"
touch "$TMP/out/.report-2147483646/accuracy.svg"
expect_status 0 "report again into the same DIR" -- "$SW" report "$TMP/bsp.jsonl" -o "$TMP/out" -q
checks=$((checks + 1))
[ ! -e "$TMP/out/.report-2147483646" ] && [ -d "$TMP/out/.report-$$" ] ||
  { echo "FAIL: a dead report's stage stayed, or a live one's went"; failures=$((failures + 1)); }
rmdir "$TMP/out/.report-$$"
"$SW" report "$TMP/bsp.jsonl" "$TMP/backup.jsonl" "$TMP/dssp.jsonl" "$TMP/zl.csv" -o "$TMP/out" -q

# --baselines as compare takes it: the speedups are over the baselines named, which must be
# policies of the runs.
expect_status 0 "report with --baselines" -- "$SW" report "$TMP/bsp.jsonl" "$TMP/backup.jsonl" \
  -o "$TMP/out-base" --baselines "backup:k=2"
expect_output "the best baseline (\`backup:k=2\`)" "its speedups are over the baseline named"
expect_status 0 "report with a baseline whose spec has a comma" -- "$SW" report \
  "$TMP/bsp.jsonl" "$TMP/dssp.jsonl" -o "$TMP/out-base3" --baselines "dssp:lo=1,hi=3"
expect_status 0 "report with a baseline as its tables label it" -- "$SW" report \
  "$TMP/bsp.jsonl" "$TMP/dssp.jsonl" -o "$TMP/out-base4" --baselines "dssp:lo=1 hi=3"
expect_output "the best baseline (\`dssp:lo=1 hi=3\`)" "the label names the same runs"
expect_status 2 "report with a baseline no run has" -- "$SW" report "$TMP/bsp.jsonl" \
  -o "$TMP/out-base2" --baselines "ssp:s=3"
expect_output "'ssp:s=3' is the policy of no run" "says which"
OUT=$(awk -F, '$1 == "backup" && $5 != 2' "$TMP/out/applies.csv" | wc -l)
expect_output "0" "every backup:k=2 apply has n = 2"
if command -v gnuplot >/dev/null; then
  for plot in accuracy loss timeline-bsp timeline-backup-k=2 timeline-dssp-lo=1_hi=3 k staleness \
      zipline; do
    for ext in svg png; do
      checks=$((checks + 1))
      [ -s "$TMP/out/$plot.$ext" ] || { echo "FAIL: $plot.$ext missing or empty"; failures=$((failures + 1)); }
    done
  done
  OUT=$(cat "$TMP/out/accuracy.svg")
  expect_output "Validation accuracy against virtual time: mean over" "the plot has its title"
  expect_output "virtual time (s)" "the plot labels its axis with units"
fi

# Seeds of a comparison with a target: report.md leads with the time-to-target table, the
# accuracy plot is a mean over seeds with the target drawn, the timelines take a window.
mkdir -p "$TMP/seeds"
for seed in 1 2; do
  for policy in bsp asp; do
    "$SW" sim --policy $policy --workers 3 --data synthetic:task=logistic,d=8,n=1000 --model softmax \
      --lr 0.1 --max-time 400 --eval-every 5 --target-acc 0.6 --seed $seed \
      --log "$TMP/seeds/$policy-seed$seed.jsonl" -q >/dev/null
  done
done
expect_status 0 "report of seeds" -- "$SW" report "$TMP"/seeds/*.jsonl -o "$TMP/seeds-out" \
  --window 0:20
expect_output "| \`asp\` | 2/2 |" "prints the table: asp reached the target in both seeds"
expect_output "Time to a validation accuracy of 0.6" "the target comes from the logs"
OUT=$(head -3 "$TMP/seeds-out/report.md")
expect_output "**Fastest: " "report.md answers first"
# The speedup seed by seed: the geometric mean of the best baseline's time over the other's on
# the seeds both reached, worked out here from targets.csv (run,policy,seed,reached,time,end).
OUT=$(cat "$TMP/seeds-out/report.md")
expect_output "| speedup seed by seed | 95% interval | faster on |" "report.md pairs the seeds"
best=$(sed -n 's/^Seed by seed over the best baseline (`\([a-z]*\)`).*/\1/p' "$TMP/seeds-out/report.md")
other=$([ "$best" = asp ] && echo bsp || echo asp)
want=$(awk -F, -v b="$best" -v o="$other" 'NR > 1 && $4 == 1 { t[$2, $3] = $5 }
  END { for (k in t) { split(k, f, SUBSEP); if (f[1] == o && (b, f[2]) in t) { s += log(t[b, f[2]] / t[k]); n++ } }
        printf "%.2fx", exp(s / n) }' "$TMP/seeds-out/targets.csv")
expect_output "| \`$other\` | $want |" "the paired speedup is the geometric mean of the ratios"
OUT=$(awk -F, '$1 == "bsp" && $6 == 2' "$TMP/seeds-out/accuracy_mean.csv" | wc -l)
checks=$((checks + 1))
[ "$OUT" -gt 100 ] || { echo "FAIL: the mean accuracy is over both seeds"; failures=$((failures + 1)); }
OUT=$(awk -F, 'NR > 1 && ($4 > $3 || $3 > $5)' "$TMP/seeds-out/accuracy_mean.csv" | wc -l)
expect_output "0" "the mean lies between the lowest and the highest run"
if command -v gnuplot >/dev/null; then
  OUT=$(cat "$TMP/seeds-out/accuracy.svg")
  expect_output "target 0.6" "the accuracy plot draws the target"
  OUT=$(cat "$TMP/seeds-out/timeline-bsp.svg")
  expect_output "0 to 20 s" "the timeline shows the window asked for"
  # gnuplot is given each drawn run's rows once (datablocks), the timelines only those that
  # meet the window: every interval of bsp's first seed in it, none of a seed not drawn.
  want=$(awk -F, '$1 == "bsp-seed1" && $5 <= 20 && $6 >= 0' "$TMP/seeds-out/timeline.csv" | wc -l)
  blocks=$(sed -n '/^\$timeline[0-9]* << EOD$/,/^EOD$/p' "$TMP/seeds-out/plots.gp")
  got=$(grep -c '^bsp-seed1,' <<< "$blocks")
  checks=$((checks + 1))
  [ "$want" -gt 0 ] && [ "$got" -eq "$want" ] ||
    { echo "FAIL: bsp's timeline holds $got intervals of the $want in the window"; failures=$((failures + 1)); }
  OUT=$(grep -c 'seed2,' <<< "$blocks")
  expect_output "0" "the timelines hold no row of a run they do not draw"
  OUT=$(cat "$TMP/seeds-out/report.md")
  expect_output "![accuracy](accuracy.png)" "report.md shows the plots"
fi
expect_status 2 "a window that ends before it starts" -- "$SW" report "$TMP/bsp.jsonl" \
  -o "$TMP/w" --window 5:1
expect_output "START < END" "says what a window is"

# A directory whose name has a quote and a space: no shell and no gnuplot string breaks on it.
expect_status 0 "report into a directory named with a quote" -- "$SW" report "$TMP/bsp.jsonl" \
  -o "$TMP/it's report"
checks=$((checks + 1))
[ -s "$TMP/it's report/evals.csv" ] || { echo "FAIL: no CSV in a quoted directory"; failures=$((failures + 1)); }
if command -v gnuplot >/dev/null; then
  checks=$((checks + 1))
  [ -s "$TMP/it's report/accuracy.png" ] ||
    { echo "FAIL: no plot in a quoted directory"; failures=$((failures + 1)); }
fi

# Runs without evaluations (--no-model) have no accuracy or loss to draw, and more runs than
# the report once named (64) still give every policy its plots.
"$SW" compare -q --policies "bsp;asp;ssp:s=1;ssp:s=2;ssp:s=3;ssp:s=4" --seeds 11 \
  --workers 4 --no-model --max-time 50 --log-dir "$TMP/many" > /dev/null
expect_status 0 "report of 66 runs without evaluations" -- "$SW" report -q "$TMP/many"/*.jsonl \
  -o "$TMP/many-report"
OUT=$(cat "$TMP/many-report/report.md")
expect_output "# syncwise report: 66 runs" "every run is in the report"
expect_output "No run reached the target" "and that none reached a target, naming no fastest"
if command -v gnuplot >/dev/null; then
  expect_output "Workers over time: ssp:s=4" "the last policy of 66 runs has its timeline"
  expect_no_output "![accuracy]" "no accuracy plot without evaluations"
fi

# A regression task has a loss and no accuracy: its log says so, no accuracy is plotted or
# tabled for it, and a target accuracy is refused (it could never be met). A run cut before its
# first apply still renders (gnuplot refused a plot of no points).
"$SW" sim --policy asp --workers 3 --data synthetic:task=lsq,d=8,n=1000 --model softmax \
  --max-time 300 --eval-every 10 --log "$TMP/lsq.jsonl" -q >/dev/null
"$SW" sim --policy bsp --workers 3 --data synthetic:task=lsq,d=8,n=1000 --model softmax \
  --max-time 1 --log "$TMP/lsq-short.jsonl" -q >/dev/null
OUT=$(head -1 "$TMP/lsq.jsonl")
expect_output '"task":"regress"' "a regression run's start line says so"
expect_status 0 "report of regression runs" -- "$SW" report -q "$TMP/lsq.jsonl" \
  "$TMP/lsq-short.jsonl" -o "$TMP/lsq-out"
OUT=$(awk -F, 'NR > 1 && $6 != ""' "$TMP/lsq-out/evals.csv" | wc -l)
expect_output "0" "evals.csv leaves a regression run's accuracy empty"
OUT=$(($(wc -l < "$TMP/lsq-out/accuracy_mean.csv") - 1))
expect_output "0" "and averages no accuracy for it"
if command -v gnuplot >/dev/null; then
  checks=$((checks + 2))
  [ ! -e "$TMP/lsq-out/accuracy.png" ] || { echo "FAIL: an accuracy plot for regression"; failures=$((failures + 1)); }
  [ -s "$TMP/lsq-out/loss.png" ] || { echo "FAIL: no loss plot for regression"; failures=$((failures + 1)); }
fi
expect_status 2 "a target accuracy on regression runs" -- "$SW" report "$TMP/lsq.jsonl" \
  -o "$TMP/lsq-out2" --target-acc 0.5
expect_output "regression task, which has no accuracy" "says why"
# Beside a classification run of the same policy, the accuracy legend counts only that one.
"$SW" sim --policy asp --workers 3 --data synthetic:task=logistic,d=8,n=1000 --model softmax \
  --max-time 300 \
  --eval-every 10 --log "$TMP/asp-class.jsonl" -q >/dev/null
expect_status 0 "report of a policy's regression and classification runs" -- "$SW" report -q \
  "$TMP/lsq.jsonl" "$TMP/asp-class.jsonl" -o "$TMP/mixed-out"
OUT=$(cat "$TMP/mixed-out/plots.gp")
expect_output "asp (1 run)" "the accuracy legend counts the runs that have an accuracy"

# Without gnuplot the CSV files are still written, and the command says how to get the plots.
expect_status 0 "report without gnuplot" -- env PATH=/nonexistent "$SW" report "$TMP/bsp.jsonl" -o "$TMP/nognu"
expect_output "apt-get install gnuplot-nox" "says how to install gnuplot"
checks=$((checks + 1)); [ -s "$TMP/nognu/evals.csv" ] || { echo "FAIL: no CSV without gnuplot"; failures=$((failures + 1)); }

head -5 "$TMP/bsp.jsonl" > "$TMP/bad.jsonl"
echo '{"t":3,"ev":"push","w":1,' >> "$TMP/bad.jsonl"
expect_status 1 "a bad line" -- "$SW" report "$TMP/bad.jsonl" -o "$TMP/out2"
expect_output "bad.jsonl:6: column" "names the file, line and column"
echo '{"w":1}' > "$TMP/noev.jsonl"
expect_status 1 "a line without an event" -- "$SW" report "$TMP/noev.jsonl" -o "$TMP/out2"
expect_output "noev.jsonl:1" "names the line"
expect_status 1 "a missing log" -- "$SW" report "$TMP/none.jsonl" -o "$TMP/out2"
expect_status 2 "no output directory" -- "$SW" report "$TMP/bsp.jsonl"
# A log given twice would count its runs twice; files with nothing in them report nothing.
expect_status 2 "one log twice" -- "$SW" report "$TMP/bsp.jsonl" "$TMP/./bsp.jsonl" -o "$TMP/out3"
expect_output "are one file" "says which"
cp "$TMP/bsp.jsonl" "$TMP/bsp-copy.jsonl"
expect_status 2 "a copy of a log" -- "$SW" report "$TMP/bsp.jsonl" "$TMP/bsp-copy.jsonl" -o "$TMP/out3"
expect_output "hold the same bytes" "says which"
mkdir -p "$TMP/inplace"
"$SW" zipline --workers 5 --R 6 --trace "$TMP/inplace/zipline.csv" > /dev/null
expect_status 2 "a trace named as the report's own table, in the report's directory" -- \
  "$SW" report "$TMP/inplace/zipline.csv" -o "$TMP/inplace"
expect_output "the report's own zipline.csv" "says why"
OUT=$(($(wc -l < "$TMP/inplace/zipline.csv")))
checks=$((checks + 1))
[ "$OUT" -gt 1 ] || { echo "FAIL: the trace was overwritten"; failures=$((failures + 1)); }
for row in "2" "3,nan" "4,1e400" "5,-7" "x,1" "6,0x10"; do # a trace row zipline never writes
  printf 'candidate,d\n1,5.5\n%s\n' "$row" > "$TMP/bad-row.csv"
  expect_status 1 "a trace row '$row'" -- "$SW" report "$TMP/bad-row.csv" -o "$TMP/out3"
  expect_output "bad-row.csv:3:" "names the line of '$row'"
done
# A refused report leaves its directory as it was; no output replaces an input (a log named
# as one of the plots).
"$SW" report -q "$TMP/bsp.jsonl" -o "$TMP/kept" > /dev/null
before=$(cat "$TMP/kept/runs.csv")
expect_status 1 "a report refused midway" -- "$SW" report "$TMP/bsp.jsonl" "$TMP/bad-row.csv" \
  -o "$TMP/kept"
OUT=$(cat "$TMP/kept/runs.csv")
expect_output "$before" "the directory's tables are as they were"
OUT=$(ls -A "$TMP/kept" | grep -c '^\.report' || true)
expect_output "0" "and no working directory is left"
if command -v gnuplot >/dev/null; then
  cp "$TMP/backup.jsonl" "$TMP/kept/accuracy.svg"
  expect_status 2 "an input named as one of the plots" -- "$SW" report "$TMP/bsp.jsonl" \
    "$TMP/kept/accuracy.svg" -o "$TMP/kept"
  OUT=$(head -c 20 "$TMP/kept/accuracy.svg")
  expect_output '{"t":0,"ev":"start"' "the input is as it was"
fi
printf 'worker,seconds\n0,1.5\n1,2.5\n' > "$TMP/cluster-trace.csv"
expect_status 1 "a cluster trace taken for a search trace" -- "$SW" report \
  "$TMP/cluster-trace.csv" -o "$TMP/out3"
expect_output "begins with the line 'candidate,d'" "is refused, saying what a trace holds"
printf 'candidate,d\n' > "$TMP/header-only.csv"
expect_status 1 "a trace of no rows" -- "$SW" report "$TMP/header-only.csv" -o "$TMP/out3"
expect_output "nothing to report" "says so"
head -1 "$TMP/bsp.jsonl" > "$TMP/start-only.jsonl"
expect_status 1 "a log of its start line alone" -- "$SW" report "$TMP/start-only.jsonl" \
  -o "$TMP/out4"
expect_output "runs in which no time passed" "says there is nothing to plot"
# Two logs of one name from two experiments: two runs, told apart, and a warning that their
# settings differ.
mkdir -p "$TMP/exp1" "$TMP/exp2"
"$SW" sim --policy bsp --no-model --max-time 50 --log "$TMP/exp1/bsp-seed1.jsonl" -q >/dev/null
"$SW" sim --policy bsp --no-model --max-time 50 --workers 4 --log "$TMP/exp2/bsp-seed1.jsonl" \
  -q >/dev/null
expect_status 0 "a report of two experiments' runs" -- "$SW" report -q \
  "$TMP/exp1/bsp-seed1.jsonl" "$TMP/exp2/bsp-seed1.jsonl" -o "$TMP/out-mixed"
expect_output "differ in their workers ('10' and '4'): their times do not compare" "warns"
# Runs to targets of their own differ unless --target-acc gives one.
"$SW" sim -q --data synthetic:task=logistic,d=6,n=300 --model softmax --max-time 50 \
  --target-acc 0.7 --log "$TMP/t07.jsonl" >/dev/null
"$SW" sim -q --data synthetic:task=logistic,d=6,n=300 --model softmax --max-time 50 \
  --target-acc 0.8 --log "$TMP/t08.jsonl" >/dev/null
expect_status 0 "runs to two targets" -- "$SW" report -q "$TMP/t07.jsonl" "$TMP/t08.jsonl" \
  -o "$TMP/out-targets"
expect_output "differ in their target accuracy ('0.7' and '0.8')" "warns"
expect_status 0 "runs to two targets, one given" -- "$SW" report -q "$TMP/t07.jsonl" \
  "$TMP/t08.jsonl" -o "$TMP/out-targets2" --target-acc 0.75
expect_no_output "differ in" "no warning: one target judges both"
OUT=$(cut -d, -f1 "$TMP/out-mixed/runs.csv" | tr '\n' ' ')
expect_output "run bsp-seed1 bsp-seed1~2 " "each run has a name of its own"
OUT=$(cat "$TMP/out-mixed/report.md")
expect_output "**Warning: runs bsp-seed1 and bsp-seed1~2 differ" "report.md says so too"
# A comparison into a directory that holds an earlier one's logs says they would join its report.
"$SW" compare --policies "bsp" --seeds 1 --no-model --max-time 20 --log-dir "$TMP/reused" -q \
  >/dev/null
expect_status 0 "a second comparison into the same directory" -- "$SW" compare --policies asp \
  --seeds 2 --no-model --max-time 20 --log-dir "$TMP/reused" -q
expect_output "holds 1 log this comparison did not write" "warns of the earlier log"
# No output replaces a file another process writes (a running server's log: flock(1) holds the
# same lock here).
if command -v flock >/dev/null; then
  mkdir -p "$TMP/busy"
  echo '{"t":0}' > "$TMP/busy/runs.csv"
  flock "$TMP/busy/runs.csv" sleep 30 &
  holder=$!
  sleep 0.3
  expect_status 1 "a report over a file another process writes" -- "$SW" report -q \
    "$TMP/bsp.jsonl" -o "$TMP/busy"
  expect_output "another process writes it" "says why"
  expect_status 1 "a zipline trace over it" -- "$SW" zipline --workers 3 --R 3 \
    --trace "$TMP/busy/runs.csv"
  expect_output "another process writes it" "says why"
  OUT=$(cat "$TMP/busy/runs.csv")
  expect_output '{"t":0}' "the file is as it was"
  kill "$holder" 2>/dev/null
  wait "$holder" 2>/dev/null
fi
# A directory where the report puts a file of its own: refused before any file moves, so the
# report there stays the earlier one whole, never half of each.
mkdir -p "$TMP/in-the-way/runs.csv"
echo earlier > "$TMP/in-the-way/applies.csv"
expect_status 1 "a report where a directory has one of its names" -- "$SW" report -q \
  "$TMP/bsp.jsonl" -o "$TMP/in-the-way"
expect_output "is in the way of the report's own runs.csv" "says which"
OUT=$(cat "$TMP/in-the-way/applies.csv")
expect_output "earlier" "no file of the report was moved in"
# Runs that met their target at once (t = 0) are reported, as compare tabulates them.
"$SW" compare --policies "bsp;asp" --seeds 2 --data synthetic:task=logistic,d=8,n=1000 \
  --model softmax --target-acc 0.01 --log-dir "$TMP/at-once" -q >/dev/null
expect_status 0 "a report of runs that met their target at t = 0" -- "$SW" report -q \
  "$TMP"/at-once/*.jsonl -o "$TMP/out5"
expect_status 2 "a target accuracy of 0" -- "$SW" report "$TMP"/at-once/*.jsonl -o "$TMP/out6" \
  --target-acc 0
OUT=$(grep '^| `bsp`' "$TMP/out5/report.md")
expect_output "| 2/2 | 0.0 +- 0.0 |" "they reached it at 0 s"
# Seeds are whole numbers in the tidy tables, however large.
"$SW" sim -q --no-model --max-time 20 --seed 9007199254740992 --log "$TMP/seeded.jsonl" > /dev/null
"$SW" report -q "$TMP/seeded.jsonl" -o "$TMP/out8"
OUT=$(cat "$TMP/out8/runs.csv" "$TMP/out8/targets.csv")
expect_output ",9007199254740992," "the seed as the log has it"
# Runs that --max-applies stopped short of the target end early; they are not the fastest, and
# compare and report rank them alike: the share of runs that reached it first.
expect_status 0 "a comparison of runs cut short" -- "$SW" compare --policies "bsp;asp;ssp:s=1" \
  --seeds 2 --data synthetic:task=logistic,d=8,n=1000 --model softmax --lr 0.02 \
  --target-acc 0.8 --max-applies 25 --max-time 5000 --log-dir "$TMP/short" -q
expect_output "fastest: bsp, the best baseline" "compare names the policy that reached it"
expect_output "<=" "the speedup of runs cut short is a bound"
expect_status 0 "their report" -- "$SW" report -q "$TMP"/short/*.jsonl -o "$TMP/out7"
OUT=$(cat "$TMP/out7/report.md")
expect_output "**Fastest: \`bsp\`" "report names the same"
# A log cut short (a run killed, or still going) short of its target says nothing of its time:
# it is left out of the times to target, and the report says so.
head -n 60 "$TMP/short/asp-seed2.jsonl" > "$TMP/short-cut.jsonl"
expect_status 0 "a report with a log cut short" -- "$SW" report "$TMP/short/asp-seed1.jsonl" \
  "$TMP/short-cut.jsonl" "$TMP/short/bsp-seed1.jsonl" -o "$TMP/out9"
expect_output "1 run (short-cut) stops without an end line" "says which"
OUT=$(grep '^| `asp`' "$TMP/out9/report.md")
expect_output "| 0/1 |" "and counts only the finished run"
# Cut after the evaluation that met the run's own target (only the end line lost): it reached
# the target there, with --target-acc given or not.
head -n -1 "$TMP/short/bsp-seed1.jsonl" > "$TMP/bsp-cut.jsonl"
for given in "" "--target-acc 0.8"; do
  expect_status 0 "a report of a log cut after its target ${given:-(its own)}" -- "$SW" report \
    $given "$TMP/bsp-cut.jsonl" -o "$TMP/out9b"
  expect_no_output "without an end line" "${given:-its own target}: not said to stop short"
  OUT=$(grep '^| `bsp`' "$TMP/out9b/report.md")
  expect_output "| 1/1 |" "${given:-its own target}: it reached it"
done
# A policy whose spec holds a double quote and a backslash (a file's name): the tables and the
# plots still read it, as a label.
cp "$(dirname "$0")/../policies/rlp.swrl" "$TMP/q\"x.swrl"
mkdir -p "$TMP/b\\d"
"$SW" sim -q --policy "rlp:file=$TMP/b\\d/../q\"x.swrl" --no-model --workers 3 --max-time 50 \
  --log "$TMP/quoted.jsonl" > /dev/null
expect_status 0 "a report of a spec with a quote and a backslash" -- "$SW" report -q \
  "$TMP/quoted.jsonl" -o "$TMP/out10/"
expect_output "written to $TMP/out10/report.md" "one slash before report.md"
if command -v gnuplot > /dev/null; then
  expect_output "plots as SVG and PNG" "with its plots"
fi
# gnuplot failing costs the plots, not the tables.
mkdir -p "$TMP/badbin"
printf '#!/bin/sh\necho "broken on purpose" >&2\nexit 1\n' > "$TMP/badbin/gnuplot"
chmod +x "$TMP/badbin/gnuplot"
expect_status 0 "a report whose gnuplot fails" -- env PATH="$TMP/badbin:$PATH" "$SW" report -q \
  "$TMP/quoted.jsonl" -o "$TMP/out11"
expect_output "no plots:" "says so"
expect_output "(with CSV files; no plots)" "and says what it wrote"
checks=$((checks + 1))
[ -s "$TMP/out11/report.md" ] && [ -s "$TMP/out11/runs.csv" ] ||
  { echo "FAIL: the tables were lost with the plots"; failures=$((failures + 1)); }
# --baselines spells a policy as the logs do, whatever its label in the tables.
expect_status 0 "a baseline whose spec holds a quote and a backslash" -- "$SW" report -q \
  "$TMP/quoted.jsonl" -o "$TMP/out12" --baselines "rlp:file=$TMP/b\\d/../q\"x.swrl"
# A long spec given as a baseline several times (the labels' room was one per run).
long="$TMP/$(printf 'd%.0s' $(seq 150))"
mkdir -p "$long" && cp "$(dirname "$0")/../policies/rlp.swrl" "$long/p.swrl"
"$SW" sim -q --policy "rlp:file=$long/p.swrl" --no-model --workers 3 --max-time 20 \
  --log "$TMP/long.jsonl" > /dev/null 2>&1
expect_status 0 "a long baseline named three times" -- "$SW" report -q "$TMP/long.jsonl" \
  -o "$TMP/out12b" --baselines "rlp:file=$long/p.swrl;rlp:file=$long/p.swrl;rlp:file=$long/p.swrl"
# Two specs that differ only where the label changes them (" and ') stay two policies.
cp "$(dirname "$0")/../policies/rlp.swrl" "$TMP/q'x.swrl"
"$SW" sim -q --policy "rlp:file=$TMP/b\\d/../q'x.swrl" --no-model --workers 3 --max-time 50 \
  --seed 2 --log "$TMP/quoted2.jsonl" > /dev/null
expect_status 0 "a report of two specs of one label" -- "$SW" report "$TMP/quoted.jsonl" \
  "$TMP/quoted2.jsonl" -o "$TMP/out13" --baselines "rlp:file=$TMP/b\\d/../q'x.swrl"
expect_output "| 0/1 |" "each is a policy of one run"
expect_no_output "| 0/2 |" "not one of two"
expect_output "x.swrl ~2\`" "the second labelled apart"
OUT=$(grep -o 'timeline-[^)]*' "$TMP/out13/report.md")
expect_no_output "#" "its timeline's link holds no '#' (a URL's fragment)"
OUT=$(cut -d, -f2 "$TMP/out13/targets.csv" | sort -u | wc -l)
expect_output "3" "targets.csv has the two labels (and its header)"
# A '|' or a backtick in a spec (a file's name) stays in its cell of report.md's table.
cp "$(dirname "$0")/../policies/rlp.swrl" "$TMP/p|x.swrl"
cp "$(dirname "$0")/../policies/rlp.swrl" "$TMP/q\`y.swrl"
for spec in "rlp:file=$TMP/p|x.swrl" "rlp:file=$TMP/q\`y.swrl"; do
  "$SW" sim -q --policy "$spec" --no-model --workers 2 --max-time 20 \
    --log "$TMP/md-$(printf '%s' "$spec" | cksum | cut -d' ' -f1).jsonl" > /dev/null 2>&1
done
expect_status 0 "a report of specs with '|' and a backtick" -- "$SW" report -q "$TMP"/md-*.jsonl \
  -o "$TMP/out14"
checks=$((checks + 1)) # two rows of six cells: seven bars not escaped
rows=$(grep '^| `' "$TMP/out14/report.md" | sed 's/\\|//g')
[ "$(awk -F'|' 'NF == 8' <<< "$rows" | wc -l)" = 2 ] && [ "$(wc -l <<< "$rows")" = 2 ] ||
  { echo "FAIL: a '|' in a spec split its cell"; failures=$((failures + 1)); }
OUT=$(cat "$TMP/out14/report.md")
expect_output "\`\`rlp:file=$TMP/q\`y.swrl\`\`" "a backtick inside a longer fence"
# A newline in a policy spec (a file name's) or in a log's name is no row's end: each table's
# rows keep their header's fields (they split, and gnuplot drew no plot of any run).
sed '1s/"policy":"bsp"/"policy":"rlp:file=\/tmp\/a\\nb.swrl"/' "$TMP/bsp.jsonl" > "$TMP/nl.jsonl"
cp "$TMP/backup.jsonl" "$TMP/x
y.jsonl"
expect_status 0 "report of a spec and a file name with newlines" -- "$SW" report "$TMP/nl.jsonl" \
  "$TMP/x
y.jsonl" -o "$TMP/out-nl"
for name in runs applies timeline staleness targets; do
  OUT=$(awk -F, 'NR == 1 { n = NF } NF != n { bad++ } END { print bad + 0 }' "$TMP/out-nl/$name.csv")
  expect_output "0" "$name.csv: every row has its header's fields"
done

# A run whose policy was switched counts in the tables as the policy it started with, and the
# report says so, naming the last policy it switched to.
"$SW" sim --policy ssp:s=1 --workers 3 --no-model --max-time 300 -q --log "$TMP/switched.jsonl" \
  --events "switch:t=100,policy=dssp:lo=1,hi=3;switch:t=200,policy=bsp" > /dev/null
expect_status 0 "report of a run with switches" -- "$SW" report -q "$TMP/switched.jsonl" \
  -o "$TMP/out-switched"
OUT=$(cat "$TMP/out-switched/report.md")
expect_output "1 run (switched) switched policies (switched: 2 switches, the last to bsp)" \
  "report.md names the run and its switches"
finish
