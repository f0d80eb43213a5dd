#!/usr/bin/python3
"""syncwise's numbers against PyTorch's, computed apart from the C code.

usage: run.py SYNCWISE_BINARY TMPDIR (its files go to a new directory there, removed at the end)

1. eval: `syncwise eval`'s loss and accuracy of trained checkpoints (softmax, an MLP, a
   two-layer leaky MLP, a CNN on non-square images) equal PyTorch's on the same data, the
   checkpoint read from its description in include/syncwise/ckpt.h (tests/reference/ckpt.py).
2. server: a bsp server and one worker whose batch is the whole training set make full-batch
   steps; after them the server's parameters (and its optimizer's state) equal those PyTorch's
   own optimizer reaches from the same start: plain SGD, heavy-ball and Nesterov momentum, Adam,
   weight decay; the same runs on two shards (`server --shards`) reach them too.

Float32 against float64: parameters are compared with a tolerance, never bit for bit. Exits 77
(skipped) without PyTorch (`make bench` installs python3-torch).
"""
import os
import shutil
import random
import struct
import subprocess
import sys
import tempfile
import time

try:
    import torch
except ImportError:
    print("skipped: PyTorch is not installed (make bench installs python3-torch)")
    sys.exit(77)

import ckpt
from models import Net

os.makedirs(sys.argv[2], exist_ok=True)
SW, TMP = sys.argv[1], tempfile.mkdtemp(prefix="reference.", dir=sys.argv[2])
failures = 0


def check(ok, what):
    global failures
    print("%s: %s" % ("PASS" if ok else "FAIL", what))
    failures += not ok


def sw(*args):
    return subprocess.run((SW,) + args, check=True, capture_output=True, text=True).stdout


# ---------------------------------------------------------------- data sets both sides read

def write_csv(rows, n, d, classes, rng):
    path = os.path.join(TMP, "%s.csv" % rows)
    with open(path, "w") as f:
        for _ in range(n):
            y = rng.randrange(classes)
            f.write(",".join([str(y)] + ["%.6f" % rng.gauss(0.6 * y, 1) for _ in range(d)]) + "\n")
    return path


def read_csv(path):
    rows = [line.split(",") for line in open(path)]
    x = torch.tensor([[float(v) for v in r[1:]] for r in rows], dtype=torch.float64)
    return x, torch.tensor([int(r[0]) for r in rows])


def write_idx(directory, prefix, images, labels):
    n, h, w = len(labels), len(images[0]), len(images[0][0])
    with open(os.path.join(directory, prefix + "-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, h, w))
        f.write(bytes(p for img in images for row in img for p in row))
    with open(os.path.join(directory, prefix + "-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 0x801, n) + bytes(labels))


def idx_set(rng, h, w):
    """Images of 10 classes, each a bright band at its class's row among noise."""
    directory = os.path.join(TMP, "idx")
    os.makedirs(directory, exist_ok=True)
    for prefix, n in (("train", 300), ("t10k", 100)):
        labels = [rng.randrange(10) for _ in range(n)]
        images = [[[min(255, rng.randrange(60) + (180 if r // 2 == y % (h // 2) else 0))
                    for _ in range(w)] for r in range(h)] for y in labels]
        write_idx(directory, prefix, images, labels)
    x = torch.tensor([[p / 255 for row in img for p in row] for img in images],
                     dtype=torch.float64)
    return directory, x, torch.tensor(labels)


# ---------------------------------------------------------------- 1. eval

def eval_line(model_file, data):
    out = sw("eval", "--model-file", model_file, "--data", data, "--threads", "1")
    fields = out.split()
    return float(fields[fields.index("loss") + 1]), float(fields[fields.index("accuracy") + 1])


def check_eval(name, model_file, data, x, y):
    c = ckpt.read(model_file)
    net = Net(c.model, c.shape, c.classes, c.params)
    with torch.no_grad():
        loss = net.loss(x, y).item()
    acc = net.accuracy(x, y)
    got_loss, got_acc = eval_line(model_file, data)
    # eval prints 4 decimals; one example whose two best logits tie to float32 may go either way
    check(abs(got_loss - loss) <= 6e-5 and abs(got_acc - acc) <= 1.0 / len(y) + 5e-5,
          "eval %s: syncwise loss %.4f accuracy %.4f, PyTorch %.6f %.6f"
          % (name, got_loss, got_acc, loss, acc))


def evals(rng):
    train, test = write_csv("train", 300, 6, 3, rng), write_csv("test", 150, 6, 3, rng)
    csv = "csv:train=%s,test=%s,label=first" % (train, test)
    x, y = read_csv(test)
    for model in ("softmax", "mlp:h=1,u=16", "mlp:h=2,u=12/7,act=leaky"):
        out = os.path.join(TMP, "eval.ckpt")
        sw("train", "--data", csv, "--model", model, "--epochs", "2", "--lr", "0.05",
           "--out", out, "--threads", "1", "-q")
        check_eval(model, out, csv, x, y)
    directory, x, y = idx_set(rng, 16, 23)
    data = "idx:dir=%s,val=0" % directory
    out = os.path.join(TMP, "cnn.ckpt")
    sw("train", "--data", data, "--model", "cnn:c1=3,c2=4,f=6", "--epochs", "2", "--lr", "0.05",
       "--out", out, "--threads", "1", "-q")
    check_eval("cnn:c1=3,c2=4,f=6 on 16x23 images", out, data, x, y)
    return csv


# ---------------------------------------------------------------- 2. the server's optimizers

STEPS = 20
TOLERANCE = 2e-5  # float32 through 20 steps: about 3e-7 on this machine's kernels
CASES = [  # syncwise's server options, PyTorch's optimizer, and whether to run it on shards
    (["--lr", "0.05"], lambda p: torch.optim.SGD(p, lr=0.05), False),
    (["--lr", "0.05", "--momentum", "0.9", "--wd", "0.001"],
     lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, weight_decay=0.001), True),
    (["--lr", "0.05", "--momentum", "0.8", "--nesterov"],
     lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True), False),
    (["--lr", "0.01", "--optimizer", "adam"], lambda p: torch.optim.Adam(p, lr=0.01), False),
    (["--lr", "0.01", "--optimizer", "adam:beta1=0.8,beta2=0.99,eps=1e-6", "--wd", "0.001"],
     lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.001),
     True),
]


class Procs:
    def __init__(self):
        self.procs = []

    def start(self, *args):
        p = subprocess.Popen((SW,) + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.procs.append(p)
        return p

    def end(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.kill()
            p.wait()


def wait_file(path, proc, what):
    deadline = time.time() + 30
    while not os.path.exists(path) or not os.path.getsize(path):
        if proc.poll() is not None or time.time() > deadline:
            raise RuntimeError("%s: %s" % (what, proc.stderr.read().decode()))
        time.sleep(0.02)


def endpoint(path, proc, what):
    wait_file(path, proc, what)
    return open(path).read().strip()


def serve(tag, csv, options, shards):
    """A server's full-batch run of STEPS applies: its start and its end, read from its files."""
    procs, eps = Procs(), []
    try:
        for j in range(shards):
            ep_file = os.path.join(TMP, "%s-shard%d.ep" % (tag, j))
            p = procs.start("shard", "--bind", "tcp://127.0.0.1:*", "--endpoint-file", ep_file,
                            "--checkpoint", os.path.join(TMP, "%s-shard%d.ckpt" % (tag, j)))
            eps.append(endpoint(ep_file, p, "shard %d" % j))
        ep_file, record = os.path.join(TMP, tag + ".ep"), os.path.join(TMP, tag + ".ckpt")
        server = procs.start(
            "server", "--bind", "tcp://127.0.0.1:*", "--endpoint-file", ep_file, "--policy", "bsp",
            "--data", csv + ",val=0", "--model", "mlp:h=1,u=8", "--batch", "300",
            "--max-applies", str(STEPS), "--checkpoint", record, "--eval-every", "1000",
            "--threads", "1", *(("--shards", ",".join(eps)) if shards else ()), *options)
        at = endpoint(ep_file, server, "server")
        start = None
        if not shards:  # saved before any worker is released: version 0
            wait_file(record, server, "server")
            start = ckpt.read(record)
        worker = procs.start("worker", "--connect", at, "--threads", "1", "-q")
        if server.wait(120) or worker.wait(30):
            raise RuntimeError("the run failed: %s" % server.stderr.read().decode())
        return start, ckpt.read(record + ".model" if shards else record)
    finally:
        procs.end()


def reference(start, x, y, make_optim):
    net = Net(start.model, start.shape, start.classes, start.params)
    optim = make_optim([net.theta])
    for _ in range(STEPS):
        optim.zero_grad()
        net.loss(x, y).backward()
        optim.step()
    return net.theta.detach(), optim.state[net.theta]


def far(got, want):
    """The largest difference, relative to the parameters' largest magnitude."""
    got = torch.tensor(got, dtype=torch.float64)
    return ((got - want).abs().max() / want.abs().max().clamp(min=1e-30)).item()


def servers(csv):
    x, y = read_csv(csv.split("train=")[1].split(",")[0])
    for i, (options, make_optim, on_shards) in enumerate(CASES):
        name = " ".join(options)
        start, end = serve("run%d" % i, csv, options, 0)
        check(start.version == 0 and end.version == STEPS,
              "%s: the server saved its start (version %d) and made %d applies (version %d)"
              % (name, start.version, STEPS, end.version))
        theta, state = reference(start, x, y, make_optim)
        gap = far(end.params, theta)
        check(gap < TOLERANCE, "%s: %d full-batch steps reach PyTorch's parameters (%.1e apart)"
              % (name, STEPS, gap))
        moments = [state[k] for k in ("momentum_buffer", "exp_avg", "exp_avg_sq") if state.get(k) is not None]
        gaps = [far(s, m) for s, m in zip(end.state, moments)]
        check(len(end.state) == len(moments) and all(g < TOLERANCE for g in gaps),
              "%s: the optimizer's state saved is PyTorch's (%d arrays, %s apart)"
              % (name, len(moments), ", ".join("%.1e" % g for g in gaps) or "none"))
        if on_shards:
            _, sharded = serve("sharded%d" % i, csv, options, 2)
            gap = far(sharded.params, theta)
            check(sharded.version == STEPS and gap < TOLERANCE,
                  "%s on 2 shards: version %d, PyTorch's parameters (%.1e apart)"
                  % (name, sharded.version, gap))


def main():
    torch.manual_seed(0)
    rng = random.Random(20261130)
    try:
        servers(evals(rng))
    finally:
        shutil.rmtree(TMP)
    print("%d check(s) failed" % failures if failures else "every check passed")
    return 1 if failures else 0


sys.exit(main())
