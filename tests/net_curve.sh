#!/usr/bin/env bash
# CURVE: a server with keys admits only the workers and operators whose public keys it was given;
# a worker without keys, or with a key the server does not know, cannot join or push; only an
# operator's key may switch the policy from afar, and status counts the refused connections. A
# sharded run under CURVE: the shards hold the server's key pair, a worker's key trains through
# them, and every order only the server may give is refused from a worker's key. Peers sharing
# a group's key pair.
HOSTILE=${2:?usage: $0 SYNCWISE NET_HOSTILE}
. "$(dirname "$0")/lib.sh"
trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
for who in server w1 ops intruder; do "$SW" keygen "$who" >/dev/null; done
expect_status 1 "keygen over an existing pair" -- "$SW" keygen w1
expect_output "w1.key exists" "keygen keeps the secret a key pair already holds"
OUT=$(stat -c %a w1.key)
expect_output "600" "secret keys are private"
# A pair half written is taken back (a full disk once left an empty half.key, and every retry
# was refused as "exists"): here half.pub cannot be written, so half.key must not stay.
mkdir half.pub
expect_status 1 "keygen whose public half cannot be written" -- "$SW" keygen half
expect_output "half.pub" "names the file it could not write"
[ ! -e half.key ] || { echo "FAIL: keygen left half.key without half.pub"; failures=$((failures + 1)); }
checks=$((checks + 1))
rmdir half.pub
expect_status 0 "keygen again once the disk allows it" -- "$SW" keygen half
OUT=$(stat -c %a half.key)
expect_output "600" "the retried secret is private too"
cp w1.pub clients
"$SW" server --bind "tcp://127.0.0.1:*" --endpoint-file ep --policy asp \
  --data synthetic:task=logistic,d=20,n=5000 --model softmax --lr 0.1 --target-acc 0.85 \
  --eval-every 0.2 --max-time 30 --curve-key server.key --curve-clients clients \
  --curve-operators ops.pub --ctl-bind none > server.out 2> server.err &
server=$!
EP=$(endpoint_of ep)
# The server's refusal reaches the worker (a monitored handshake), which stops at once with why,
# long before its server timeout would have ended it.
expect_status 1 "a worker with an unknown key" -- "$SW" worker --connect "$EP" \
  --curve-key intruder.key --curve-server server.pub --server-timeout 20
expect_output "refused this key (CURVE, status 400)" "gets nothing from the server, and is told why"
expect_status 1 "a worker without keys" -- "$SW" worker --connect "$EP" --server-timeout 20
expect_output "speaks only CURVE: a worker or operator needs its key pair" "is told it needs keys"
# A wrong server public key: the server cannot read the worker's greeting and closes the
# connection without a word; the worker blames the key after a few closes, not a timeout.
expect_status 1 "a worker with the wrong server key" -- "$SW" worker --connect "$EP" \
  --curve-key w1.key --curve-server intruder.pub --server-timeout 20
expect_output "closed the CURVE handshake 3 times in a row: does it hold the key pair" \
  "is told which key to check"
expect_status 1 "ctl without keys" -- "$SW" ctl --connect "$EP" status
expect_status 0 "ctl with a known key" -- "$SW" ctl --timeout 30 --connect "$EP" --curve-key ops.key \
  --curve-server server.pub status
expect_output "workers live 0" "nobody got in"
checks=$((checks + 1))
# the unknown key, the keyless worker and ctl, the wrong server key's three closes: each counted
refused=$(sed -n 's/^refused connections (CURVE: unknown keys, failed handshakes) //p' <<< "$OUT")
[ "${refused:-0}" -ge 6 ] ||
  { echo "FAIL: ${refused:-no} refused connections counted, 6 or more made"; failures=$((failures + 1)); }
expect_status 1 "a worker's key cannot switch the policy" -- "$SW" ctl --connect "$EP" \
  --curve-key w1.key --curve-server server.pub policy ssp:s=1
expect_output "operator commands are taken" "the refusal says who may"
expect_status 0 "an operator's key can" -- "$SW" ctl --timeout 30 --connect "$EP" --curve-key ops.key \
  --curve-server server.pub policy ssp:s=1
expect_output "policy switched to ssp:s=1" "the switch is confirmed"
expect_status 0 "a worker with a known key" -- "$SW" worker --connect "$EP" --curve-key w1.key \
  --curve-server server.pub -q
wait "$server"
OUT=$(cat server.out server.err)
expect_output "target reached" "the admitted worker trained"
expect_output "policy switched to ssp:s=1" "the server logged the operator's switch"
expect_output "1 joins" "only it joined"
expect_output "unknown client key" "the server logged the refusal"
# (which kind a failed handshake is said as depends on which end closes first: either is said)
expect_output "refused a connection: " "and the handshakes that failed before any key was read"
expect_output "payload checksums off" "under CURVE, payloads go without checksums by default"
expect_status 2 "a server without the clients file" -- "$SW" server --curve-key server.key
expect_output "--curve-key and --curve-clients go together" "says what is missing"
expect_status 2 "a clients file without a key pair" -- "$SW" server --curve-clients clients
expect_output "--curve-clients alone would run without CURVE" "which would serve in the clear"

# A CURVE server killed and started again, for a moment without its CURVE options: ZeroMQ gives
# up a connection whose handshake breaks on the protocol, so the worker connects again by itself
# and rejoins once the server is back with them.
task=(--data synthetic:task=logistic,d=20,n=5000 --model softmax --lr 0.1 --ctl-bind none)
curve=(--curve-key server.key --curve-clients clients)
"$SW" server --bind "tcp://127.0.0.1:*" --endpoint-file ep2 --policy asp "${task[@]}" \
  "${curve[@]}" --checkpoint ck --checkpoint-every 0.2 --max-time 60 > s1.out 2>&1 &
server=$!
EP2=$(endpoint_of ep2)
"$SW" worker --connect "$EP2" --curve-key w1.key --curve-server server.pub --delay-ms 5 \
  --server-timeout 30 > w.out 2>&1 &
worker=$!
# Once the worker got in (else it never met a CURVE handshake that worked, and blames its key
# for the closes that follow, rightly) and a checkpoint holds the run.
for _ in $(seq 300); do
  "$SW" ctl --connect "$EP2" --curve-key w1.key --curve-server server.pub status 2>/dev/null |
    grep -q "workers live 1" && [ -s ck ] && break
  sleep 0.1
done
kill -9 "$server"
wait "$server" 2>/dev/null
"$SW" server --bind "$EP2" --policy asp "${task[@]}" --checkpoint ck --resume --max-time 60 \
  > s2.out 2>&1 &
server=$!
# Until the worker met it (a fixed sleep missed it on a loaded machine).
for _ in $(seq 300); do grep -q "another protocol" w.out && break; sleep 0.1; done
kill -9 "$server"
wait "$server" 2>/dev/null
expect_status 0 "the CURVE server back" -- "$SW" server --bind "$EP2" --policy asp "${task[@]}" \
  "${curve[@]}" --checkpoint ck --resume --max-time 4 -q
expect_output "1 joins" "the worker rejoined it"
wait "$worker"
worker_rc=$?
checks=$((checks + 1))
[ "$worker_rc" -eq 0 ] || { echo "FAIL: the worker ended with $worker_rc"; failures=$((failures + 1)); }
OUT=$(cat w.out)
expect_output "answered a handshake in another protocol" "the worker said why it connected again"
# Sharded under CURVE.
for j in 0 1; do
  "$SW" shard --bind "tcp://127.0.0.1:*" --endpoint-file "shard$j.ep" --curve-key server.key \
    --curve-clients clients > "shard$j.out" 2>&1 &
done
SHARDS="$(endpoint_of shard0.ep),$(endpoint_of shard1.ep)"
expect_status 0 "a worker's key cannot give a shard orders" -- "$HOSTILE" "$(endpoint_of shard0.ep)" \
  orders w1.key server.pub
checks=$((checks + 1))
[ "$(grep -c "only the server's CURVE key" <<< "$OUT")" = 8 ] ||
  { echo "FAIL: not every order was refused for want of the server's key"; echo "$OUT";
    failures=$((failures + 1)); }
rm -f ep
"$SW" server --bind "tcp://127.0.0.1:*" --endpoint-file ep --policy bsp --shards "$SHARDS" \
  --data synthetic:task=logistic,d=20,n=5000 --model softmax --lr 0.1 --target-acc 0.85 \
  --eval-every 0.2 --max-time 30 --curve-key server.key --curve-clients clients \
  --ctl-bind none > server.out 2>&1 &
server=$!
EP=$(endpoint_of ep)
expect_status 0 "a worker with a known key, through CURVE shards" -- "$SW" worker --connect "$EP" \
  --curve-key w1.key --curve-server server.pub -q
wait "$server"
OUT=$(cat server.out)
expect_output "target reached" "a sharded run under CURVE trains"
expect_output "payload checksums off" "CURVE covers the shards' links: no checksums"
wait
OUT=$(cat shard0.out)
expect_output "run over" "shard 0 ended with the run"
expect_output "8 refused" "shard 0 refused the worker key's eight orders, and nothing else"

# A worker that a shard refuses (its key is not in that shard's clients file) leaves the run at
# once, rather than holding bsp's barriers until its heartbeats stop counting.
"$SW" keygen w2 > /dev/null
cat w1.pub w2.pub > clients2
for j in 0 1; do
  list=clients2
  [ "$j" = 1 ] && list=clients
  "$SW" shard --bind "tcp://127.0.0.1:*" --endpoint-file "s$j.ep" --curve-key server.key \
    --curve-clients "$list" > "s$j.out" 2>&1 &
done
SHARDS="$(endpoint_of s0.ep),$(endpoint_of s1.ep)"
rm -f ep
"$SW" server --bind "tcp://127.0.0.1:*" --endpoint-file ep --policy bsp --shards "$SHARDS" \
  --data synthetic:task=logistic,d=20,n=5000 --model softmax --lr 0.1 --target-acc 0.85 \
  --eval-every 0.2 --max-time 30 --curve-key server.key --curve-clients clients2 \
  --heartbeat-timeout 60 --ctl-bind none --log refused.jsonl > server.out 2>&1 &
server=$!
EP=$(endpoint_of ep)
"$SW" worker --connect "$EP" --curve-key w2.key --curve-server server.pub > w2.out 2>&1 &
w2=$!
expect_status 0 "a worker beside one a shard refused" -- "$SW" worker --connect "$EP" \
  --curve-key w1.key --curve-server server.pub -q
wait "$w2"
w2_rc=$?
checks=$((checks + 1))
[ "$w2_rc" -eq 1 ] || { echo "FAIL: the refused worker ended with $w2_rc"; failures=$((failures + 1)); }
wait "$server"
OUT=$(cat server.out)
expect_output "target reached" "the run went on without the refused worker, long before its timeout"
OUT=$(cat refused.jsonl)
expect_output '"ev":"leave"' "which left"
OUT=$(cat w2.out)
expect_output "refused this key" "the refused worker says why"
wait

# Peers under CURVE: a group whose members share one key pair trains to its target; a peer with
# another pair, or with none, is refused at once and told why (without CURVE anyone who knows
# the run's facts may say HELLO), and a stranger's frames never reach a member.
"$SW" keygen group >/dev/null
peer_task=(--data "sparse:n=20000,test=2000,dim=2000,density=0.01" --target-loss 0.3 --max-time 30)
"$SW" peer --endpoint-file pep "${peer_task[@]}" --curve-key group.key --wait-peers 2 \
  --out best > peer1.out 2>&1 &
peer1=$!
PEP=$(endpoint_of pep)
expect_status 1 "a peer with another key pair" -- "$SW" peer --join "$PEP" "${peer_task[@]}" \
  --curve-key intruder.key
expect_output "closed the CURVE handshake 3 times in a row" "is refused and told which key to check"
expect_status 1 "a peer without keys" -- "$SW" peer --join "$PEP" "${peer_task[@]}"
expect_output "a peer its group's key" "is told the group speaks only CURVE"
expect_status 1 "a peer given a public key only" -- "$SW" peer --join "$PEP" "${peer_task[@]}" \
  --curve-key group.pub
expect_output "group.pub: lacks the secret key" "is told what its file lacks"
expect_status 0 "a stranger's frames" -- "$HOSTILE" "$PEP" peer
expect_status 0 "a peer holding the group's pair" -- "$SW" peer --join "$PEP" "${peer_task[@]}" \
  --curve-key group.key --out best
expect_output "target loss reached" "joins, and the group trains to its target"
expect_exit "$peer1" "the group's first peer"
OUT=$(cat peer1.out)
expect_output "2 members at the end" "the group had the two key holders"
checks=$((checks + 1))
! grep -q "messages ignored" <<< "$OUT" ||
  { echo "FAIL: a stranger's frames reached a member: $OUT"; failures=$((failures + 1)); }
OUT=$(wc -l < best)
expect_output "2001" "the judge wrote its weights"
# Members that train still let holders in: a late joiner got nothing (the handshakes waited on
# a check only a sleeping reader answered, and a training peer reads without sleeping), and a
# third member joining as the group started was never heard by the second, who dropped it.
rm -f pep best
"$SW" peer --endpoint-file pep "${peer_task[@]}" --curve-key group.key --wait-peers 3 \
  --target-loss 0.01 --max-time 8 --delay-ms 2 --out best > peer1.out 2>&1 &
peer1=$!
PEP=$(endpoint_of pep)
for i in 2 3; do
  "$SW" peer --join "$PEP" "${peer_task[@]}" --curve-key group.key --delay-ms 2 --out best \
    > "peer$i.out" 2>&1 &
  eval "peer$i=\$!"
done
for _ in $(seq 100); do grep -q "joined through" peer2.out peer3.out 2>/dev/null && break; sleep 0.1; done
sleep 1
expect_status 0 "a holder joining the training group late" -- "$SW" peer --join "$PEP" \
  "${peer_task[@]}" --curve-key group.key --delay-ms 2 --out best # it may be the judge
expect_output "4 members at the end" "gets in, and trains with the four"
for pid in "$peer1" "$peer2" "$peer3"; do expect_exit "$pid" "a member of the group of four"; done
OUT=$(cat peer1.out peer2.out peer3.out)
checks=$((checks + 1))
[ "$(grep -c "4 members at the end, 0 dropped" <<< "$OUT")" -eq 3 ] ||
  { echo "FAIL: the group did not stay whole: $OUT"; failures=$((failures + 1)); }
OUT=$(wc -l < best)
expect_output "2001" "one judge wrote its weights"

echo "garbage" > bad.key
expect_status 1 "a bad key file" -- "$SW" worker --curve-key bad.key --curve-server server.pub
expect_output "bad.key:1" "names the file and line"
# One character of the secret changed: still a key, but not w1's public key's pair. Refused at
# start instead of failing every handshake with blame on the server's key.
awk '/^secret/ { c = substr($2, 1, 1); $2 = (c == "0" ? "1" : "0") substr($2, 2) } 1' w1.key \
  > damaged.key
expect_status 1 "a damaged secret key" -- "$SW" worker --curve-key damaged.key \
  --curve-server server.pub
expect_output "damaged.key: its public and secret keys are not a pair" "says the file is damaged"
cat w1.pub w1.key > clients-with-a-secret
expect_status 1 "a secret key in the clients list" -- "$SW" server --curve-key server.key \
  --curve-clients clients-with-a-secret
expect_output "clients-with-a-secret:3: a secret key in a list of public keys" "names the line"
finish
