#!/bin/bash
# bench_net's parts that start a real server, and a real shard, in its own process run one short
# trial to their end, so that a change to the library cannot leave the benchmarks broken unseen
# (a server claiming its endpoint file once made two servers of one part refuse each other).
# Their figures are not judged: speed is measured under bench/, never by a test. The throughput
# part, which moves 4 MB frames flat out on both CPUs for seconds, is left out: beside the other
# tests it would starve their heartbeats.
# usage: tests/bench_runs.sh BENCH_DIR
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
B=$SW

for part in small shards; do
  expect_status 0 "bench_net 1 $part shared runs to its end" -- timeout 120 "$B/bench_net" 1 \
    "$part" shared
  expect_output "networked runtime on loopback" "bench_net 1 $part: its heading"
done
expect_output "one shard / raw TCP" "bench_net 1 shards: its ratio"

finish
