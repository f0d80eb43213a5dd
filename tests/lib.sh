# Shared helpers for the shell integration tests: a private scratch directory removed on exit,
# and assertions that say what was expected.
set -u
# The scripts' own tools (awk, printf, sort) read and write numbers as syncwise does, whatever
# the user's locale: under one with a decimal comma awk read 12.5 as 12 and printf wrote 0,123.
export LC_ALL=C
SW=${1:?usage: $0 PATH_TO_SYNCWISE}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/swit.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
failures=0
checks=0

# expect_status WANT DESCRIPTION -- COMMAND...: runs COMMAND, keeps its output in $OUT.
expect_status() {
  local want=$1 what=$2
  shift 3
  OUT=$("$@" 2>&1)
  local got=$?
  checks=$((checks + 1))
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit status $got, expected $want"
    echo "$OUT" | sed 's/^/    /' | head -20
    failures=$((failures + 1))
  fi
}

# expect_output TEXT DESCRIPTION: the last command's output contains TEXT.
expect_output() {
  checks=$((checks + 1))
  if ! printf '%s' "$OUT" | grep -qF -- "$1"; then
    echo "FAIL: $2: output lacks '$1'"
    echo "$OUT" | sed 's/^/    /' | head -20
    failures=$((failures + 1))
  fi
}

# expect_no_output TEXT DESCRIPTION: the last command's output does not contain TEXT.
expect_no_output() {
  checks=$((checks + 1))
  if printf '%s' "$OUT" | grep -qF -- "$1"; then
    echo "FAIL: $2: output has '$1'"
    echo "$OUT" | sed 's/^/    /' | head -20
    failures=$((failures + 1))
  fi
}

# expect_exit PID DESCRIPTION [STATUS]: the background process PID exits with STATUS (0).
expect_exit() {
  wait "$1"
  local got=$? want=${3:-0}
  checks=$((checks + 1))
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $2: exit status $got, expected $want"
    failures=$((failures + 1))
  fi
}

# endpoint_of FILE: what a process that was just started writes to its --endpoint-file, once it
# is there (empty after 30 s: one loading Fashion-MNIST under ASan on a busy machine takes many).
endpoint_of() {
  for _ in $(seq 600); do [ -s "$1" ] && break; sleep 0.05; done
  cat "$1" 2>/dev/null
}

finish() {
  echo "$((checks - failures)) passed, $failures failed"
  [ "$failures" -eq 0 ]
}
