#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (the protocol decoder; the spec and log-line parsers)
# and runs each for a few seconds over its corpus in tests/corpus/; any crash is saved there as a
# new corpus file to commit.
#   tests/fuzz/run.sh [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-10}
# 77 tells CTest the test was skipped (SKIP_RETURN_CODE in tests/CMakeLists.txt), not passed.
if ! command -v clang >/dev/null; then
  echo "clang is not installed: the fuzzer is skipped (apt-get install clang libclang-rt-14-dev)"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' > "$out/probe.c"
if ! clang -fsanitize=fuzzer "$out/probe.c" -o "$out/probe" 2>/dev/null; then
  echo "clang cannot build fuzzers here (no libFuzzer runtime): the fuzzer is skipped" \
    "(apt-get install libclang-rt-14-dev)"
  exit 77
fi
flags=(-std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -I"$root/include")
base=("$root/src/base/bytes.c" "$root/src/base/err.c" "$root/src/base/log.c")
clang "${flags[@]}" "$here/proto_fuzz.c" "$root/src/net/proto.c" "${base[@]}" -lisal -lz \
  -o "$out/proto_fuzz"
clang "${flags[@]}" "$here/text_fuzz.c" "$root/src/base/spec.c" "$root/src/base/logread.c" \
  "$root/src/base/utf8.c" "$root/src/base/lines.c" "${base[@]}" -lisal -lz -lm \
  -o "$out/text_fuzz"
for target in proto text; do
  mkdir -p "$out/corpus-$target"
  cp "$root/tests/corpus/$target/"* "$out/corpus-$target/" 2>/dev/null || true
  "$out/${target}_fuzz" -max_total_time="$seconds" \
    -artifact_prefix="$root/tests/corpus/$target/crash-" "$out/corpus-$target" 2>&1 | tail -2
done
echo "fuzzing passed ($seconds s per target)"
