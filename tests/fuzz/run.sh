#!/usr/bin/env bash
# Builds the protocol decoder's libFuzzer target with clang and runs it for a few seconds over
# the corpus in tests/corpus/proto; any crash is saved as a new corpus file to commit.
#   tests/fuzz/run.sh [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-10}
if ! command -v clang >/dev/null; then
  echo "clang is not installed: skipping the fuzzer (apt-get install clang)"
  exit 0
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -I"$root/include" \
  "$here/proto_fuzz.c" "$root/src/net/proto.c" "$root/src/base/bytes.c" "$root/src/base/err.c" \
  "$root/src/base/log.c" -lz -o "$out/proto_fuzz"
mkdir -p "$out/corpus"
cp "$root/tests/corpus/proto/"* "$out/corpus/" 2>/dev/null || true
"$out/proto_fuzz" -max_total_time="$seconds" -artifact_prefix="$root/tests/corpus/proto/crash-" \
  "$out/corpus" 2>&1 | tail -3
echo "fuzzing passed ($seconds s)"
