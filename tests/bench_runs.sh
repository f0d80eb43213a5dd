#!/bin/bash
# bench_net's parts that start a real server, and a real shard, in its own process run one short
# trial to their end, so that a change to the library cannot leave the benchmarks broken unseen
# (a server claiming its endpoint file once made two servers of one part refuse each other).
# Their figures are not judged: speed is measured under bench/, never by a test. The throughput
# part moves 4 MB frames flat out on both CPUs (two servers, five trials): about 15 s in a plain
# build, run alone (RUN_SERIAL); under the sanitizers it takes minutes, so a sanitized build
# (SANITIZED=1) leaves it to the plain pass.
# usage: tests/bench_runs.sh BENCH_DIR SANITIZED
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
B=$SW
parts="small shards"
[ "${2:-0}" = 1 ] || parts="$parts throughput"

# each part, and a line of its figures (its exit status says it ran to its end)
declare -A last=([small]="p99" [shards]="one shard / raw TCP"
                 [throughput]="checksum off / raw TCP")
for part in $parts; do
  expect_status 0 "bench_net 1 $part shared runs to its end" -- timeout 120 "$B/bench_net" 1 \
    "$part" shared
  expect_output "networked runtime on loopback" "bench_net 1 $part: its heading"
  expect_output "${last[$part]}" "bench_net 1 $part: its figures"
done

finish
