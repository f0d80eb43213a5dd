#!/usr/bin/env bash
# Every command the README, the guide and the man page show, run as shown, so that none can rot.
#
# Each document's shell blocks (```sh in Markdown, .nf/.fi in the man page) run in order in one
# scratch directory (a later block may read what an earlier one wrote), each block as a script
# that must exit 0, its background jobs included. `syncwise` and `build/syncwise` are this
# build's program, wrapped so that long runs are shortened: options appended after the
# documented ones (the last of a repeated option wins) cap virtual time, seeds, episodes and a
# server's wall time, and ctl waits longer for a server still starting. `make` lines are what CI
# itself runs, and are left out.
. "$(dirname "$0")/lib.sh"
DOCS=$(cd "$(dirname "$0")/.." && pwd)
SW=$(cd "$(dirname "$SW")" && pwd)/$(basename "$SW") # the blocks run elsewhere
export SW

# The wrapper every block sees: the command as documented, then the caps.
cat > "$TMP/wrap.sh" <<'EOF'
given() { # OPTION ARGS...: whether ARGS name OPTION
  local o=$1 a
  shift
  for a in "$@"; do case $a in "$o" | "$o"=*) return 0 ;; esac; done
  return 1
}
syncwise() {
  local cmd=${1:-}
  [ $# -gt 0 ] && shift
  # a default endpoint is this test's port for it, as a documented one is (below)
  case $cmd in
    server) given --bind "$@" || set -- "$@" --bind "tcp://127.0.0.1:$DOC_PORT_SERVER" ;;
    worker) given --connect "$@" || set -- "$@" --connect "tcp://127.0.0.1:$DOC_PORT_SERVER" ;;
    ctl) given --connect "$@" || set -- --connect "tcp://127.0.0.1:$DOC_PORT_SERVER" "$@" ;;
    shard) given --bind "$@" || set -- "$@" --bind "tcp://127.0.0.1:$DOC_PORT_SHARD" ;;
  esac
  case $cmd in
    sim) set -- "$@" --max-time 150 -q ;;
    compare) set -- "$@" --seeds 1 --max-time 150 -q ;;
    train) set -- "$@" --epochs 1 ;;
    server) set -- "$@" --max-time 4 -q ;;
    peer) set -- "$@" --max-time 4 -q ;;
    ctl) set -- --timeout 120 "$@" ;; # a busy machine's server may still be loading its data
    data) [ "${1:-}" = gen ] && set -- "$@" --n 3000 ;;
    rl) case ${1:-} in
          train) set -- "$@" --pre-instances 1 --episodes 1 --max-pushes 300 -q ;;
          eval) set -- "$@" --instances 1 --max-pushes 300 -q ;;
        esac ;;
  esac
  OPENBLAS_NUM_THREADS=1 "$SW" ${cmd:+"$cmd"} "$@"
}
# Every background job of the block must succeed too.
finish_block() {
  local rc=0
  for job in $(jobs -p); do wait "$job" || rc=1; done
  return $rc
}
EOF

# The blocks of a document, one file each: Markdown ```sh blocks, or the man page's .nf/.fi.
extract() { # document, output prefix
  awk -v out="$2" '
    /^```sh/ || /^\.nf/ { n++; f = out "-" n ".sh"; on = 1; next }
    /^```/ || /^\.fi/ { on = 0; next }
    on { print > f }' "$1"
}

run_blocks() { # name of the document, for messages
  local doc=$1
  for block in $(ls "$TMP/blocks/$doc"-*.sh 2>/dev/null | sort -t- -k2 -n); do
    { echo ". '$TMP/wrap.sh'"; echo "set -e"
      # man page escapes; the build's program; `make` is CI's own
      sed -e 's/\\-/-/g' -e 's#build/syncwise#syncwise#g' -e '/^make /d' "${PORTS[@]}" "$block"
      echo "finish_block"; } > "$block.run"
    local lines
    lines=$(grep -c 'syncwise' "$block.run")
    [ "$lines" -gt 0 ] || continue # nothing of ours to run
    checks=$((checks + 1))
    if ! (cd "$TMP/work" && timeout 300 bash "$block.run") > "$block.out" 2>&1; then
      echo "FAIL: $doc, block $(basename "$block" .sh | sed 's/.*-//'):"
      grep -v '^\. \|^set -e\|^finish_block' "$block.run" | sed 's/^/    $ /'
      tail -30 "$block.out" | sed 's/^/    /'
      failures=$((failures + 1))
    fi
  done
}

mkdir -p "$TMP/blocks" "$TMP/work"
extract "$DOCS/README.md" "$TMP/blocks/README"
extract "$DOCS/docs/guide.md" "$TMP/blocks/guide"
extract "$DOCS/docs/syncwise.1" "$TMP/blocks/man"

# The documents' fixed ports (tcp://127.0.0.1:5555), each run on a port free now instead: a
# second test run on the machine, or anything else holding 5555, would fail the blocks.
# The defaults (server, worker and ctl 5555, shard 5600) are mapped too: the wrapper names them.
documented=($({ cat "$TMP"/blocks/*.sh | grep -oE '[0-9a-z*.]:[0-9]{4,5}\b' | sed 's/.*://'
                echo 5555; echo 5600; } | sort -un))
# Below the kernel's ephemeral range, which the other tests' connections and `:*` binds draw
# from: a port free now stays so while the blocks run, as the documents' own did.
free=($(/usr/bin/python3 -c '
import random, socket, sys
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
ports = list(range(10000, low)) if low > 11000 else list(range(1024, 65536))
ports = [p for p in ports if str(p) not in sys.argv[1:]]   # one rename each, never chained
random.shuffle(ports)
held = []
for port in ports:
    if len(held) == len(sys.argv) - 1:
        break
    s = socket.socket()
    try:
        s.bind(("0.0.0.0", port))
        held.append(s)
    except OSError:
        s.close()
print(" ".join(str(s.getsockname()[1]) for s in held))' "${documented[@]}"))
[ "${#free[@]}" = "${#documented[@]}" ] || { echo "FAIL: no free ports for the documents"; exit 1; }
PORTS=()
for i in "${!documented[@]}"; do
  PORTS+=(-e "s/\([0-9a-z*.]\):${documented[i]}\b/\1:${free[i]}/g")
  [ "${documented[i]}" = 5555 ] && export DOC_PORT_SERVER=${free[i]}
  [ "${documented[i]}" = 5600 ] && export DOC_PORT_SHARD=${free[i]}
done
for doc in README guide man; do
  run_blocks "$doc"
done
blocks=$checks
checks=$((checks + 1))
[ "$blocks" -ge 5 ] || { echo "FAIL: only $blocks blocks found"; failures=$((failures + 1)); }
finish
