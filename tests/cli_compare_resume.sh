#!/usr/bin/env bash
# compare --log-dir keeps each run's row as the run ends; --resume runs only the others, and the
# table it prints is the one an uninterrupted comparison prints.
. "$(dirname "$0")/lib.sh"

scenario=(--policies "bsp;asp;ssp:s=2" --workers 4 --data "synthetic:task=logistic,d=10,n=2000"
          --model softmax --lr 0.1 --target-acc 0.8 --max-time 3000)
table() { grep -v "runs in" <<< "$1"; } # the table alone, without progress or notes
rows_in() { # DIR LINES: waits (up to 10 s) until DIR/results.csv has LINES lines, header included
  for _ in $(seq 1000); do
    [ "$(cat "$1/results.csv" 2> /dev/null | wc -l)" -ge "$2" ] && break
    sleep 0.01
  done
}

expect_status 0 "an uninterrupted comparison" -- "$SW" compare "${scenario[@]}" --seeds 8 \
  --log-dir "$TMP/whole"
whole=$(table "$OUT")
OUT=$(cat "$TMP/whole/compare.scenario")
expect_output "--lr 0.1" "the scenario is recorded"
expect_no_output "--seeds" "without what may change on a resume"

# Killed once a few rows are in: those stay, and a resume runs the rest. Runs long enough to be
# caught between them (about 150 ms each, and short logs).
slow=(--policies "bsp;asp;ssp:s=2" --workers 4 --data synthetic:task=logistic,d=200,n=4000
      --model mlp:h=2,u=256 --batch 256 --max-time 100 --seeds 8)
expect_status 0 "an uninterrupted slow comparison" -- "$SW" compare "${slow[@]}" \
  --log-dir "$TMP/slow"
slow_whole=$(table "$OUT")
"$SW" compare "${slow[@]}" --jobs 1 --log-dir "$TMP/cut" -q > /dev/null 2>&1 &
pid=$!
rows_in "$TMP/cut" 4
kill -KILL "$pid"
wait "$pid" 2> /dev/null
kept=$(($(cat "$TMP/cut/results.csv" 2> /dev/null | wc -l) - 1))
checks=$((checks + 1))
[ "$kept" -ge 3 ] && [ "$kept" -lt 24 ] ||
  { echo "FAIL: killed with $kept of 24 rows written (wanted some, not all)"; failures=$((failures + 1)); }
expect_status 0 "the resume" -- "$SW" compare "${slow[@]}" --log-dir "$TMP/cut" --resume
expect_output "$kept of the 24 runs were done: $((24 - kept)) to run" "it says what it keeps"
checks=$((checks + 1))
[ "$(table "$OUT" | grep -v "runs were done")" = "$slow_whole" ] ||
  { echo "FAIL: the resumed table differs from the uninterrupted one"; failures=$((failures + 1)); }
checks=$((checks + 1))
diff <(cut -d, -f1-11 "$TMP/slow/results.csv") <(cut -d, -f1-11 "$TMP/cut/results.csv") ||
  { echo "FAIL: results.csv differs beyond the real time spent deciding"; failures=$((failures + 1)); }
# Ctrl-C: the run under way ends, no other starts, and the command says how to go on.
"$SW" compare "${slow[@]}" --jobs 1 --log-dir "$TMP/int" > "$TMP/int.out" 2>&1 &
pid=$!
rows_in "$TMP/int" 2
kill -INT "$pid"
expect_exit "$pid" "a comparison stopped by a signal" 1
OUT=$(cat "$TMP/int.out")
expect_output "stopped by a signal after " "says it stopped"
expect_output "the same command with --resume goes on from the runs done" "and how to go on"
expect_no_output "fastest:" "prints no half table"
expect_status 0 "the resume after a signal" -- "$SW" compare "${slow[@]}" --log-dir "$TMP/int" \
  --resume
checks=$((checks + 1))
[ "$(table "$OUT" | grep -v "runs were done")" = "$slow_whole" ] ||
  { echo "FAIL: the table resumed after a signal differs"; failures=$((failures + 1)); }
# The same from a comparison cut after any of its rows (the file as a kill leaves it).
for rows in 1 7 23; do
  mkdir -p "$TMP/cut$rows"
  cp "$TMP/whole/compare.scenario" "$TMP"/whole/*.jsonl "$TMP/cut$rows/"
  head -n $((rows + 1)) "$TMP/whole/results.csv" > "$TMP/cut$rows/results.csv"
  expect_status 0 "a resume of $rows rows" -- "$SW" compare "${scenario[@]}" --seeds 8 \
    --log-dir "$TMP/cut$rows" --resume
  checks=$((checks + 1))
  [ "$(table "$OUT" | grep -v "runs were done")" = "$whole" ] ||
    { echo "FAIL: resumed from $rows rows, the table differs"; failures=$((failures + 1)); }
done

# A row cut short by a crash is not a run: that run is run again.
head -c -20 "$TMP/whole/results.csv" > "$TMP/torn.csv"
mv "$TMP/torn.csv" "$TMP/whole/results.csv"
expect_status 0 "a resume after a torn row" -- "$SW" compare "${scenario[@]}" --seeds 8 \
  --log-dir "$TMP/whole" --resume
expect_output "23 of the 24 runs were done: 1 to run" "the torn row's run runs again"
# A kept row whose log is gone stays (rows may be kept without their logs, bench/adaptive.sh),
# and the resume says that report DIR/*.jsonl would not count it.
rm "$TMP/whole/asp-seed3.jsonl"
expect_status 0 "a resume after a log was removed" -- "$SW" compare "${scenario[@]}" --seeds 8 \
  --log-dir "$TMP/whole" --resume
expect_output "1 run results.csv keeps has no log in $TMP/whole (removed, or kept from another sitting): the table counts it, report $TMP/whole/*.jsonl would not" \
  "says that run's log is gone"
expect_output "24 of the 24 runs were done: 0 to run" "and keeps its row"
checks=$((checks + 1))
[ "$(table "$OUT" | grep -v "runs were done\|no log in")" = "$whole" ] ||
  { echo "FAIL: the table after a removed log differs"; failures=$((failures + 1)); }

# More seeds extend it; fewer keep the other rows at the end of results.csv, out of the table.
expect_status 0 "more seeds" -- "$SW" compare "${scenario[@]}" --seeds 9 --log-dir "$TMP/whole" \
  --resume -q
expect_output "9/9" "the table covers nine seeds"
expect_status 0 "fewer seeds" -- "$SW" compare "${scenario[@]}" --seeds 2 --log-dir "$TMP/whole" \
  --resume -q
expect_output "2/2" "the table covers two seeds"
expect_output "holds 21 rows of runs outside this comparison" "it says what it leaves out"
OUT=$(wc -l < "$TMP/whole/results.csv")
expect_output "28" "and keeps them"
# A policy spec with a double quote (a file's name) is one CSV field, quoted as CSV quotes.
cp "$(dirname "$0")/../policies/rlp.swrl" "$TMP/q\"x.swrl"
quoted=(--policies "rlp:file=$TMP/q\"x.swrl;asp" --workers 4 --no-model --max-time 200)
"$SW" compare "${quoted[@]}" --seeds 2 --log-dir "$TMP/quoted" -q > /dev/null 2>&1
OUT=$(cat "$TMP/quoted/results.csv")
expect_output "\"rlp:file=$TMP/q\"\"x.swrl\",2," "the quote doubled"
checks=$((checks + 1)) # a run with no model has no loss nor accuracy: empty, read back below
grep -q '^"asp",2,0,[^,]*,[^,]*,[0-9]*,[0-9]*,0,[^,]*,,,[^,]*,$' "$TMP/quoted/results.csv" ||
  { echo "FAIL: a run with no model has a loss or an accuracy in results.csv"; failures=$((failures + 1)); }
expect_status 0 "its resume" -- "$SW" compare "${quoted[@]}" --seeds 3 --log-dir "$TMP/quoted" \
  --resume
expect_output "4 of the 6 runs were done" "reads its rows back"
# The order of the options and their spelling do not matter (a number's either: .8 is 0.8);
# their values do.
expect_status 0 "another order" -- "$SW" compare --max-time=3e3 --seeds 9 \
  --target-acc .80 --lr 0.1 --model softmax --data "synthetic:task=logistic,d=10,n=2000" \
  --workers 4 --policies "bsp;asp;ssp:s=2" --log-dir "$TMP/whole" --resume
expect_output "27 of the 27 runs were done: 0 to run" "is the same scenario"
# A record an earlier version kept spells numbers as they were given: it is read as this one
# spells them.
cp -r "$TMP/whole" "$TMP/older"
sed -i 's/^--lr 0.1$/--lr .10/; s/^--max-time 3000$/--max-time 3e3/' "$TMP/older/compare.scenario"
expect_status 0 "a record in an earlier version's spelling" -- "$SW" compare "${scenario[@]}" \
  --seeds 8 --log-dir "$TMP/older" --resume
expect_output "24 of the 24 runs were done: 0 to run" "is the same scenario"
expect_status 2 "another scenario" -- "$SW" compare "${scenario[@]}" --seeds 8 --lr 0.2 \
  --log-dir "$TMP/whole" --resume
expect_output "holds another scenario" "is refused"
expect_output "--lr 0.2" "showing both"
# A record holding a line this version never writes (another tool's, a newer option), or one
# option twice, is a record this version cannot read (a damaged file: 1), not passed over unread
# with the rows kept as this one's, and not called another scenario.
for odd in "--future-option 5" "not an option line" "--workers 7"; do
  cp -r "$TMP/whole" "$TMP/odd"
  echo "$odd" >> "$TMP/odd/compare.scenario"
  expect_status 1 "a record with the line '$odd'" -- "$SW" compare "${scenario[@]}" --seeds 8 \
    --log-dir "$TMP/odd" --resume
  expect_output "is no comparison's record this version reads" "is refused"
  rm -rf "$TMP/odd"
done
# Nor is one with a NUL (read as text up to it, the rest was passed over) or only blanks.
for odd in nul-after nul-within blank; do
  cp -r "$TMP/whole" "$TMP/odd"
  case $odd in
    nul-after) printf '\0\1\2junk' >> "$TMP/odd/compare.scenario" ;;
    nul-within) sed -i '1s/$/\x00junk/' "$TMP/odd/compare.scenario" ;;
    blank) printf '\n\n\n' > "$TMP/odd/compare.scenario" ;;
  esac
  expect_status 1 "a record $odd" -- "$SW" compare "${scenario[@]}" --seeds 8 \
    --log-dir "$TMP/odd" --resume
  expect_output "is no comparison's record this version reads" "is refused as damage"
  rm -rf "$TMP/odd"
done
# A comparison killed before it wrote anything (while its data loaded) resumes as a fresh one;
# rows without the scenario they ran under are refused.
expect_status 0 "nothing to resume" -- "$SW" compare "${scenario[@]}" --seeds 2 \
  --log-dir "$TMP/none" --resume
expect_output "holds no comparison yet: every run runs" "runs everything"
rm "$TMP/none/compare.scenario"
expect_status 2 "rows of no known scenario" -- "$SW" compare "${scenario[@]}" --seeds 2 \
  --log-dir "$TMP/none" --resume
expect_output "no comparison to resume there" "is refused"
# A record that is there but cannot be read is damage (1), not a command line's mistake.
mkdir "$TMP/none/compare.scenario"
expect_status 1 "a record that is a directory" -- "$SW" compare "${scenario[@]}" --seeds 2 \
  --log-dir "$TMP/none" --resume
expect_output "record cannot be read" "says so"
rmdir "$TMP/none/compare.scenario"
ln -s "$TMP/nowhere" "$TMP/none/compare.scenario"
expect_status 1 "a record that is a dangling link" -- "$SW" compare "${scenario[@]}" --seeds 2 \
  --log-dir "$TMP/none" --resume
expect_output "record cannot be read" "is damage too"
rm "$TMP/none/compare.scenario"
# Run again without --resume, a comparison keeps the earlier one's rows aside, not lost.
cp "$TMP/cut1/results.csv" "$TMP/cut1.rows"
expect_status 0 "a comparison run again without --resume" -- "$SW" compare "${scenario[@]}" \
  --seeds 2 --log-dir "$TMP/cut1"
expect_output "kept as $TMP/cut1/results.csv.prev" "says where"
checks=$((checks + 1))
cmp -s "$TMP/cut1.rows" "$TMP/cut1/results.csv.prev" ||
  { echo "FAIL: the earlier rows were not kept"; failures=$((failures + 1)); }
# Rows written on another system (CRLF) read as well; a line that is no row is said, and its
# run runs again.
sed 's/$/\r/' "$TMP/cut7/results.csv" > "$TMP/crlf.csv"
sed -i '3s/.*/"bsp",2,1,not-a-number\r/' "$TMP/crlf.csv"
mv "$TMP/crlf.csv" "$TMP/cut7/results.csv"
expect_status 0 "a resume of CRLF rows, one spoilt" -- "$SW" compare "${scenario[@]}" --seeds 8 \
  --log-dir "$TMP/cut7" --resume
expect_output "1 lines of results.csv are no row this version reads" "says so"
expect_output "23 of the 24 runs were done" "and reads the others"
# The zeros a crash can leave at the end of an appended file are no row either.
printf '\0\0\0\0\0\0\0\0\n\0\0\0' >> "$TMP/cut7/results.csv"
expect_status 0 "a resume of rows followed by zeros" -- "$SW" compare "${scenario[@]}" --seeds 8 \
  --log-dir "$TMP/cut7" --resume
expect_output "24 of the 24 runs were done" "reads the rows before them"
# Numbers only as the table writes them ("0x10" was read as 16, a time to target after the
# run's end was counted), and a blank line is no lost run.
sed -i '2s/^\("[^"]*"\),\([0-9]*\),1,[^,]*,\([^,]*\),/\1,\2,1,0x10,\3,/' "$TMP/cut7/results.csv"
sed -i '3s/^\("[^"]*"\),\([0-9]*\),\([01]\),[^,]*,\([^,]*\),/\1,\2,\3,+\4,\4,/' "$TMP/cut7/results.csv"
awk -F, 'NR == 4 { $4 = $5 + 1 } 1' OFS=, "$TMP/cut7/results.csv" > "$TMP/late.csv"
mv "$TMP/late.csv" "$TMP/cut7/results.csv"
echo >> "$TMP/cut7/results.csv"
expect_status 0 "a resume of rows with hex, '+' and a target after the end" -- "$SW" compare \
  "${scenario[@]}" --seeds 8 --log-dir "$TMP/cut7" --resume
expect_output "3 lines of results.csv are no row this version reads" "says so, blank line aside"
expect_output "21 of the 24 runs were done" "and runs those three again"
# A run that reached a target in a comparison that set none was never this scenario's.
notarget=(--policies bsp --no-model --workers 3 --max-time 30 --seeds 2 --log-dir "$TMP/notarget")
expect_status 0 "a comparison without a target" -- "$SW" compare "${notarget[@]}"
sed -i '2s/^\("[^"]*"\),\([0-9]*\),0,/\1,\2,1,/' "$TMP/notarget/results.csv"
expect_status 0 "its resume, one row saying it reached the target" -- "$SW" compare \
  "${notarget[@]}" --resume
expect_output "1 lines of results.csv are no row this version reads" "says so"
expect_output "1 of the 2 runs were done" "and runs it again"
# A row written twice over is one run; two different rows for one run are no table compare
# wrote, and which to believe is the user's call (the last was taken silently).
sed -n 2p "$TMP/notarget/results.csv" >> "$TMP/notarget/results.csv"
expect_status 0 "a resume with a row written twice" -- "$SW" compare "${notarget[@]}" --resume
expect_output "2 of the 2 runs were done" "counts it once"
OUT=$(wc -l < "$TMP/notarget/results.csv")
expect_output "3" "and keeps it once"
sed -n 2p "$TMP/notarget/results.csv" | sed 's/^\("[^"]*"\),\([0-9]*\),\([01]\),[^,]*,/\1,\2,\3,0,/' \
  >> "$TMP/notarget/results.csv"
expect_status 1 "a resume with two different rows for one run" -- "$SW" compare \
  "${notarget[@]}" --resume
expect_output "lines 2 and 4 give different results for policy \"bsp\"" "names both lines"
# One comparison a directory: a second one while it runs is refused before it writes anything.
"$SW" compare "${slow[@]}" --jobs 1 --log-dir "$TMP/busy" -q > /dev/null 2>&1 &
pid=$!
for _ in $(seq 500); do [ -s "$TMP/busy/compare.scenario" ] && break; sleep 0.01; done
expect_status 1 "a second comparison in a busy directory" -- "$SW" compare "${scenario[@]}" \
  --seeds 2 --log-dir "$TMP/busy"
expect_output "another comparison is running there" "is refused"
kill "$pid"
wait "$pid" 2> /dev/null
OUT=$(cat "$TMP/busy/compare.scenario")
expect_output "--max-time 100" "the running comparison's scenario stays"
expect_status 2 "--resume without --log-dir" -- "$SW" compare "${scenario[@]}" --resume
expect_output "--resume needs --log-dir" "says what it needs"

# A file the runs read (a trace here; a policy's file=, the data's train=) that changed since the
# comparison began: its kept rows would be tabled with runs of the new one, so --resume is
# refused, naming it; given back as it was, the resume goes on.
printf '0,1.0\n0,1.5\n1,4.0\n1,3.0\n' > "$TMP/trace.csv"
traced=(--policies "bsp;asp" --workers 2 --no-model --cluster "trace:$TMP/trace.csv" --max-time 200)
expect_status 0 "a comparison on a trace" -- "$SW" compare "${traced[@]}" --seeds 2 \
  --log-dir "$TMP/traced"
cp "$TMP/trace.csv" "$TMP/trace.kept"
printf '0,1.0\n0,1.5\n1,9.0\n1,8.0\n' > "$TMP/trace.csv"
expect_status 2 "a resume over a changed trace" -- "$SW" compare "${traced[@]}" --seeds 3 \
  --log-dir "$TMP/traced" --resume
expect_output "trace.csv changed since the comparison" "names the file"
cp "$TMP/trace.kept" "$TMP/trace.csv"
expect_status 0 "a resume with the trace given back" -- "$SW" compare "${traced[@]}" --seeds 3 \
  --log-dir "$TMP/traced" --resume
expect_output "4 of the 6 runs were done" "keeps the rows of the same trace"

# Two learned policies of one size: a .swrl file ends with the CRC-32 of what precedes it, so the
# CRC-32 of every such file is one constant and the record took one for the other; a policy's
# high= file is recorded as its file= is.
POLICIES=$(cd "$(dirname "$0")/../policies" && pwd)
cp "$POLICIES/rlp-family-waiting-pre.swrl" "$TMP/pol.swrl"
cp "$POLICIES/rlp-family-waiting-pre.swrl" "$TMP/high.swrl"
learned=(--policies "rlp:file=$TMP/pol.swrl,high=$TMP/high.swrl" --momentum 0.9 --workers 4
         --no-model --max-time 100)
expect_status 0 "a comparison of a learned policy" -- "$SW" compare "${learned[@]}" --seeds 2 \
  --log-dir "$TMP/learned"
cp "$POLICIES/rlp-family-m9-waiting-pre.swrl" "$TMP/pol.swrl" # another policy, as long
expect_status 2 "a resume over another policy file of the same size" -- "$SW" compare \
  "${learned[@]}" --seeds 3 --log-dir "$TMP/learned" --resume
expect_output "pol.swrl changed since the comparison" "names the policy file"
cp "$POLICIES/rlp-family-waiting-pre.swrl" "$TMP/pol.swrl"
cp "$POLICIES/rlp-family-m9-waiting-pre.swrl" "$TMP/high.swrl"
expect_status 2 "a resume over another high= file" -- "$SW" compare "${learned[@]}" --seeds 3 \
  --log-dir "$TMP/learned" --resume
expect_output "high.swrl changed since the comparison" "names the high= file"
cp "$POLICIES/rlp-family-waiting-pre.swrl" "$TMP/high.swrl"
# A record an earlier version wrote (CRC-32, no "c:") is read as such: a trace unchanged resumes,
# changed is refused; of a policy file, whose CRC-32 is the one constant, it vouches for nothing.
old_record() { # DIR: its compare.files as an earlier version wrote it
  /usr/bin/python3 - "$1/compare.files" <<'PY'
import sys, zlib
path = sys.argv[1]
lines = []
for line in open(path):
    crc, size, name = line.rstrip("\n").split(" ", 2)
    lines.append("%08x %s %s\n" % (zlib.crc32(open(name, "rb").read()), size, name))
open(path, "w").write("".join(lines))
PY
}
old_record "$TMP/traced"
expect_status 0 "a resume over an older version's record" -- "$SW" compare "${traced[@]}" \
  --seeds 4 --log-dir "$TMP/traced" --resume
expect_output "6 of the 8 runs were done" "keeps the rows the older record vouches for"
OUT=$(cat "$TMP/traced/compare.files")
expect_output "c:" "the record is written anew in CRC-32C"
old_record "$TMP/traced"
printf '0,1.0\n0,1.5\n1,9.0\n1,8.0\n' > "$TMP/trace.csv"
expect_status 2 "a resume over a changed trace, an older record" -- "$SW" compare "${traced[@]}" \
  --seeds 4 --log-dir "$TMP/traced" --resume
expect_output "trace.csv changed since the comparison" "the older record's CRC-32 tells"
old_record "$TMP/learned"
expect_status 2 "a resume over a policy file an older record holds" -- "$SW" compare \
  "${learned[@]}" --seeds 3 --log-dir "$TMP/learned" --resume
expect_output "cannot tell whether the file changed" "says the older record cannot vouch for it"
finish
