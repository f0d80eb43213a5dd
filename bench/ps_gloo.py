"""What a user would otherwise write: a parameter server in PyTorch's own distributed package.

Two processes on loopback, gloo backend. Rank 0 is the server: it holds a 1M-float model,
receives a gradient (4 MB), checks it is finite, applies it with SGD and sends the weights back
(4 MB); rank 1 is the worker, sending zero gradients as fast as it can. The figure is
bench_net's: bytes moved both ways per second (2 x 4 MB a round trip), in MB/s, the median of
TRIALS trials. bench/ps_gloo.sh runs it beside bench_net's syncwise figure.

    /usr/bin/python3 bench/ps_gloo.py ROUNDS [TRIALS]

Run with Debian's interpreter (/usr/bin/python3) so that python3-torch is importable; set
OPENBLAS_NUM_THREADS (and OMP_NUM_THREADS) as for syncwise: torch.set_num_threads does not bound
OpenBLAS's own threads.
"""
import os
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

FLOATS = 1 << 20
LR = 0.01


def serve(rounds):
    theta = torch.zeros(FLOATS)
    grad = torch.empty(FLOATS)
    for _ in range(rounds):
        dist.recv(grad, src=1)
        if not torch.isfinite(grad).all():
            raise SystemExit("a gradient that is not finite")
        theta.add_(grad, alpha=-LR)
        dist.send(theta, dst=1)


def work(rounds):
    grad = torch.zeros(FLOATS)
    theta = torch.empty(FLOATS)
    start = time.perf_counter()
    for _ in range(rounds):
        dist.send(grad, dst=0)
        dist.recv(theta, src=0)
    return time.perf_counter() - start


def run(rank, port, rounds, trials, out):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=2)
    for trial in range(trials + 1):  # the first is a warm-up
        if rank == 0:
            serve(rounds)
        else:
            dt = work(rounds)
            if trial:
                out.put(2.0 * 4 * FLOATS * rounds / dt / 1e6)
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    rounds = int(sys.argv[1])
    trials = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=run, args=(r, port, rounds, trials, out)) for r in (0, 1)]
    for p in procs:
        p.start()
    figures = [out.get() for _ in range(trials)]
    for p in procs:
        p.join()
        if p.exitcode:
            raise SystemExit(f"a rank of the gloo parameter server failed ({p.exitcode})")
    print(f"gloo parameter server (torch {torch.__version__}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}): "
          f"median {statistics.median(figures):.0f} MB/s over {trials} trials of {rounds} "
          f"round trips (range {min(figures):.0f}-{max(figures):.0f})")


if __name__ == "__main__":
    main()
