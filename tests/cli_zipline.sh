#!/usr/bin/env bash
# The zipline command: synthetic and CSV input, every algorithm's agreement, the trace, errors.
. "$(dirname "$0")/lib.sh"

expect_status 0 "help" -- "$SW" zipline --help
expect_output "--trace FILE" "help lists --trace"
expect_status 0 "synthetic, all algorithms" -- "$SW" zipline --workers 6 --R 4 --seed 3
expect_output "naive" "naive runs on a small problem"
expect_output "steps before the barrier" "prints each worker's steps"
# Every exact algorithm prints the same d* and barrier as naive search.
lines=$(printf '%s\n' "$OUT" | awk '$1 ~ /^(zipline|ziplineopt|ziplineoptbs|naive|sweep)$/ { print $2, $3 }' | sort -u | wc -l)
checks=$((checks + 1)); [ "$lines" -eq 1 ] || { echo "FAIL: exact algorithms disagree"; echo "$OUT"; failures=$((failures + 1)); }

# Worker 1's points at 10 and 12; worker 7's at 11 and 30; worker 3's at 12.5: the best set is
# {12, 11, 12.5} with d = 1.5 and the barrier at 12.5.
printf 'worker,time\n1,12\n7,11\n1,10\n3,12.5\n7,30\n' > "$TMP/push.csv"
expect_status 0 "CSV input" -- "$SW" zipline --input "$TMP/push.csv" --algo sweep --trace "$TMP/t.csv"
expect_output "3 workers, 5 points" "reads the rows"
expect_output "d* = 1.5" "finds d*"
expect_output "t_sync = 12.5" "finds the barrier"
expect_output "1:2 3:1 7:1" "names workers by their ids, steps from 1"
OUT=$(head -1 "$TMP/t.csv")
expect_output "candidate,d" "the trace has a header"
printf '1,2\n1,x\n' > "$TMP/bad.csv"
expect_status 1 "bad CSV" -- "$SW" zipline --input "$TMP/bad.csv"
expect_output "bad.csv: line 2" "names the file and line"
expect_status 2 "naive alone on a problem too large for it" -- "$SW" zipline --algo naive \
  --workers 10 --trace "$TMP/never.csv"
expect_output "about 10^11.8 combinations, over its limit" "it says why"
checks=$((checks + 1))
[ ! -e "$TMP/never.csv" ] ||
  { echo "FAIL: a refused search wrote a trace"; failures=$((failures + 1)); }
case "$OUT" in
  *candidates*) echo "FAIL: the refusal came after the table's header"; failures=$((failures + 1)) ;;
esac
# The ZipLines' Rn^2 scans have their limit too: at 10^5 workers they ran for minutes under
# --algo all; now skipped, saying why, while sweep answers.
expect_status 0 "all algorithms on 10^5 workers" -- timeout 60 "$SW" zipline --workers 100000
expect_output "(skipped: zipline over 100000 workers is up to 1.5e+11 steps" "zipline is skipped"
expect_output "(skipped: ziplineoptbs over 100000 workers" "and its variants"
expect_status 2 "ziplineopt alone past its limit" -- timeout 60 "$SW" zipline --workers 60000 \
  --algo ziplineopt
expect_output "over its limit of 5e+10: choose another algorithm (sweep)" "is refused, saying why"
expect_status 2 "ebsp refuses a naive search too large to answer" -- "$SW" sim --no-model \
  --workers 10 --max-time 100 --policy ebsp:algo=naive
expect_output "about 10^11.8 combinations" "and says how large"
expect_status 2 "however large" -- "$SW" sim --no-model --workers 10 --max-time 100 \
  --policy ebsp:algo=naive,R=150
expect_output "about 10^21.8 combinations" "without an infinity"
expect_status 2 "--input with the synthetic data's --workers" -- "$SW" zipline \
  --input "$TMP/push.csv" --workers 5
expect_output "gives the pushes instead" "is refused, not ignored"
expect_status 1 "missing CSV" -- "$SW" zipline --input "$TMP/none.csv"
for t in inf -3 1e999; do # a push time is a finite moment of the run
  printf 'worker,time\n0,1\n1,%s\n' "$t" > "$TMP/t.csv"
  expect_status 1 "a push time of $t" -- "$SW" zipline --input "$TMP/t.csv"
  expect_output "line 3: a time of" "names the line"
done
# Only a first line that starts with a letter is a header: a first row that does not parse is
# refused, not dropped, and a worker id past 32 bits is refused, not wrapped.
for row in '0,nan' '-1,1' '1099511627776,1'; do
  printf '%s\n0,2\n' "$row" > "$TMP/t.csv"
  expect_status 1 "a first row '$row'" -- "$SW" zipline --input "$TMP/t.csv"
  expect_output "line 1: expected 'worker,time'" "names the line"
done
printf '\xef\xbb\xbf 0 , 1 \n1,2\n' > "$TMP/t.csv" # a byte-order mark and spaces
expect_status 0 "a row with a byte-order mark and spaces" -- "$SW" zipline --input "$TMP/t.csv"
expect_output "2 workers, 2 points" "both rows are read"
expect_status 2 "unknown algorithm" -- "$SW" zipline --algo quick
expect_output "known: zipline" "lists the algorithms"
expect_status 2 "bad R" -- "$SW" zipline --R 0
finish
