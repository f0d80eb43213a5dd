#!/bin/bash
# The benchmarks' command lines (bench/bench_args.h): --help says what each takes and exits 0,
# and an argument a benchmark does not take is refused at once (status 2), never read as its
# default and run for minutes. Nothing here runs a benchmark.
# usage: tests/bench_args.sh BENCH_DIR
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
B=$SW

for b in bench_net bench_engine bench_step bench_apply bench_zipline bench_shard_apply; do
  expect_status 0 "$b --help" -- timeout 10 "$B/$b" --help
  expect_output "usage: $B/$b" "$b --help"
done
expect_status 2 "bench_net with no round trip" -- timeout 10 "$B/bench_net" 0
expect_output "ROUNDS is a whole number" "bench_net 0"
expect_status 2 "bench_net with a part it lacks" -- timeout 10 "$B/bench_net" 10 thru
expect_output "PART is all, throughput" "bench_net 10 thru"
expect_status 2 "bench_net with a placement it lacks" -- timeout 10 "$B/bench_net" 10 small x
expect_output "PLACEMENT is shared, apart or both" "bench_net 10 small x"
expect_status 2 "bench_net with a fourth argument" -- timeout 10 "$B/bench_net" 10 small both x
expect_status 2 "bench_engine 12abc" -- timeout 10 "$B/bench_engine" 12abc
expect_status 2 "bench_step --threads without its value" -- timeout 10 "$B/bench_step" --threads
expect_output "takes a value" "bench_step --threads"
expect_status 2 "bench_step --thread (a typo)" -- timeout 10 "$B/bench_step" --thread 2
expect_output "the options are --threads and --seconds" "bench_step --thread 2"
expect_status 2 "bench_step --seconds -1" -- timeout 10 "$B/bench_step" --seconds -1
expect_status 2 "bench_apply with an argument" -- timeout 10 "$B/bench_apply" 5
expect_output "takes no arguments" "bench_apply 5"
expect_status 2 "bench_zipline with an argument" -- timeout 10 "$B/bench_zipline" fast
expect_status 2 "bench_shard_apply 500 trials" -- timeout 10 "$B/bench_shard_apply" 500

finish
