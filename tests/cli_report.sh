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
expect_output "report of 3 runs and a zipline trace" "says what it read"
OUT=$(grep -c '^dssp,dssp:lo=1 hi=3,[0-9]*,running,' "$TMP/out/timeline.csv")
checks=$((checks + 1)); [ "$OUT" -gt 0 ] || { echo "FAIL: a policy with a comma breaks the CSV"; failures=$((failures + 1)); }
for f in runs:run,policy,workers,seed,model,events evals:run,policy,t,V,loss,acc \
         applies:run,policy,t,V,n timeline:run,policy,worker,state,start,end \
         staleness:run,policy,staleness,count,share zipline:trace,candidate,d; do
  name=${f%%:*} header=${f#*:}
  OUT=$(head -1 "$TMP/out/$name.csv")
  expect_output "$header" "$name.csv has its columns"
  rows=$(($(wc -l < "$TMP/out/$name.csv") - 1))
  checks=$((checks + 1)); [ "$rows" -gt 0 ] || { echo "FAIL: $name.csv has no rows"; failures=$((failures + 1)); }
done
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
  expect_output "Validation accuracy against virtual time" "the plot has its title"
  expect_output "virtual time (s)" "the plot labels its axis with units"
fi

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
finish
