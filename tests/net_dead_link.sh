#!/usr/bin/env bash
# A worker's connection to the server dropped silently at both ends (a middlebox that lost it:
# no reset, no FIN, nothing acknowledged), its heartbeats' connection alive. The worker, held
# at a bsp barrier, hears its heartbeats echoed and would wait until TCP gave up (about 15
# min); with --dead-link 3 both ends close that connection once nothing is acknowledged for
# 3 s, and the worker connects again and joins again.
#
# The drop is played in a network namespace of the test's own (unshare -n), where policy
# routes send that one connection's packets, either way, to a blackhole: root, a kernel with
# network namespaces and ip rules by port, and iproute2 are needed; without them the test is
# skipped (77).
. "$(dirname "$0")/lib.sh"
if [ -z "${SW_IN_NETNS:-}" ]; then
  command -v ip > /dev/null && command -v ss > /dev/null && command -v unshare > /dev/null ||
    { echo "SKIP: iproute2 (ip, ss) or unshare missing"; exit 77; }
  # as root, or as a user namespace's root where unprivileged ones are allowed
  for how in -n -rn; do
    unshare $how true 2> /dev/null || continue
    SW_IN_NETNS=1 exec unshare $how "$0" "$@"
  done
  echo "SKIP: no network namespace of our own here (unshare -n: root, or user namespaces)"
  exit 77
fi
# In the namespace: its loopback up, and the local table looked up after our rules (it comes
# first otherwise, and loopback traffic never reaches them).
ip link set lo up 2> /dev/null && ip rule add pref 10 lookup local 2> /dev/null &&
  ip rule del pref 0 2> /dev/null && ip route add blackhole default table 100 2> /dev/null &&
  ip rule add pref 5 ipproto tcp dport 9 lookup 100 2> /dev/null &&
  ip rule del pref 5 2> /dev/null ||
  { echo "SKIP: no network namespace with port rules here (root?)"; exit 77; }
. "$(dirname "$0")/net_lib.sh"
# operator sockets of our own (in a user namespace we are uid 0, whose /tmp/syncwise-0 is not)
mkdir -m 700 "$TMP/run" && export XDG_RUNTIME_DIR="$TMP/run"
trap 'kill -9 $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT

# busiest_link PID: the local port of the connection of process PID that has sent the most
# bytes (a worker's main connection, which carries its pushes; its heartbeats' carries little).
busiest_link() {
  ss -tnpi | awk -v pid="pid=$1," '
    /ESTAB/ { mine = index($0, pid) > 0; n = split($4, a, ":"); port = a[n] }
    mine && /bytes_sent:/ { match($0, /bytes_sent:[0-9]+/); b = substr($0, RSTART + 11, RLENGTH - 11) + 0
      if (b > best) { best = b; at = port } }
    END { print at }'
}

WPIDS=()
start_server bsp --max-applies 300 --wait-workers 2 --heartbeat-timeout 5 --dead-link 3
start_worker --delay-ms 20 --dead-link 3 --server-timeout 120
"$SW" worker --connect "$EP" --threads 1 --delay-ms 20 --dead-link 3 --server-timeout 120 \
  > "$TMP/held.out" 2>&1 &
held=$!
WPIDS+=("$held")
wait_status 20 'version [1-9][0-9]'
port=$(busiest_link "$held")
checks=$((checks + 1))
[ -n "$port" ] || { echo "FAIL: no connection of the worker found"; failures=$((failures + 1)); }
ip rule add pref 5 ipproto tcp sport "$port" lookup 100
ip rule add pref 6 ipproto tcp dport "$port" lookup 100
began=$SECONDS
expect_server "bsp with a worker's connection dropped silently"
expect_output "stopped: version 300 " "the barrier goes on to the run's end"
checks=$((checks + 1))
[ $((SECONDS - began)) -lt 60 ] ||
  { echo "FAIL: the run took $((SECONDS - began)) s after the drop"; failures=$((failures + 1)); }
wait "${WPIDS[@]}"
# The worker's end may close first (it connects again), or the server's (which then finds the
# member's route gone and drops it).
expect_joined_again "$TMP/held.out"
finish
