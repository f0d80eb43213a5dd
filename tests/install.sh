#!/usr/bin/env bash
# An install under a prefix of the user's choice: the program, the man page and the shipped
# learned policy land there, and `--policy rlp` reads the installed copy wherever the tree is
# moved (not the source tree's, nor one at the prefix the build was configured with). The
# library, its headers and syncwise.pc too: the example policy builds with pkg-config alone and
# runs against the installed library.
. "$(dirname "$0")/lib.sh"
BUILD=${2:?usage: $0 SYNCWISE BUILD_DIR}

expect_status 0 "install under a prefix" -- cmake --install "$BUILD" --prefix "$TMP/prefix"
for f in bin/syncwise share/man/man1/syncwise.1 share/syncwise/rlp.swrl share/syncwise/rlswitch.swrl \
         share/syncwise/rlswitch-once.swrl; do
  checks=$((checks + 1))
  [ -s "$TMP/prefix/$f" ] || { echo "FAIL: $f was not installed"; failures=$((failures + 1)); }
done
LIBDIR=$(dirname "$(find "$TMP/prefix" -name syncwise.pc)")/..
for f in include/syncwise/engine.h include/syncwise/policy.h include/syncwise/sim.h; do
  checks=$((checks + 1))
  [ -s "$TMP/prefix/$f" ] || { echo "FAIL: $f was not installed"; failures=$((failures + 1)); }
done
checks=$((checks + 1))
[ -e "$LIBDIR/libsyncwise.so" ] || { echo "FAIL: no libsyncwise.so"; failures=$((failures + 1)); }
# The library carries the build's sanitizers: so must a program linked with it.
SAN=$(grep -q '^SW_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" && echo "-fsanitize=address,undefined")
EXAMPLE=$(dirname "$0")/../examples/custom_policy/half_barrier.c
build_example() { # the prefix the .pc lies under
  cc -std=c11 -Wall -Werror $SAN "$EXAMPLE" \
    $(PKG_CONFIG_PATH=$(dirname "$(find "$1" -name syncwise.pc)") pkg-config --cflags --libs syncwise) \
    -o "$TMP/half_barrier"
}
expect_status 0 "the example builds with pkg-config --cflags --libs syncwise" -- build_example "$TMP/prefix"
expect_status 0 "and runs against the installed library" -- \
  env LD_LIBRARY_PATH="$LIBDIR" "$TMP/half_barrier" 8 5000
expect_output "policy half: 5000 pushes" "the simulator ran the example's own policy"
# A C++ program includes every public header and calls the library (C linkage), where a C++
# compiler is installed (a fresh Debian may have none).
if command -v c++ >/dev/null; then
  { for h in "$TMP"/prefix/include/syncwise/*.h; do echo "#include <syncwise/$(basename "$h")>"; done
    printf '%s\n' '#include <cstdio>' 'int main() {' \
      '  sw_engine_params p = sw_engine_default_params();' \
      '  char err[SW_ERR_LEN];' \
      '  int rc = sw_engine_check_policy("ssp:s=2", 4, err);' \
      '  std::printf("syncwise %s from C++: %d %s\n", sw_version(), rc, p.policy);' \
      '  return rc; }'; } > "$TMP/all.cpp"
  build_cpp() {
    c++ -std=c++17 -Wall -Werror $SAN "$TMP/all.cpp" \
      $(PKG_CONFIG_PATH=$(dirname "$(find "$TMP/prefix" -name syncwise.pc)") pkg-config --cflags --libs syncwise) \
      -o "$TMP/all-cpp"
  }
  expect_status 0 "a C++ program includes every header" -- build_cpp
  expect_status 0 "and calls the library" -- env LD_LIBRARY_PATH="$LIBDIR" "$TMP/all-cpp"
  expect_output "from C++: 0 asp" "with C linkage"
fi
# The program lends a plugin every function of the library (a plugin built with the headers
# alone calls them there): each one libsyncwise.so exports, the program exports too.
public_of() { nm -D --defined-only "$1" | awk '$2 == "T" && $3 ~ /^sw_[a-z]/ { print $3 }' | sort; }
missing=$(comm -23 <(public_of "$LIBDIR/libsyncwise.so") <(public_of "$TMP/prefix/bin/syncwise"))
checks=$((checks + 1))
[ -z "$missing" ] && [ -n "$(public_of "$LIBDIR/libsyncwise.so")" ] ||
  { echo "FAIL: the program does not export $(echo $missing)"; failures=$((failures + 1)); }
# The same file as a plugin: every command runs its policy by name, check reads its logs. A
# plugin needs the headers alone (the program lends it the library it carries); one linked with
# the library too (--libs, as an earlier README said) is bound to the program's copy all the
# same, which AddressSanitizer takes for two definitions of one global: told to look away.
build_plugin() { # the prefix, and --libs or nothing
  cc -std=c11 -Wall -Werror -shared -fPIC $SAN "$EXAMPLE" \
    $(PKG_CONFIG_PATH=$(dirname "$(find "$1" -name syncwise.pc)") pkg-config --cflags ${2:-} syncwise) \
    -o "$TMP/half.so"
}
expect_status 0 "the example builds as a plugin linked with the library" -- build_plugin \
  "$TMP/prefix" --libs
expect_status 0 "and runs" -- env LD_LIBRARY_PATH="$LIBDIR" SYNCWISE_PLUGINS="$TMP/half.so" \
  ASAN_OPTIONS=detect_odr_violation=0 "$TMP/prefix/bin/syncwise" sim --policy half --workers 3 \
  --no-model --max-time 50 -q
expect_status 0 "the example builds as a plugin with the headers alone" -- build_plugin "$TMP/prefix"
# Any other plugin of the test's own: SOURCE.c into SOURCE.so, with the headers alone.
plugin_from() {
  cc -std=c11 -shared -fPIC $SAN "$1.c" \
    $(PKG_CONFIG_PATH=$(dirname "$(find "$TMP/prefix" -name syncwise.pc)") pkg-config --cflags syncwise) \
    -o "$1.so"
}
plugin=(env SYNCWISE_PLUGINS="$TMP/half.so")
expect_status 0 "compare runs the plugin's policy beside built-in ones" -- "${plugin[@]}" \
  "$TMP/prefix/bin/syncwise" compare --policies "half:share=0.5;bsp" --no-model --max-time 200 \
  --seeds 2 --log-dir "$TMP/plugin-logs" -q
expect_output "half:share=0.5" "its row is in the table"
# A resume under a plugin rebuilt since would table the kept rows of one build beside runs of
# another under one name: refused, naming the plugin, wherever the changed build lies (the
# plugin is known by the policy it brings: SYNCWISE_PLUGINS may name it otherwise each time).
mkdir -p "$TMP/elsewhere"
cp "$TMP/half.so" "$TMP/elsewhere/half.so"
printf 'x' >> "$TMP/elsewhere/half.so"
for at in "$TMP/elsewhere/half.so" "$TMP/elsewhere/../elsewhere/half.so"; do
  expect_status 2 "a resume after the plugin changed ($at)" -- env SYNCWISE_PLUGINS="$at" \
    "$TMP/prefix/bin/syncwise" compare --policies "half:share=0.5;bsp" --no-model --max-time 200 \
    --seeds 3 --log-dir "$TMP/plugin-logs" -q --resume
  expect_output "$at (the plugin of half; $TMP/half.so then) changed since the comparison" \
    "names the plugin, where it lies and where it lay"
done
cp "$TMP/half.so" "$TMP/elsewhere/half.so"
expect_status 0 "a resume with the same plugin elsewhere" -- env \
  SYNCWISE_PLUGINS="$TMP/elsewhere/half.so" "$TMP/prefix/bin/syncwise" compare \
  --policies "half:share=0.5;bsp" --no-model --max-time 200 --seeds 3 \
  --log-dir "$TMP/plugin-logs" -q --resume
expect_status 0 "check holds its log to the plugin's promise" -- "${plugin[@]}" \
  "$TMP/prefix/bin/syncwise" check "$TMP/plugin-logs/half-share=0.5-seed1.jsonl"
expect_output "every promise kept" "the plugin's promise and the rules every run keep"
# It keeps the rules when workers crash and when a run switches to it: it never leaves every
# live worker waiting, which the engine's liveness rule would have to mend (a broken promise).
expect_status 0 "the plugin's policy with two of three workers crashed" -- "${plugin[@]}" \
  "$TMP/prefix/bin/syncwise" sim --policy half --workers 3 --cluster "const:1@0;const:10@1-2" \
  --no-model --max-time 50 --events "crash:w=1,t=2;crash:w=2,t=2" -q
expect_status 0 "a switch to the plugin's policy" -- "${plugin[@]}" \
  "$TMP/prefix/bin/syncwise" sim --policy ssp:s=1 --workers 4 --no-model --max-time 600 \
  --events "switch:t=100,policy=half:share=1" -q
# The same log said to be of half:share=1: its applies hold half the workers' gradients, fewer
# than that spec promises, which only the plugin's own predicate can tell.
sed 's/half:share=0.5/half:share=1/' "$TMP/plugin-logs/half-share=0.5-seed1.jsonl" \
  > "$TMP/half-forged.jsonl"
expect_status 1 "a log that breaks the plugin's promise" -- "${plugin[@]}" \
  "$TMP/prefix/bin/syncwise" check "$TMP/half-forged.jsonl"
expect_output "half:share=1: applied 5 gradients of 10 live workers, fewer than 10" \
  "is told apart by the plugin's own predicate"
expect_status 2 "without the plugin the policy is unknown" -- "$TMP/prefix/bin/syncwise" sim \
  --policy half --no-model --max-time 10
expect_status 1 "a plugin that cannot be loaded" -- env SYNCWISE_PLUGINS="$TMP/none.so" \
  "$TMP/prefix/bin/syncwise" sim --no-model --max-time 10
expect_output "SYNCWISE_PLUGINS: $TMP/none.so" "says which"
expect_status 0 "a command that names no policy does not load plugins" -- env \
  SYNCWISE_PLUGINS="$TMP/none.so" "$TMP/prefix/bin/syncwise" keygen "$TMP/unplugged"
expect_status 2 "check with a plugin that cannot be loaded (1 is a broken promise)" -- env \
  SYNCWISE_PLUGINS="$TMP/none.so" "$TMP/prefix/bin/syncwise" check "$TMP/half-forged.jsonl"
# A plugin built against another plugin interface (an older syncwise's headers) is refused:
# it would read the structs it shares with syncwise where their fields are not.
printf '#include <syncwise/policy.h>\n%s\nconst sw_policy_ops *const *sw_plugin_policies(void) { return 0; }\n' \
  "" > "$TMP/old.c"
printf '#include <syncwise/policy.h>\n%s\nconst sw_policy_ops *const *sw_plugin_policies(void) { return 0; }\n' \
  "int sw_plugin_abi(void) { return 1; }" > "$TMP/abi1.c"
for old in old abi1; do
  plugin_from "$TMP/$old"
  expect_status 1 "a plugin of another interface ($old)" -- env SYNCWISE_PLUGINS="$TMP/$old.so" \
    "$TMP/prefix/bin/syncwise" sim --no-model --max-time 10
  expect_output "build it again against this syncwise's headers" "$old: says what to do"
done
# A plugin's policy with no promise of its own is still held to rule 7 by check: a log whose spec
# it does not take (an unknown key) is one no engine wrote (check passed it).
cat > "$TMP/plain.c" <<'EOF'
#include <stdio.h>
#include <syncwise/check.h>
#include <syncwise/err.h>
#include <syncwise/policy.h>
static void plain_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    (void)state, (void)v;
    d->apply = true;
    sw_decision_release(d, p->worker);
}
static const sw_policy_ops plain = {.name = "plain", .keys = "", .on_push = plain_push};
static void outside_join(void *state, const sw_engine_view *v, uint32_t w, sw_decision *d)
{
    (void)state, (void)w;
    sw_decision_release(d, v->n_slots); /* a worker outside the table: the engine refuses it */
}
static const sw_policy_ops outside = {.name = "outside", .keys = "", .on_push = plain_push,
                                      .on_join = outside_join};
/* "liar" runs as plain does, and promises there are never more than two applies: counted by
 * the checker's replay, read through the library (which this plugin is not linked with: the
 * program's own copy answers). */
static const sw_policy_ops liar = {.name = "liar", .keys = "", .on_push = plain_push};
static int liar_event(void *state, const sw_check *c, const sw_event *ev, char *why)
{
    (void)state;
    sw_check_call call;
    sw_check_call_facts(c, &call);
    if (ev->kind != SW_EV_APPLY || call.V <= 2)
        return 0;
    snprintf(why, SW_ERR_LEN, "apply %llu, more than 2", (unsigned long long)call.V);
    return SW_EPROMISE;
}
static const sw_promise_ops liar_promise = {.policy = "liar", .on_event = liar_event};
SW_PLUGIN_ABI_HERE
const sw_policy_ops *const *sw_plugin_policies(void)
{
    static const sw_policy_ops *const policies[] = {&plain, &outside, &liar, NULL};
    return policies;
}
const sw_promise_ops *const *sw_plugin_promises(void)
{
    static const sw_promise_ops *const promises[] = {&liar_promise, NULL};
    return promises;
}
EOF
plugin_from "$TMP/plain"
expect_status 0 "a plugin policy with no promise" -- env SYNCWISE_PLUGINS="$TMP/plain.so" \
  "$TMP/prefix/bin/syncwise" sim --policy plain --workers 3 --no-model --max-time 50 \
  --log "$TMP/plain.jsonl" -q
expect_status 0 "its log checks" -- env SYNCWISE_PLUGINS="$TMP/plain.so" \
  "$TMP/prefix/bin/syncwise" check "$TMP/plain.jsonl"
sed 's/"policy":"plain"/"policy":"plain:foo=1"/' "$TMP/plain.jsonl" > "$TMP/plain-forged.jsonl"
expect_status 1 "its spec with a key it does not take" -- env SYNCWISE_PLUGINS="$TMP/plain.so" \
  "$TMP/prefix/bin/syncwise" check "$TMP/plain-forged.jsonl"
expect_output "a spec no engine takes" "is held to rule 7"
# A run whose policy broke the engine's contract at its first join ends its log saying so (it
# stopped after that join, and check found every promise kept in what was there).
expect_status 1 "a policy that releases a worker outside the table" -- env \
  SYNCWISE_PLUGINS="$TMP/plain.so" "$TMP/prefix/bin/syncwise" sim --policy outside --workers 3 \
  --no-model --max-time 50 --log "$TMP/outside.jsonl" -q
OUT=$(tail -1 "$TMP/outside.jsonl")
expect_output '"why":"failed: ' "its log ends saying the run failed"
expect_output "outside the table" "and why"
# What a user of plugins looks at: sim --help lists their policies with their help; a plugin
# named twice loads once; two plugins defining one name are told apart; a plugin that cannot be
# loaded does not hide --help, which says how to name plugins.
expect_status 0 "sim --help with a plugin" -- "${plugin[@]}" "$TMP/prefix/bin/syncwise" sim --help
expect_output "half  " "lists the plugin's policy"
expect_status 0 "sim --help with a policy without help" -- env \
  SYNCWISE_PLUGINS="$TMP/plain.so" "$TMP/prefix/bin/syncwise" sim --help
expect_output "a policy of one's own, without help" "says it has none"
expect_status 0 "a plugin named twice" -- env SYNCWISE_PLUGINS="$TMP/plain.so:$TMP/plain.so" \
  "$TMP/prefix/bin/syncwise" sim --policy plain --workers 2 --no-model --max-time 5 -q
cp "$TMP/plain.so" "$TMP/plain-copy.so"
expect_status 1 "two plugins defining one policy" -- env \
  SYNCWISE_PLUGINS="$TMP/plain.so:$TMP/plain-copy.so" "$TMP/prefix/bin/syncwise" sim \
  --no-model --max-time 5
expect_output "plain-copy.so: a policy named 'plain' exists already (from $TMP/plain.so)" \
  "names both plugins"
# A plugin one of whose names is taken joins with none of its policies, even for --help.
cat > "$TMP/clash.c" <<'EOF'
#include <syncwise/policy.h>
static void clash_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    (void)state, (void)v;
    d->apply = true;
    sw_decision_release(d, p->worker);
}
static const sw_policy_ops mine = {.name = "mine", .help = "MINE", .on_push = clash_push};
static const sw_policy_ops asp = {.name = "asp", .on_push = clash_push};
SW_PLUGIN_ABI_HERE
const sw_policy_ops *const *sw_plugin_policies(void)
{
    static const sw_policy_ops *const policies[] = {&mine, &asp, NULL};
    return policies;
}
EOF
plugin_from "$TMP/clash"
expect_status 0 "--help with a plugin one of whose names is taken" -- env \
  SYNCWISE_PLUGINS="$TMP/clash.so:$TMP/plain.so" "$TMP/prefix/bin/syncwise" sim --help
expect_output "a policy named 'asp' exists already (built in)" "says which name"
expect_no_output "MINE" "lists none of its policies"
expect_output "a policy of one's own, without help" "and goes on with the next plugin"
expect_status 0 "--help with a plugin that cannot be loaded" -- env \
  SYNCWISE_PLUGINS="$TMP/none.so" "$TMP/prefix/bin/syncwise" sim --help
expect_output "help goes on without what could not be loaded" "says the plugin failed"
expect_output "policies (--policy" "and helps"
# A server whose policy broke its promise runs on to its stop, fails, and its log's end says so.
. "$(dirname "$0")/net_lib.sh"
export SYNCWISE_PLUGINS="$TMP/plain.so"
start_server liar --max-applies 6 --wait-workers 1
start_worker
expect_server_fails "a server whose policy broke its promise" 1
expect_output "apply: liar: apply 3, more than 2" "says which"
OUT=$(tail -1 "$LOG")
expect_output '"why":"failed: the policy broke its promise: t=' "its log ends saying the run failed"
expect_output 'liar: apply 3, more than 2 (stopped by apply limit)"' "why, and what stopped it"
expect_status 1 "check finds the break in the log" -- "$SW" check "$LOG"
unset SYNCWISE_PLUGINS
wait "${WPIDS[@]}" 2>/dev/null
# A plugin's policy that crashes ends the comparison (it runs inside it), and the crash names the
# run it was in, among the runs going at once. Under AddressSanitizer its own report names the
# place instead.
cat > "$TMP/crashy.c" <<'EOF'
#include <syncwise/policy.h>
static void crashy_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    (void)state, (void)v;
    d->apply = true;
    sw_decision_release(d, p->worker);
    if (p->clock == 20)
        *(volatile int *)0 = 1;
}
static const sw_policy_ops crashy = {.name = "crashy", .keys = "", .on_push = crashy_push};
/* "deep" recurses for ever: the note is written from a stack of its own. */
static int down(volatile int n)
{
    volatile char pad[256];
    pad[0] = (char)n;
    return down(n + 1) + pad[0];
}
static void deep_push(void *state, const sw_engine_view *v, const sw_push *p, sw_decision *d)
{
    crashy_push(state, v, p, d);
    if (p->clock == 10)
        down(0);
}
static const sw_policy_ops deep = {.name = "deep", .keys = "", .on_push = deep_push};
SW_PLUGIN_ABI_HERE
const sw_policy_ops *const *sw_plugin_policies(void)
{
    static const sw_policy_ops *const policies[] = {&crashy, &deep, NULL};
    return policies;
}
EOF
plugin_from "$TMP/crashy"
for bad in crashy deep; do
  OUT=$(SYNCWISE_PLUGINS="$TMP/crashy.so" "$TMP/prefix/bin/syncwise" compare -q -j 2 \
    --policies "asp;$bad" --seeds 2 --no-model --workers 2 --max-pushes 100 2>&1)
  status=$?
  checks=$((checks + 1))
  if [ -z "$SAN" ]; then
    [ "$status" = $((128 + 11)) ] ||
      { echo "FAIL: $bad: status $status, not SIGSEGV's"; failures=$((failures + 1)); }
    expect_output "crashed (signal 11) running $bad seed " "$bad: the crash names the run"
  else
    [ "$status" != 0 ] || { echo "FAIL: $bad: status 0"; failures=$((failures + 1)); }
  fi
done

# A shared object that is no plugin at all is said to be none, not to be of another interface.
printf 'int not_a_plugin(void) { return 1; }\n' > "$TMP/other.c"
cc -std=c11 -shared -fPIC $SAN "$TMP/other.c" -o "$TMP/other.so"
expect_status 1 "a shared object that is no plugin" -- env SYNCWISE_PLUGINS="$TMP/other.so" \
  "$TMP/prefix/bin/syncwise" sim --no-model --max-time 10
expect_output "it is no syncwise plugin" "says so"
mv "$TMP/prefix" "$TMP/moved"
rm "$TMP/half_barrier"
expect_status 0 "a moved install still builds the example" -- build_example "$TMP/moved"
expect_status 0 "the moved install runs the shipped policy" -- "$TMP/moved/bin/syncwise" sim \
  --policy rlp --no-model --max-pushes 20 -q
expect_output "policy rlp" "it ran"
expect_status 0 "and plain rlswitch" -- "$TMP/moved/bin/syncwise" sim --policy rlswitch \
  --no-model --max-pushes 20 -q
# Proof that it read its own copy: a broken one there is what it complains about.
echo "not a policy" > "$TMP/moved/share/syncwise/rlp.swrl"
expect_status 1 "a broken installed policy" -- "$TMP/moved/bin/syncwise" sim --policy rlp \
  --no-model --max-pushes 20 -q
expect_output "$TMP/moved/bin/../share/syncwise/rlp.swrl" "the installed copy was the one read"
# rlswitch's shipped policy lies beside rlp's.
echo "not a policy" > "$TMP/moved/share/syncwise/rlswitch.swrl"
expect_status 1 "a broken installed rlswitch policy" -- "$TMP/moved/bin/syncwise" sim \
  --policy rlswitch --no-model --max-pushes 20 -q
expect_output "$TMP/moved/bin/../share/syncwise/rlswitch.swrl" "its installed copy was the one read"
# Choosing once, it reads the network trained for that, installed beside.
expect_status 0 "rlswitch:choose=once" -- "$TMP/moved/bin/syncwise" sim \
  --policy rlswitch:choose=once --no-model --max-pushes 20 -q
echo "not a policy" > "$TMP/moved/share/syncwise/rlswitch-once.swrl"
expect_status 1 "a broken installed rlswitch-once policy" -- "$TMP/moved/bin/syncwise" sim \
  --policy rlswitch:choose=once --no-model --max-pushes 20 -q
expect_output "$TMP/moved/bin/../share/syncwise/rlswitch-once.swrl" "its own installed copy was read"
finish
