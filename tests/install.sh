#!/usr/bin/env bash
# An install under a prefix of the user's choice: the program, the man page and the shipped
# learned policy land there, and `--policy rlp` reads the installed copy wherever the tree is
# moved (not the source tree's, nor one at the prefix the build was configured with).
. "$(dirname "$0")/lib.sh"
BUILD=${2:?usage: $0 SYNCWISE BUILD_DIR}

expect_status 0 "install under a prefix" -- cmake --install "$BUILD" --prefix "$TMP/prefix"
for f in bin/syncwise share/man/man1/syncwise.1 share/syncwise/rlp.swrl; do
  checks=$((checks + 1))
  [ -s "$TMP/prefix/$f" ] || { echo "FAIL: $f was not installed"; failures=$((failures + 1)); }
done
mv "$TMP/prefix" "$TMP/moved"
expect_status 0 "the moved install runs the shipped policy" -- "$TMP/moved/bin/syncwise" sim \
  --policy rlp --no-model --max-pushes 20 -q
expect_output "policy rlp" "it ran"
# Proof that it read its own copy: a broken one there is what it complains about.
echo "not a policy" > "$TMP/moved/share/syncwise/rlp.swrl"
expect_status 1 "a broken installed policy" -- "$TMP/moved/bin/syncwise" sim --policy rlp \
  --no-model --max-pushes 20 -q
expect_output "$TMP/moved/bin/../share/syncwise/rlp.swrl" "the installed copy was the one read"
finish
