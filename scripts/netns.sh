# Test hosts in network namespaces, for runs whose slowness is the network's: N namespaces
# sw<PID>n<i>, each with a veth pair into a bridge in the root namespace (10.77.<k>.1/24, the
# server's side), and netem delay on both ends of worker i's link. Source it; needs root.
#   netns_up N          make the bridge and N namespaces; NETNS_ADDR is the bridge address
#   netns_delay I MS    add MS ms of delay each way to worker I's link (0: none)
#   netns_exec I CMD... run CMD inside namespace I
#   netns_down          remove everything (also on exit)
NETNS_PREFIX="sw$$n"
NETNS_BRIDGE="swbr$$"
NETNS_SUBNET="10.77.$(( $$ % 250 + 1 ))"
NETNS_ADDR="$NETNS_SUBNET.1"
NETNS_COUNT=0

netns_can() { # 0 when this shell may create namespaces and netem qdiscs
  [ "$(id -u)" -eq 0 ] && command -v ip >/dev/null && command -v tc >/dev/null || return 1
  ip netns add "${NETNS_PREFIX}probe" 2>/dev/null || return 1
  ip netns del "${NETNS_PREFIX}probe"
  modprobe sch_netem 2>/dev/null || true
  ip link add "${NETNS_BRIDGE}p" type dummy 2>/dev/null || return 1
  local ok=0
  tc qdisc add dev "${NETNS_BRIDGE}p" root netem delay 1ms 2>/dev/null || ok=1
  ip link del "${NETNS_BRIDGE}p"
  return $ok
}

netns_up() {
  NETNS_COUNT=$1
  ip link add "$NETNS_BRIDGE" type bridge
  ip addr add "$NETNS_ADDR/24" dev "$NETNS_BRIDGE"
  ip link set "$NETNS_BRIDGE" up
  for i in $(seq "$NETNS_COUNT"); do
    local ns="$NETNS_PREFIX$i"
    ip netns add "$ns"
    ip link add "${NETNS_BRIDGE}h$i" type veth peer name eth0 netns "$ns"
    ip link set "${NETNS_BRIDGE}h$i" master "$NETNS_BRIDGE" up
    ip -n "$ns" addr add "$NETNS_SUBNET.$((i + 10))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  done
  trap netns_down EXIT
}

netns_delay() {
  [ "$2" -gt 0 ] || return 0
  tc -n "$NETNS_PREFIX$1" qdisc add dev eth0 root netem delay "${2}ms"
  tc qdisc add dev "${NETNS_BRIDGE}h$1" root netem delay "${2}ms"
}

netns_exec() {
  local i=$1
  shift
  ip netns exec "$NETNS_PREFIX$i" "$@"
}

netns_down() {
  kill -9 $(jobs -p) 2>/dev/null
  wait 2>/dev/null
  for i in $(seq "$NETNS_COUNT"); do ip netns del "$NETNS_PREFIX$i" 2>/dev/null; done
  ip link del "$NETNS_BRIDGE" 2>/dev/null
  NETNS_COUNT=0
}
