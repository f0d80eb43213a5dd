"""The wire of syncwise's protocol, written from docs/protocol.md alone: its constants, the
CRC-32C, frames, a connection, a worker, and the bookkeeping of named checks (for client.py
and shards.py, the checks)."""
import math
import random
import re
import struct
import time
import traceback

import zmq

# ---------------------------------------------------------------- constants (protocol.md)

MAGIC = b"SWNP"
PROTO = 1
HDR = struct.Struct("<4sHHIIQQII")  # magic, version, type, worker, flags, model version, len, crc, reserved
assert HDR.size == 40
NOID = 0xFFFFFFFF

JOIN, WELCOME, PULL, MODEL_MSG, PUSH, WAIT, RELEASE, HEARTBEAT, LEAVE, ERROR, CTL, CTL_REPLY = range(1, 13)
PUSH_SPARSE, PULL_SPARSE, MODEL_SPARSE = 13, 14, 15
SHARD_INIT, SHARD_MEMBER, SHARD_APPLY, SHARD_PUSH, SHARD_PULL, SHARD_SLICE = 22, 24, 25, 26, 28, 29
TYPE_NAMES = {1: "JOIN", 2: "WELCOME", 3: "PULL", 4: "MODEL", 5: "PUSH", 6: "WAIT", 7: "RELEASE",
              8: "HEARTBEAT", 9: "LEAVE", 10: "ERROR", 11: "CTL", 12: "CTL_REPLY", 13: "PUSH_SPARSE",
              14: "PULL_SPARSE", 15: "MODEL_SPARSE", 29: "SHARD_SLICE"}

F_MODEL, F_DROPPED, F_WANT_MODEL, F_UNKNOWN, F_DONE, F_UNCHECKED, F_WANT_NORMS = 1, 2, 4, 8, 16, 32, 64
F_SENT = 128
ALL_FLAGS = 255

WELCOME_KEYS = ["worker", "slots", "data", "model", "batch", "lr", "wd", "seed", "params",
                "batch_mode", "token", "checksum"]
OPTIONAL_KEYS = ["data_crc"]  # absent for generated data sets
SHARDED_KEYS = ["shards", "chunk", "first"]   # what a sharded run's WELCOME adds
TIMEOUT = 5.0  # generous: every answer the doc promises comes "at once"

# ---------------------------------------------------------------- CRC-32C


def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = _crc_table()


def crc32c(data):
    c = 0xFFFFFFFF
    t = CRC_TABLE
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283, "CRC-32C check value"

# ---------------------------------------------------------------- results


class CheckFailed(Exception):
    pass


def need(cond, what):
    if not cond:
        raise CheckFailed(what)


RESULTS = []   # (name, ok, why)


def run_check(name, fn, *args):
    t0 = time.time()
    try:
        fn(*args)
        RESULTS.append((name, True, ""))
        print("PASS  %-48s %5.2f s" % (name, time.time() - t0), flush=True)
    except CheckFailed as e:
        RESULTS.append((name, False, str(e)))
        print("FAIL  %-48s %s" % (name, e), flush=True)
    except Exception as e:  # a crash of the client is a failed check too, with its trace
        RESULTS.append((name, False, repr(e)))
        print("FAIL  %-48s %r" % (name, e), flush=True)
        traceback.print_exc()
    return RESULTS[-1][1]


def run_group(checks, env):
    """Runs (name, check) pairs in order; the first sets up what the others need, so when it
    fails they are not run."""
    for k, (name, fn) in enumerate(checks):
        if not run_check(name, fn, env) and k == 0:
            return

# ---------------------------------------------------------------- frames


def frame(mtype, wid=NOID, flags=0, ver=0, payload=b"", magic=MAGIC, proto=PROTO,
          crc=None, length=None, reserved=0, unchecked=False):
    """One message as protocol.md's header table lays it out; any field can be forged."""
    if unchecked:
        flags |= F_UNCHECKED
        crc = 0 if crc is None else crc
    if crc is None:
        crc = crc32c(payload)
    if length is None:
        length = len(payload)
    return HDR.pack(magic, proto, mtype, wid, flags, ver, length, crc, reserved) + payload


class Msg:
    def __init__(self, raw):
        need(len(raw) >= 40, "server sent a %d-byte frame, shorter than a header" % len(raw))
        (self.magic, self.proto, self.type, self.wid, self.flags, self.ver, self.length,
         self.crc, self.reserved) = HDR.unpack(raw[:40])
        self.payload = raw[40:]
        self.raw = raw

    def text(self):
        # "text payloads are UTF-8 without a terminating zero"
        need(not self.payload.endswith(b"\0"), "text payload ends with a zero byte")
        try:
            return self.payload.decode("utf-8")
        except UnicodeDecodeError:
            raise CheckFailed("text payload is not UTF-8: %r" % self.payload[:80])

    def __repr__(self):
        p = self.payload if self.type in (WELCOME, ERROR, CTL_REPLY) else "%d bytes" % len(self.payload)
        return "%s(wid=%#x flags=%d ver=%d %s)" % (TYPE_NAMES.get(self.type, self.type), self.wid,
                                                 self.flags, self.ver, p)


def floats(payload, count=None):
    need(len(payload) % 4 == 0, "float payload of %d bytes" % len(payload))
    vals = struct.unpack("<%df" % (len(payload) // 4), payload)
    if count is not None:
        need(len(vals) == count, "%d floats where %d were expected" % (len(vals), count))
    need(all(math.isfinite(v) for v in vals), "a float payload from the server is not finite")
    return list(vals)


def fpack(vals):
    return struct.pack("<%df" % len(vals), *vals)


CTX = zmq.Context.instance()


class Conn:
    """A DEALER socket. `checksum` is what the run agreed (None: not told yet, accept either)."""

    def __init__(self, endpoint, checksum=None):
        self.sock = CTX.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(endpoint)
        self.checksum = checksum
        # HEARTBEAT row: "a worker ignores a HEARTBEAT on its own connection" (the server's
        # probe): set on a member's own connection, whose probes are counted and skipped
        self.member = False
        self.probes = 0

    def send(self, mtype, **kw):
        kw.setdefault("unchecked", self.checksum == "off")
        self.sock.send(frame(mtype, **kw))

    def send_raw(self, data):
        if isinstance(data, list):
            self.sock.send_multipart(data)
        else:
            self.sock.send(data)

    def recv(self, timeout=TIMEOUT):
        """The next message, checked against the header rules, or None after `timeout`."""
        end = time.time() + timeout
        while True:
            m = self._recv_one(max(0.0, end - time.time()))
            if m is None or not (self.member and m.type == HEARTBEAT):
                return m
            self.probes += 1

    def _recv_one(self, timeout):
        if not self.sock.poll(int(timeout * 1000)):
            return None
        parts = self.sock.recv_multipart()
        need(len(parts) == 1, "server sent a %d-frame message" % len(parts))
        m = Msg(parts[0])
        need(m.magic == MAGIC, "server frame has magic %r" % m.magic)
        need(m.proto == PROTO, "server frame has protocol version %d" % m.proto)
        need(m.reserved == 0, "server frame has reserved field %#x" % m.reserved)
        need(m.length == len(m.payload), "server frame length field %d, payload %d"
             % (m.length, len(m.payload)))
        need(m.flags & ~ALL_FLAGS == 0, "server frame has undefined flags %#x" % m.flags)
        self._check_sum(m)
        return m

    def _check_sum(self, m):
        # "Payload checksums: agreed at join"
        if m.flags & F_UNCHECKED:
            need(m.crc == 0, "UNCHECKED frame with a non-zero checksum %#x" % m.crc)
            need(self.checksum != "on", "UNCHECKED %r on a run that agreed checksum=on" % m)
        else:
            need(m.crc == crc32c(m.payload), "bad CRC-32C from the server on %r" % m)
            need(self.checksum != "off", "checksummed %r on a run that agreed checksum=off" % m)

    def expect(self, mtype, timeout=TIMEOUT, what=""):
        m = self.recv(timeout)
        need(m is not None, "no %s within %.0f s %s" % (TYPE_NAMES.get(mtype, mtype), timeout, what))
        need(m.type == mtype, "expected %s %s, got %r" % (TYPE_NAMES.get(mtype, mtype), what, m))
        return m

    def silent(self, timeout):
        m = self.recv(timeout)
        need(m is None, "expected silence, got %r" % m)

    def close(self):
        self.sock.close(0)

# ---------------------------------------------------------------- a worker


def parse_kv(text):
    kv = {}
    for line in text.splitlines():
        need("=" in line, "WELCOME line without '=': %r" % line)
        k, v = line.split("=", 1)
        kv[k] = v
    return kv


class Worker:
    """JOIN, WELCOME and the first RELEASE (protocol.md, "Messages" and "A round")."""

    def __init__(self, endpoint, name, expect_model_payload=True, held=False):
        self.endpoint = endpoint
        self.conn = Conn(endpoint)
        self.conn.send(JOIN, payload=name.encode())
        w = self.conn.expect(WELCOME, what="after JOIN")
        self.welcome_msg = w
        self.kv = parse_kv(w.text())
        for k in WELCOME_KEYS:
            need(k in self.kv, "WELCOME lacks the documented key %r: %r" % (k, w.text()))
        extra = set(self.kv) - set(WELCOME_KEYS) - set(SHARDED_KEYS) - set(OPTIONAL_KEYS)
        need(not extra, "WELCOME has keys the WELCOME row does not list: %s" % sorted(extra))
        is_file = not re.match("(synthetic|sparse)(:|$)", self.kv["data"])
        need(("data_crc" in self.kv) == is_file, "data_crc is given for a data set read from "
             "files, and only then: data=%s" % self.kv["data"])
        need(re.fullmatch("[0-9a-f]{8}", self.kv.get("data_crc", "00000000")),
             "data_crc is not 8 hex digits: %r" % self.kv.get("data_crc"))
        self.wid = int(self.kv["worker"])
        need(w.wid == self.wid, "WELCOME header worker %#x, text worker=%d" % (w.wid, self.wid))
        self.token = int(self.kv["token"])
        need(0 <= self.token < 2 ** 64, "token is not a 64-bit number")
        self.n = int(self.kv["params"])
        self.lr = float(self.kv["lr"])
        self.checksum = self.kv.get("checksum")
        self.conn.checksum = self.checksum
        self.conn.member = True
        self.version, self.theta = w.ver, None
        if not held:
            self.take_first_release(self.conn.expect(RELEASE, what="after WELCOME"),
                                    expect_model_payload)

    def take_first_release(self, r, expect_model_payload=True):
        need(r.type == RELEASE and r.flags & F_MODEL, "first RELEASE lacks MODEL: %r" % r)
        self.version = r.ver
        if expect_model_payload:
            need(r.wid == NOID, "RELEASE carrying parameters has worker %#x, not 0xffffffff" % r.wid)
            self.theta = floats(r.payload, self.n)
        self.first_release = r

    def push(self, grad, want_model=True, ver=None, **kw):
        flags = F_WANT_MODEL if want_model else 0
        self.conn.send(PUSH, wid=self.wid, flags=flags,
                       ver=self.version if ver is None else ver, payload=fpack(grad), **kw)

    def push_and_release(self, grad, want_model=True):
        """asp: every push is applied on arrival and answered RELEASE at the next version."""
        self.push(grad, want_model)
        r = self.conn.expect(RELEASE, what="after an honest PUSH")
        need(r.ver == self.version + 1, "asp RELEASE at version %d after a push at %d"
             % (r.ver, self.version))
        if want_model:
            need(r.flags & F_MODEL, "RELEASE after a WANT_MODEL push lacks MODEL: %r" % r)
            need(r.wid == NOID, "RELEASE with MODEL has worker %#x, not 0xffffffff" % r.wid)
            self.theta = floats(r.payload, self.n)
        else:
            need(not r.flags & F_MODEL and r.payload == b"",
                 "RELEASE after a push without WANT_MODEL: %r" % r)
        self.version = r.ver
        return r

    def zeros(self):
        return [0.0] * self.n


def small_grad(n, seed):
    rnd = random.Random(seed)
    return [round(rnd.uniform(-1.0, 1.0), 3) for _ in range(n)]


def close_to(a, b, tol=2e-5):
    return len(a) == len(b) and all(abs(x - y) <= tol * (1 + abs(y)) for x, y in zip(a, b))


def ctl(endpoint, command):
    """CTL from a fresh DEALER socket: the answer (CTL_REPLY or ERROR)."""
    c = Conn(endpoint)
    c.send(CTL, payload=command.encode())
    m = c.recv()
    need(m is not None, "no answer to CTL %r" % command)
    c.close()
    return m


def status_number(endpoint, label):
    """A number of `ctl status` (its text's format is not documented: 'refused messages N')."""
    m = ctl(endpoint, "status")
    need(m.type == CTL_REPLY, "CTL status answered %r" % m)
    found = re.search(label + r" (\d+)", m.text())
    need(found, "status text has no '%s N': %r" % (label, m.text()[:300]))
    return int(found.group(1))


def refused_count(endpoint):
    return status_number(endpoint, "refused messages")
