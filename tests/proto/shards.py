"""The checks of a sharded run (docs/protocol.md, "Shards"): a worker that learns the chunk
table from WELCOME, pulls and pushes each shard's slice, and what the shards must refuse."""
from wire import *  # noqa: F401,F403 (the protocol's names, as client.py uses them)

# ================================================================ check 5: shards
# protocol.md "Shards": WELCOME adds shards=, chunk=, first=; shard j holds chunks [Fj, Fj+1);
# a RELEASE with MODEL carries no payload; SHARD_PULL (token) -> SHARD_SLICE (restore mark,
# floats) at that version or later; SHARD_PUSH (token, sequence number, floats) to every
# shard, nothing to the server, which answers WAIT or RELEASE; the shards' refusals (wrong
# token -> UNKNOWN, wrong length, non-finite, version not reached, repeated sequence number,
# orders from anyone but the server).


class ShardWorker:
    def __init__(self, endpoint, name):
        self.w = Worker(endpoint, name, expect_model_payload=False)
        kv = self.w.kv
        for k in ("shards", "chunk", "first"):
            need(k in kv, "sharded WELCOME lacks %s=" % k)
        self.shards = kv["shards"].split(",")
        self.chunk = int(kv["chunk"])
        self.first = [int(x) for x in kv["first"].split(",")]
        self.conns = [Conn(e, self.w.checksum) for e in self.shards]
        self.seq = 0
        self.sent = None

    def ranges(self):
        n, c = self.w.n, self.chunk
        chunks = -(-n // c)
        bounds = self.first + [chunks]
        return [(min(n, bounds[j] * c), min(n, bounds[j + 1] * c)) for j in range(len(self.shards))]

    def pull_one(self, conn):
        """Step 3: a pull refused UNKNOWN (it overtook the MEMBER) is asked again, up to 1000
        times."""
        w = self.w
        for _ in range(1000):
            conn.send(SHARD_PULL, wid=w.wid, ver=w.version, payload=struct.pack("<Q", w.token))
            m = conn.recv()
            need(m is not None, "no answer to SHARD_PULL")
            if not (m.type == ERROR and m.flags & F_UNKNOWN):
                return m
            time.sleep(0.005)
        raise CheckFailed("SHARD_PULL refused UNKNOWN 1000 times: %r" % m)

    def pull_all(self):
        """The slices a RELEASE with SENT made the shards send, else pulled (step 3)."""
        w, out = self.w, []
        sent, self.sent = self.sent, None
        for j, (conn, (lo, hi)) in enumerate(zip(self.conns, self.ranges())):
            m = sent[j] if sent else self.pull_one(conn)
            need(m.type == SHARD_SLICE, "SHARD_PULL answered %r" % m)
            need(m.ver >= w.version, "SHARD_SLICE at %d older than asked %d" % (m.ver, w.version))
            # the slice opens with its restore mark (u64: the number of the shard's last
            # RESTORE, 0 when none), then the floats
            need(len(m.payload) >= 8, "SHARD_SLICE without its restore mark")
            need(struct.unpack("<Q", m.payload[:8])[0] == 0,
                 "a restore mark in a run without restores")
            out += floats(m.payload[8:], hi - lo)
        return out

    def push_payload(self, seq, vals, token=None):
        return struct.pack("<QQ", self.w.token if token is None else token, seq) + fpack(vals)

    def push_all(self, grad, want_model=True):
        w = self.w
        self.seq += 1
        for conn, (lo, hi) in zip(self.conns, self.ranges()):
            conn.send(SHARD_PUSH, wid=w.wid, flags=F_WANT_MODEL if want_model else 0,
                      ver=w.version, payload=self.push_payload(self.seq, grad[lo:hi]))
        return self.expect_release()

    def expect_release(self):
        w = self.w
        r = w.conn.expect(RELEASE, what="(from the server after the shards' pushes)")
        need(r.ver == w.version + 1, "asp RELEASE at %d after a push at %d" % (r.ver, w.version))
        need(r.payload == b"", "sharded RELEASE carries %d bytes" % len(r.payload))
        # RELEASE row: in a sharded run a RELEASE with MODEL "carries no floats ... and names
        # the worker"
        need(r.wid == w.wid, "sharded RELEASE names worker %#x, not %d" % (r.wid, w.wid))
        w.version = r.ver
        # step 3: every shard has had this membership's push, and none is out: SENT
        need(r.flags & F_SENT or not r.flags & F_MODEL,
             "a sharded RELEASE [MODEL] after a push every shard had lacks SENT: %r" % r)
        if r.flags & F_SENT:   # RELEASE row: the shards send the slices unasked
            self.sent = [c.expect(SHARD_SLICE, what="(sent after a RELEASE with SENT)")
                         for c in self.conns]
        for conn in self.conns:
            conn.silent(0.05)   # nothing else: the shards answer the server, not the worker
        return r


def check_shard_table(env):
    sw = ShardWorker(env.sharded, "proto-shard")
    env.sw = sw
    need(len(sw.first) == len(sw.shards), "first= has %d entries for %d shards"
         % (len(sw.first), len(sw.shards)))
    need(sw.first[0] == 0 and sw.first == sorted(sw.first), "first= %r" % sw.first)
    covered = [0] * sw.w.n
    for lo, hi in sw.ranges():
        for i in range(lo, hi):
            covered[i] += 1
    need(all(c == 1 for c in covered), "the chunk table does not cover each parameter once")
    need(sw.w.first_release.payload == b"", "sharded RELEASE [MODEL] carries a payload")


def check_shard_pull(env):
    sw = env.sw
    sw.theta = sw.pull_all()
    need(len(sw.theta) == sw.w.n, "slices hold %d floats for %d params" % (len(sw.theta), sw.w.n))


def check_shard_push(env):
    sw = env.sw
    g = small_grad(sw.w.n, 2)
    sw.push_all(g)
    theta = sw.pull_all()
    want = [t - sw.w.lr * x for t, x in zip(sw.theta, g)]
    need(close_to(theta, want), "slices after one push are not theta - lr*g")
    sw.theta = theta
    sw.push_all(sw.w.zeros(), want_model=False)


def shard_refusal(conn, unknown=None):
    m = conn.expect(ERROR, what="(shard refusal)")
    if unknown is not None:
        need(bool(m.flags & F_UNKNOWN) == unknown, "shard ERROR UNKNOWN=%s expected: %r" % (unknown, m))
    return m


def check_shard_hostile(env):
    sw = env.sw
    w, c0 = sw.w, sw.conns[0]
    lo, hi = sw.ranges()[0]
    z = [0.0] * (hi - lo)
    tok = struct.pack("<Q", w.token ^ 1)
    c0.send(SHARD_PULL, wid=w.wid, ver=w.version, payload=tok)
    shard_refusal(c0, unknown=True)
    c0.send(SHARD_PULL, wid=w.wid, ver=w.version)                      # no token
    shard_refusal(c0, unknown=True)
    for payload, ver in ((sw.push_payload(900, z, token=w.token ^ 1), w.version),
                         (sw.push_payload(901, z[:-1]), w.version),
                         (sw.push_payload(902, [float("nan")] + z[1:]), w.version),
                         (sw.push_payload(903, z), w.version + 50)):
        c0.send(SHARD_PUSH, wid=w.wid, flags=F_WANT_MODEL, ver=ver, payload=payload)
        shard_refusal(c0, unknown=(payload[:8] == struct.pack("<Q", w.token ^ 1)))
    stranger = Conn(sw.shards[0])
    for mtype, payload in ((SHARD_APPLY, struct.pack("<fI", 0.1, 0)),
                           (SHARD_INIT, b"shard=0\nshards=2\n"),
                           (SHARD_MEMBER, b"")):
        stranger.send(mtype, wid=w.wid, ver=w.version + 1, payload=payload)
        shard_refusal(stranger)
    sw.push_all(sw.w.zeros())                                       # still served


def check_shard_repeat_seq(env):
    # "the last one again is ignored in silence: a worker sends it again when no answer comes":
    # twice while the first is held ...
    sw = env.sw
    w = sw.w
    sw.seq += 1
    parts = [sw.push_payload(sw.seq, [0.0] * (hi - lo)) for lo, hi in sw.ranges()]
    sw.conns[0].send(SHARD_PUSH, wid=w.wid, flags=F_WANT_MODEL, ver=w.version, payload=parts[0])
    sw.conns[0].send(SHARD_PUSH, wid=w.wid, flags=F_WANT_MODEL, ver=w.version, payload=parts[0])
    sw.conns[0].silent(0.3)
    w.conn.silent(0.3)   # step 4: no answer before every shard has reported the push
    for conn, p in zip(sw.conns[1:], parts[1:]):
        conn.send(SHARD_PUSH, wid=w.wid, flags=F_WANT_MODEL, ver=w.version, payload=p)
    sw.expect_release()
    # ... and again after that push was applied (same number, at the new version)
    for conn, p in zip(sw.conns, parts):
        conn.send(SHARD_PUSH, wid=w.wid, flags=F_WANT_MODEL, ver=w.version, payload=p)
    for conn in sw.conns:
        conn.silent(0.3)
    w.conn.silent(0.3)   # and the server never counts it
    # "a sequence number below the last one it kept from that membership" is refused
    older = [sw.push_payload(sw.seq - 1, [0.0] * (hi - lo)) for lo, hi in sw.ranges()]
    for conn, p in zip(sw.conns, older):
        conn.send(SHARD_PUSH, wid=w.wid, flags=F_WANT_MODEL, ver=w.version, payload=p)
    answers = [conn.recv(1.0) for conn in sw.conns]
    need(all(a is not None and a.type == ERROR for a in answers),
         "a SHARD_PUSH numbered below the last kept was not refused by every shard: %r" % answers)
    w.conn.silent(0.3)


def check_shard_push_older(env):
    # "no older than that of the worker's push before it": the shards hold the slices of a push
    # at version 0 after pushes at later versions; the server refuses it (ERROR to the worker,
    # not UNKNOWN) and the shards forget it
    sw = env.sw
    w = sw.w
    need(w.version >= 2, "the worker has not pushed past version 0 (version %d)" % w.version)
    sw.seq += 1
    for conn, (lo, hi) in zip(sw.conns, sw.ranges()):
        conn.send(SHARD_PUSH, wid=w.wid, flags=F_WANT_MODEL, ver=0,
                  payload=sw.push_payload(sw.seq, [0.0] * (hi - lo)))
    m = w.conn.expect(ERROR, what="(a sharded push older than the worker's last)")
    need(not m.flags & F_UNKNOWN and "never go back" in m.text(),
         "the refusal of an older push: %r %r" % (m, m.text()))
    sw.push_all(sw.w.zeros())                                       # still served


def check_shard_slices_disagree(env):
    # "every slice of one push names the same version": slices of one push at two versions are
    # refused (ERROR to the worker, not UNKNOWN; counted), and every shard forgets them
    sw = env.sw
    w = sw.w
    need(len(sw.conns) >= 2 and w.version >= 1, "needs two shards and a version past 0")
    sw.seq += 1
    for j, (conn, (lo, hi)) in enumerate(zip(sw.conns, sw.ranges())):
        conn.send(SHARD_PUSH, wid=w.wid, flags=F_WANT_MODEL, ver=w.version - (j % 2),
                  payload=sw.push_payload(sw.seq, [0.0] * (hi - lo)))
    m = w.conn.expect(ERROR, what="(slices of one push at different versions)")
    need(not m.flags & F_UNKNOWN and "different versions" in m.text(),
         "the refusal of disagreeing slices: %r %r" % (m, m.text()))
    sw.push_all(sw.w.zeros())                                       # still served


def check_shard_server_refuses_dense(env):
    # "A push is a SHARD_PUSH of each slice to its shard ..., nothing to the server"
    w = env.sw.w
    w.conn.send(PUSH, wid=w.wid, flags=F_WANT_MODEL, ver=w.version, payload=fpack(w.zeros()))
    w.conn.expect(ERROR, what="(dense PUSH to a sharded server)")
    w.conn.send(PULL, wid=w.wid, ver=w.version)
    w.conn.expect(ERROR, what="(PULL to a sharded server)")


def check_shard_status_leave(env):
    # "ctl status shows these per shard"; after LEAVE the shards forget the member
    sw = env.sw
    text = ctl(env.sharded, "status").text()
    for e in sw.shards:
        need(e in text, "status does not list shard %s" % e)
    sw.w.conn.send(LEAVE, wid=sw.w.wid, ver=sw.w.version)
    deadline = time.time() + TIMEOUT
    while time.time() < deadline:   # SHARD_MEMBER DONE reaches the shard on another link
        c = sw.conns[0]
        c.send(SHARD_PULL, wid=sw.w.wid, ver=sw.w.version, payload=struct.pack("<Q", sw.w.token))
        m = c.recv()
        need(m is not None, "no answer to a pull after LEAVE")
        if m.type == ERROR:
            need(m.flags & F_UNKNOWN, "pull after LEAVE: %r" % m)
            return
        time.sleep(0.1)
    raise CheckFailed("the shard still serves a member that left")
