#!/usr/bin/env bash
# `syncwise rl` end to end on small synthetic instances: train writes a policy file that the
# rlp policy and `rl eval` use; the shipped policy loads; damaged files and bad options are
# refused with a message.
. "$(dirname "$0")/lib.sh"

inst=(--data "synthetic:task=logistic,d=10,n=3000" --models "mlp:h=0|mlp:h=1,u=8"
      --workers 4 --target-acc 0.75 --lr 0.1 --max-pushes 3000)

expect_status 0 "rl help" -- "$SW" rl --help
expect_output "train" "rl help names train"
expect_status 0 "rl train help" -- "$SW" rl train --help
expect_output "--pre-instances" "train help lists pre-training"
expect_output "--gamma" "train help lists the DQN settings"

expect_status 0 "rl train" -- "$SW" rl train "${inst[@]}" --pre-instances 2 --episodes 3 \
  --save-every 2 --out "$TMP/p.swrl" --seed 5
expect_output "wrote $TMP/p.swrl" "train says what it wrote"
expect_output "episode 3/3" "train reports progress per episode"
expect_output "pre-training 10/10" "train reports pre-training (2 instances x 5 policies)"
expect_output "left in all" "the time left covers both phases"
checks=$((checks + 1)); [ -s "$TMP/p.swrl" ] || { echo "FAIL: no policy file"; failures=$((failures + 1)); }

# The same command and seed make the same policy, byte for byte (the shipped one depends on it).
mv "$TMP/p.swrl" "$TMP/first.swrl"
"$SW" rl train "${inst[@]}" --pre-instances 2 --episodes 3 --save-every 2 --out "$TMP/p.swrl" \
  --seed 5 > /dev/null 2>&1
checks=$((checks + 1))
cmp -s "$TMP/p.swrl" "$TMP/first.swrl" || { echo "FAIL: same seed, different policy"; failures=$((failures + 1)); }
# Started afresh over a trained policy (a forgotten --resume), a training is refused.
expect_status 1 "a training afresh over a policy file" -- "$SW" rl train "${inst[@]}" \
  --pre-instances 2 --episodes 3 --out "$TMP/p.swrl" --seed 5
expect_output "is not empty (an earlier training's policy?)" "says why"
checks=$((checks + 1))
cmp -s "$TMP/p.swrl" "$TMP/first.swrl" || { echo "FAIL: the refused training changed the file"; failures=$((failures + 1)); }
# A resume of a file that is not there leaves no FILE.lock behind.
expect_status 1 "a resume of a mistyped file" -- "$SW" rl train "${inst[@]}" \
  --pre-instances 2 --episodes 3 --out "$TMP/typo.swrl" --seed 5 --resume
checks=$((checks + 1))
[ ! -e "$TMP/typo.swrl.lock" ] || { echo "FAIL: the mistyped resume left its lock"; failures=$((failures + 1)); }

# A signal saves after the run under way and ends the training, which --resume goes on with
# (its episodes between saves were lost before).
"$SW" rl train "${inst[@]}" --pre-instances 1 --pre-policies asp --episodes 100000 \
  --save-every 100000 --out "$TMP/stopped.swrl" --seed 5 > "$TMP/stopped.out" 2>&1 &
pid=$!
for _ in $(seq 600); do grep -q "episode 2/" "$TMP/stopped.out" && break; sleep 0.05; done
kill -INT $pid
expect_exit "$pid" "a training stopped by a signal" 1
OUT=$(cat "$TMP/stopped.out")
expect_output "stopped by a signal after episode " "says where it stopped"
expect_output "the same command with --resume goes on" "and how to go on"
done_at=$(sed -n 's/.*stopped by a signal after episode \([0-9]*\),.*/\1/p' "$TMP/stopped.out")
expect_status 0 "the stopped training goes on" -- "$SW" rl train "${inst[@]}" --pre-instances 1 \
  --pre-policies asp --episodes $((done_at + 1)) --out "$TMP/stopped.swrl" --seed 5 --resume
expect_output "after 1 pre-training runs and $done_at episodes" "from where it stopped"

# --resume goes on from the last save: a training killed part way is not lost.
short=("${inst[@]}" --pre-instances 2 --seed 5)
expect_status 0 "a training done already" -- "$SW" rl train "${short[@]}" --episodes 3 \
  --save-every 2 --out "$TMP/p.swrl" --resume
expect_output "after 10 pre-training runs and 3 episodes" "says where it stood"
expect_output "nothing left to do" "and that nothing is left"
cp "$TMP/first.swrl" "$TMP/more.swrl"
expect_status 0 "more episodes after a finished training" -- "$SW" rl train "${short[@]}" \
  --episodes 5 --save-every 2 --out "$TMP/more.swrl" --resume
expect_output "episode 5/5" "it runs the episodes left, counted from the start"
expect_no_output "episode 3/5" "and none done already"
expect_output "wrote $TMP/more.swrl" "and writes the policy"
expect_status 0 "the longer training's file is a policy" -- "$SW" rl eval "${inst[@]}" \
  --policy "$TMP/more.swrl" --instances 1 --seeds 1 --baselines asp
expect_status 2 "a resume with other learning options" -- "$SW" rl train "${short[@]}" \
  --episodes 5 --out "$TMP/more.swrl" --resume --history 5
expect_output "another --history" "names the option"
# Pre-training comes before the episodes: once they began, more pre-training runs would regress
# the network on classic policies' returns in the middle of its Q-learning.
expect_status 2 "a resume that grows pre-training after episodes" -- "$SW" rl train \
  "${inst[@]}" --pre-instances 3 --seed 5 --episodes 6 --out "$TMP/more.swrl" --resume
expect_output "--pre-instances cannot grow now (give 2)" "is refused, saying what to give"
expect_no_output "pre-training 11/" "and runs nothing"
# The instances (models, clusters, limits...) are the training's too: a resume over others would
# mix two families in one policy.
expect_status 2 "a resume over other instances" -- "$SW" rl train "${short[@]}" --episodes 5 \
  --out "$TMP/more.swrl" --resume --max-pushes 250
expect_output "was begun with other options" "is refused"
expect_output "--max-pushes 250" "showing both"
# A value with a space or an apostrophe (a path) is quoted in the note, and read back whole.
mkdir -p "$TMP/it's a dir"
awk 'BEGIN { srand(3); for (i = 0; i < 600; i++) { a = rand() - 0.5; b = rand() - 0.5;
  printf "%.3f,%.3f,%d\n", a, b, (a + b > 0) } }' > "$TMP/it's a dir/t.csv"
spaced=(--pre-instances 1 --episodes 1 --max-pushes 200 --models softmax --seed 5
        --data "csv:train=$TMP/it's a dir/t.csv,label=last")
"$SW" rl train "${spaced[@]}" --out "$TMP/spaced.swrl" -q > /dev/null
expect_status 0 "a resume of a training whose data path has a space and an apostrophe" -- \
  "$SW" rl train "${spaced[@]}" --episodes 2 --out "$TMP/spaced.swrl" --resume
expect_output "resuming" "is the same training"
cp "$(dirname "$0")/../policies/rlp.swrl" "$TMP/old.swrl"
expect_status 1 "a resume of a file from before --resume" -- "$SW" rl train "${short[@]}" \
  --out "$TMP/old.swrl" --resume
expect_output "does not say how far its training came" "says why it cannot"
# Killed (SIGKILL) after its first saves in the episodes (a few of 1000: each takes
# milliseconds; with 200 the rest took 0.7 s, and a poll late by that on a busy machine found
# the training over), then resumed: it goes on from its last save to the end.
"$SW" rl train "${short[@]}" --episodes 1000 --save-every 1 --out "$TMP/killed.swrl" \
  > "$TMP/killed.out" 2>&1 &
pid=$!
for _ in $(seq 600); do grep -q "episode 2/1000" "$TMP/killed.out" && break; sleep 0.05; done
# A second training of the same file, while the first still writes it (held stopped), is refused.
kill -STOP $pid 2>/dev/null
expect_status 1 "two trainings of one file at once" -- "$SW" rl train "${short[@]}" \
  --episodes 1000 --save-every 1 --out "$TMP/killed.swrl" --resume
expect_output "another process writes it already" "says why"
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
expect_status 0 "a killed training resumes" -- "$SW" rl train "${short[@]}" --episodes 1000 \
  --save-every 1 --out "$TMP/killed.swrl" --resume
expect_output "resuming $TMP/killed.swrl after 10 pre-training runs" "from its last save"
expect_status 0 "and is whole after it" -- "$SW" rl train "${short[@]}" --episodes 1000 \
  --out "$TMP/killed.swrl" --resume
expect_output "after 10 pre-training runs and 1000 episodes" "every episode done"

expect_status 0 "rl eval" -- "$SW" rl eval "${inst[@]}" --policy "$TMP/p.swrl" --instances 2 \
  --seeds 1 --baselines bsp,asp,ssp:s=1 --csv "$TMP/runs.csv"
expect_output "speedup over best SSP (ssp:s=1)" "eval compares with the best SSP"
expect_output "rlp:file=$TMP/p.swrl" "eval lists the learned policy"
expect_status 0 "rl eval of one instance whose runs stop short" -- "$SW" rl eval "${inst[@]}" \
  --policy "$TMP/p.swrl" --instances 1 --seeds 1 --baselines asp --max-pushes 5
expect_output "speedup over asp                            -  (no run of either reached" \
  "gives no speedup where no run reached the target (a ratio of where they stopped was shown)"
expect_output "each instance's best over the best single  -  (no baseline's run reached" \
  "nor the baselines' headroom"
OUT=$(printf '%s\n' "$OUT" | grep '^all ')
expect_output "asp                  -           -           -" "nor the parts' speedups"
expect_status 2 "rl eval naming a baseline twice" -- "$SW" rl eval "${inst[@]}" --instances 1 \
  --baselines "bsp,asp,bsp"
expect_output "--baselines names 'bsp' twice" "is refused, as compare refuses it"
expect_status 0 "rl eval of two instances, one stopped short" -- "$SW" rl eval "${inst[@]}" \
  --instances 2 --seeds 1 --baselines asp --max-pushes 25
expect_output "(95% CI over 2 instances) (some runs missed the target" \
  "says the times of the runs that missed are not times to the target"
OUT=$(wc -l < "$TMP/runs.csv")
expect_output "9" "eval writes a CSV row per run (2 instances x 4 policies + header)"

expect_status 0 "rlp in the simulator" -- "$SW" sim --policy "rlp:file=$TMP/p.swrl" --workers 4 \
  --data "synthetic:task=logistic,d=10,n=3000" --model softmax --lr 0.1 --target-acc 0.75 \
  --max-pushes 3000
expect_output "policy rlp:file=" "sim runs the learned policy"
expect_output "loss probe" "sim reports the loss probe's share"

# The stretch layout: a policy that picks bsp, ssp:s=4 or asp per stretch, run as rlswitch (rl
# eval tells from the file); rlp and rlswitch each refuse the other's files, saying which to use.
expect_status 0 "rl train --features stretch" -- "$SW" rl train "${inst[@]}" --pre-instances 1 \
  --episodes 3 --features stretch --gamma 1 --learn-steps 3 --out "$TMP/s.swrl" --seed 5
expect_output "pre-training 3/3" "a stretch policy pre-trains on its three actions by default"
expect_status 0 "rl eval of a stretch policy" -- "$SW" rl eval "${inst[@]}" \
  --policy "$TMP/s.swrl" --instances 1 --seeds 1 --baselines asp
expect_output "rlswitch:file=$TMP/s.swrl" "eval runs a stretch policy as rlswitch"
expect_status 0 "rl eval of the shipped rlswitch" -- "$SW" rl eval "${inst[@]}" --policy rlswitch \
  --instances 1 --seeds 1 --baselines asp --max-pushes 300
# --pre-epochs: passes over all pre-training's records once its runs are done; a training resumed
# in its pre-training gathers the earlier runs' records again before the passes.
expect_status 0 "rl train --pre-epochs" -- "$SW" rl train "${inst[@]}" --pre-instances 1 \
  --episodes 0 --features stretch --gamma 1 --pre-epochs 20 --out "$TMP/e.swrl" --seed 5
expect_output "pass over pre-training's records 20/20" "the passes follow the runs"
expect_status 0 "rlswitch:choose=once of it" -- "$SW" sim --policy "rlswitch:file=$TMP/e.swrl,choose=once" \
  --workers 4 --data "synthetic:task=logistic,d=10,n=3000" --model softmax --lr 0.1 \
  --max-pushes 600 --log "$TMP/once.jsonl"
expect_status 0 "its log keeps rlswitch's promise" -- "$SW" check "$TMP/once.jsonl"
# rl eval of it, its pick random: each run is the run of the policy it picked, to the second
# (runs of a hundred steps per worker: choosing per stretch, such a pick would change ten times).
expect_status 0 "rl eval of rlswitch:choose=once" -- "$SW" rl eval "${inst[@]}" --lr 0.01 \
  --target-acc 0.9 --policy "rlswitch:file=$TMP/e.swrl,choose=once,eps=0.9" --instances 2 \
  --seeds 1 --baselines bsp,asp,ssp:s=4 --csv "$TMP/once.csv"
OUT=$(awk -F'"' 'NR > 1 { split($1, k, ","); split($5, v, ","); run = k[1] "," k[2]
                          if ($2 ~ /^rlswitch/) mine[run] = v[2] "," v[4]; else them[run] = them[run] " " v[2] "," v[4] }
                 END { for (r in mine) print (index(them[r] " ", " " mine[r] " ") ? "same" : "differs") }' "$TMP/once.csv" | sort -u)
expect_output "same" "each of its runs is a classic policy's"
expect_no_output "differs" "and none is another run"
expect_status 0 "a resumed pre-training with passes" -- "$SW" rl train "${inst[@]}" \
  --pre-instances 2 --episodes 0 --features stretch --gamma 1 --pre-epochs 20 --out "$TMP/e.swrl" \
  --seed 5 --resume
expect_output "gathering pre-training's records again 3/3" "gathers the runs done before"
expect_output "pre-training 6/6" "runs the rest"
expect_output "pass over pre-training's records 20/20" "and passes over all"
expect_status 0 "a resume after the passes" -- "$SW" rl train "${inst[@]}" \
  --pre-instances 2 --episodes 0 --features stretch --gamma 1 --pre-epochs 20 --out "$TMP/e.swrl" \
  --seed 5 --resume
expect_output "nothing left to do" "finds them done"
# Killed during the passes (the last run is never saved before them; 100,000 passes, where the
# 30,000 of before left a poll 0.3 s to see the first), then resumed: the passes are not
# skipped.
"$SW" rl train "${inst[@]}" --pre-instances 1 --episodes 0 --features stretch --gamma 1 \
  --pre-epochs 100000 --save-every 1 --out "$TMP/k.swrl" --seed 5 > "$TMP/k.out" 2>&1 &
pid=$!
for _ in $(seq 600); do grep -q "pass over" "$TMP/k.out" && break; sleep 0.05; done
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
expect_status 0 "a training killed in its passes resumes" -- "$SW" rl train "${inst[@]}" \
  --pre-instances 1 --episodes 0 --features stretch --gamma 1 --pre-epochs 100000 --save-every 1 \
  --out "$TMP/k.swrl" --seed 5 --resume
expect_output "after 2 pre-training runs" "from the save before its last run"
expect_output "pass over pre-training's records 100000/100000" "and makes every pass"
expect_status 2 "nothing to learn" -- "$SW" rl train "${inst[@]}" --pre-instances 0 --episodes 0 \
  --out "$TMP/none.swrl"
expect_output "leave nothing to learn" "says so"
expect_status 2 "passes without pre-training" -- "$SW" rl train "${inst[@]}" --pre-instances 0 \
  --pre-epochs 3 --out "$TMP/none.swrl"
expect_output "there are none" "says why"
expect_status 2 "rlswitch's choose is stretch or once" -- "$SW" sim \
  --policy "rlswitch:file=$TMP/e.swrl,choose=twice" --no-model --max-pushes 10
expect_output "choose='twice' is not stretch or once" "says what it takes"
expect_status 2 "a stretch pre-training copies its actions only" -- "$SW" rl train \
  --features stretch --pre-policies bsp,ssp:s=1 --out "$TMP/never.swrl"
expect_output "bsp, ssp:s=4 or asp, not 'ssp:s=1'" "and says which"
expect_status 0 "rlswitch in the simulator, checked" -- "$SW" sim --policy "rlswitch:file=$TMP/s.swrl" \
  --workers 4 --data "synthetic:task=logistic,d=10,n=3000" --model softmax --lr 0.1 \
  --max-pushes 600 --log "$TMP/s.jsonl"
expect_status 0 "its log keeps rlswitch's promise" -- "$SW" check "$TMP/s.jsonl"
expect_output "every promise kept" "check holds rlswitch to its promise"
expect_status 2 "rlp refuses a stretch policy" -- "$SW" sim --policy "rlp:file=$TMP/s.swrl" \
  --no-model --max-pushes 10
expect_output "run it as rlswitch:file=$TMP/s.swrl" "and says how to run it"
expect_status 2 "rlswitch refuses a policy per push" -- "$SW" sim \
  --policy "rlswitch:file=$TMP/p.swrl" --no-model --max-pushes 10
expect_output "run it as rlp:file=$TMP/p.swrl" "and says how to run that"

# The shipped policy is what `rlp` uses without file=.
expect_status 0 "the shipped policy" -- "$SW" sim --policy rlp --workers 4 \
  --data "synthetic:task=logistic,d=10,n=3000" --model softmax --lr 0.1 --max-pushes 500

# Damaged files: a flipped byte and a truncation are refused, naming the file.
cp "$TMP/p.swrl" "$TMP/bad.swrl"
printf '\x55' | dd of="$TMP/bad.swrl" bs=1 seek=300 conv=notrunc status=none
expect_status 1 "a corrupt policy" -- "$SW" sim --policy "rlp:file=$TMP/bad.swrl" --no-model \
  --max-pushes 10
expect_output "bad.swrl: checksum mismatch" "the corrupt file is named"
head -c 40 "$TMP/p.swrl" > "$TMP/short.swrl"
expect_status 1 "a truncated policy" -- "$SW" sim --policy "rlp:file=$TMP/short.swrl" --no-model \
  --max-pushes 10
expect_output "not a syncwise RL policy" "a truncated file is not a policy"

# A Q-network that diverges stops the training with why, and never lands in the policy file
# (what it saved before still loads); clipping the learning step's gradient keeps the same
# settings finite.
expect_status 1 "a diverging Q-network" -- "$SW" rl train "${inst[@]}" --pre-instances 0 \
  --episodes 30 --save-every 1 --rl-lr 9 --out "$TMP/div.swrl"
expect_output "the Q-network diverged" "says the network diverged"
expect_output "try --grad-clip" "says what to try"
expect_status 0 "the file it kept loads" -- "$SW" sim --policy "rlp:file=$TMP/div.swrl" \
  --no-model --max-pushes 10
expect_status 0 "--grad-clip keeps it finite" -- "$SW" rl train "${inst[@]}" --pre-instances 0 \
  --episodes 30 --rl-lr 9 --grad-clip 1 --out "$TMP/clipped.swrl"
expect_status 2 "bad gamma" -- "$SW" rl train --gamma 2
expect_output "--gamma" "the bad option is named"
expect_status 2 "no subcommand" -- "$SW" rl
expect_status 2 "a policy pre-training cannot copy" -- "$SW" rl train --pre-policies bsp,dbw \
  --out "$TMP/never.swrl"
expect_output "not 'dbw'" "names it"
expect_status 2 "a Q-network that cannot be built" -- "$SW" rl train --qnet cnn \
  --out "$TMP/never.swrl"
expect_output "--qnet:" "names the option"
expect_status 2 "an unknown data set" -- "$SW" rl train --data nosuch --out "$TMP/never.swrl"
expect_status 2 "an unknown data key" -- "$SW" rl eval --policy "$TMP/p.swrl" \
  --data synthetic:zz=1
expect_status 2 "empty baselines" -- "$SW" rl eval --policy "$TMP/p.swrl" --baselines ,
expect_status 2 "bad model list" -- "$SW" rl train "${inst[@]}" --models "resnet" \
  --pre-instances 1 --episodes 0 --out "$TMP/x.swrl"
expect_output "resnet" "the bad model is named"
# Every model of a list is tried before any run, not when an instance first draws it.
expect_status 2 "a bad model late in a list" -- "$SW" rl eval --policy "$TMP/p.swrl" \
  "${inst[@]}" --models "mlp:h=0|mlp:h=99" --instances 6
expect_output "h=99 is outside" "is named"
expect_no_output "runs," "before anything ran"
expect_status 2 "a baseline no engine takes" -- "$SW" rl eval --policy "$TMP/p.swrl" \
  "${inst[@]}" --baselines "asp,ssp:s=-1" --instances 6
expect_output "--baselines: ssp: s=-1 is outside" "is refused before any run"
expect_no_output "runs," "nothing ran"

# A family of scenarios: each instance draws an entry of each list; the report has a row per
# part; the tables and rows do not depend on how many runs go at once.
fam=(--data "synthetic:task=logistic,d=10,n=3000" --models "mlp:h=0" --target-acc 0.75
     --max-pushes 3000 --workers "3|4" --lr "0.05|0.1" --optimizer "sgd|sgd:momentum=0.5")
expect_status 0 "rl eval on a family, one job" -- "$SW" rl eval "${fam[@]}" --policy "$TMP/p.swrl" \
  --instances 6 --seeds 1 --baselines bsp,asp --jobs 1 --csv "$TMP/one.csv"
# What a run's draws decide (not the shares of real time spent deciding, which vary).
decided() { grep -E "^(speedup|all|workers|lr|optimizer)" <<< "$1"; }
one=$(decided "$OUT")
for part in "workers=3" "workers=4" "lr=0.05" "lr=0.1" "optimizer=sgd " \
            "optimizer=sgd:momentum=0.5"; do
  expect_output "$part" "the report has the part $part"
done
expect_output "speedup over best of each instance" "eval compares with each instance's best"
expect_output "speedup over best single" "eval compares with the best single baseline"
# Each instance's best is at least as fast as any single policy on it, so the headroom is >= 1.
checks=$((checks + 1))
awk '/^each instance.s best over the best single/ { found = 1; ok = ($8 + 0 >= 1) }
     END { exit !(found && ok) }' <<< "$OUT" ||
  { echo "FAIL: no headroom line of at least 1.00x"; failures=$((failures + 1)); }
expect_status 0 "rl eval on a family, two jobs" -- "$SW" rl eval "${fam[@]}" \
  --policy "$TMP/p.swrl" --instances 6 --seeds 1 --baselines bsp,asp --jobs 2 \
  --csv "$TMP/two.csv"
checks=$((checks + 1))
[ "$(decided "$OUT")" = "$one" ] && [ -n "$one" ] ||
  { echo "FAIL: the tables depend on --jobs"; failures=$((failures + 1)); }
checks=$((checks + 1))
cmp -s <(cut -d, -f1-9,11- "$TMP/one.csv") <(cut -d, -f1-9,11- "$TMP/two.csv") ||
  { echo "FAIL: the rows depend on --jobs"; failures=$((failures + 1)); }
expect_status 0 "rl train on a family" -- "$SW" rl train "${fam[@]}" --pre-instances 1 \
  --episodes 1 --out "$TMP/fam.swrl"
expect_status 2 "a bad entry in a list" -- "$SW" rl eval "${fam[@]}" --lr "0.1|fast"
expect_output "learning rate 'fast'" "the bad entry is named"
expect_status 2 "--switch-cost without stretches" -- "$SW" rl train --switch-cost 1 \
  --out "$TMP/never.swrl"
expect_output "needs --features stretch" "is refused, not ignored"
expect_status 2 "a reward's option to an evaluation" -- "$SW" rl eval "${fam[@]}" --switch-cost 1
expect_output "unknown option '--switch-cost'" "is refused: rl eval --help does not list it"
OUT=$("$SW" rl eval --help)
case "$OUT" in *reward-unit*|*switch-cost*|*reward-progress*)
  echo "FAIL: rl eval --help lists the rewards' options, which it refuses"; failures=$((failures + 1)) ;;
esac
checks=$((checks + 1))
expect_status 2 "--momentum with a list" -- "$SW" rl eval "${fam[@]}" --momentum 0.9
expect_output "go with one optimizer" "a list and --momentum are refused"
# A policy file that cannot be read is said before any run starts.
expect_status 1 "rl eval of no file" -- "$SW" rl eval --policy "$TMP/none.swrl" --instances 2 --seeds 1
expect_output "--policy: $TMP/none.swrl" "the error names the option and the file"
expect_no_output "runs," "no run started"
finish
