"""PyTorch peer of bench/step_bench.c: the same models, batches and SGD steps, same output lines.

Run with Debian's interpreter (/usr/bin/python3) so that python3-torch is importable. The thread
count is set through torch and, by bench/step.sh, through OPENBLAS_NUM_THREADS and
OMP_NUM_THREADS, because torch.set_num_threads does not bound OpenBLAS's own threads.
"""
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

REPEATS = 5


def mlp():
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))


def cnn():
    # The same LeNet-style network as syncwise's cnn:c1=20,c2=50,f=500 (valid 5x5 convolutions).
    return nn.Sequential(nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(20, 50, 5), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10))


def cnn_dbw():
    # syncwise's cnn:c1=8,c2=16,f=64, the network of the DBW Fig. 3 runs (bench/adaptive.sh).
    return nn.Sequential(nn.Conv2d(1, 8, 5), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 10))


WORKLOADS = [("mlp_b16", mlp, 16, True), ("mlp_b128", mlp, 128, True), ("cnn_b16", cnn, 16, False),
             ("cnn_dbw_b500", cnn_dbw, 500, False)]


def step_us(make, batch, flat, seconds, x, y):
    torch.manual_seed(1)
    model = make()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    n = x.shape[0]
    data = x.view(n, 784) if flat else x.view(n, 1, 28, 28)
    gen = torch.Generator().manual_seed(1)
    order = torch.randperm(n, generator=gen)

    def run(steps, start):
        t0 = time.perf_counter()
        pos = start
        for _ in range(steps):
            if pos + batch > n:
                pos = 0
            idx = order[pos:pos + batch]
            pos += batch
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(data[idx]), y[idx])
            loss.backward()
            opt.step()
        return time.perf_counter() - t0

    steps = 20
    dt = run(steps, 0)
    steps = int(seconds / REPEATS / (dt / steps)) + 1
    return statistics.median(run(steps, 0) / steps * 1e6 for _ in range(REPEATS))


def main():
    threads, seconds = 1, 2.0
    args = sys.argv[1:]
    for i in range(0, len(args) - 1, 2):
        if args[i] == "--threads":
            threads = int(args[i + 1])
        elif args[i] == "--seconds":
            seconds = float(args[i + 1])
    torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(1)
    x = torch.rand(4096, 784, generator=gen)
    y = torch.randint(0, 10, (4096,), generator=gen)
    print(f"torch version={torch.__version__} threads={torch.get_num_threads()}")
    for name, make, batch, flat in WORKLOADS:
        print(f"{name} threads={threads} us={step_us(make, batch, flat, seconds, x, y):.1f}",
              flush=True)


if __name__ == "__main__":
    main()
