"""A sharded server's control plane against a shard of the client's own (protocol.md, "Shards",
step 5), so that the client decides when each report reaches the server: a push every shard
reported while an apply's norms are due waits for them under a policy that reads them (DBW),
and is answered at once under one that does not (bsp)."""
import os
import subprocess
import time

from wire import *  # noqa: F401,F403 (the protocol's names, as client.py uses them)

SHARD_SET, SHARD_PUSHED, SHARD_PING, SHARD_STATE, SHARD_APPLIED, BATCH = 23, 27, 30, 32, 34, 36
SHARD_SAVE, SHARD_RESTORE, SHARD_SEND = 31, 33, 37
NONE_SAVED = 2 ** 64 - 1


def slice_of(init):
    """Where shard `shard=` of INIT's chunk table starts and how many parameters it holds
    (Shards: chunks of `chunk` floats, shard j holding chunks first[j] to first[j+1])."""
    chunk, params = int(init["chunk"]), int(init["params"])
    first = [int(f) for f in init["first"].split(",")]
    j = int(init["shard"])
    at = first[j] * chunk
    end = first[j + 1] * chunk if j + 1 < len(first) else params
    return at, min(end, params) - at


class FakeShard:
    """One shard of a one-shard run: a ROUTER the server dials. It answers PINGs, SAVEs and
    RESTOREs with SHARD_STATE (steps 7-9) unless told to be silent, and gathers with the slice
    SET gave, and keeps the members' tokens and the members it is ordered to send slices
    (SHARD_SEND: version, worker, token); every other order (RESTORE included) the check
    reads. `awaiting` plays a shard started again with --resume."""

    def __init__(self):
        self.sock = CTX.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        port = self.sock.bind_to_random_port("tcp://127.0.0.1")
        self.endpoint = "tcp://127.0.0.1:%d" % port
        self.server_id = None
        self.checksum = None
        self.run = 0
        self.version = 0
        self.tokens = {}
        self.theta = b""   # the slice SET gave (the check's applies change nothing)
        self.gather_bytes = None   # how much of it a gather gets: all
        self.gather_versions = []  # the versions the next gathers are answered at (then .version)
        self.hold_gathers = False  # gathers kept in held_gathers, answered by answer_gather
        self.held_gathers = []
        self.pending = []
        self.sends = []
        self.saved = NONE_SAVED   # the newest SAVE's version
        self.awaiting = 0
        self.restores = 0
        self.restore_no = 0
        self.silent = False       # PINGs go unanswered: a shard stopped (SIGSTOP) for a while
        self.unread = []          # RESTOREs not taken yet (hold_restores): read, not acted on
        self.hold_restores = False
        self.index = 0            # the shard's place in --shards (INIT tells it)
        self.at = self.params = 0  # its slice: where it starts, how long (INIT's table)

    def _unbatch(self, m):
        """protocol.md's BATCH row: messages, each padded with zeros to a multiple of 8."""
        out, at, p = [], 0, m.payload
        while at < len(p):
            need(len(p) - at >= 40, "a batch's message shorter than a header")
            inner = Msg(p[at:at + 40 + HDR.unpack(p[at:at + 40])[6]])
            need(inner.type != BATCH, "a BATCH inside a BATCH")
            out.append(inner)
            at += 40 + inner.length
            at += -at % 8
        return out

    def _read(self, timeout):
        if not self.sock.poll(int(timeout * 1000)):
            return False
        parts = self.sock.recv_multipart()
        need(len(parts) == 2, "the server sent the shard a %d-part message" % (len(parts) - 1))
        need(self.server_id in (None, parts[0]), "a second connection spoke to the shard")
        self.server_id = parts[0]
        m = Msg(parts[1])
        need(m.magic == MAGIC and m.length == len(m.payload), "a malformed order: %r" % m)
        for x in self._unbatch(m) if m.type == BATCH else [m]:
            if x.type == SHARD_PING:
                if not self.silent:
                    self.send_state()
            elif x.type == SHARD_SAVE:
                self.saved = x.ver
                self.send_state()
            elif x.type == SHARD_PULL and x.wid == NOID and self.hold_gathers:
                self.held_gathers.append(x)
            elif x.type == SHARD_PULL and x.wid == NOID:   # a gather (step 6): the slice
                self.answer_gather(self.gather_versions.pop(0) if self.gather_versions
                                   else self.version)
            elif x.type == SHARD_SEND:   # u32 n, then n (u32 worker, u64 token)
                n = struct.unpack("<I", x.payload[:4])[0]
                need(len(x.payload) == 4 + 12 * n, "a SHARD_SEND of %d bytes for %d members"
                     % (len(x.payload), n))
                self.sends += [(x.ver,) + struct.unpack("<IQ", x.payload[4 + 12 * i:16 + 12 * i])
                               for i in range(n)]
            elif x.type == SHARD_MEMBER and x.wid != NOID:   # a member in, or gone
                if x.flags & F_DONE:
                    self.tokens.pop(x.wid, None)
                else:
                    self.tokens[x.wid] = x.ver
            else:
                if x.type == SHARD_INIT:   # the run a PING names, and the link's checksums
                    kv = parse_kv(x.text())
                    self.run, self.checksum, self.version = int(kv["run"]), kv["checksum"], x.ver
                    self.index = int(kv["shard"])
                    self.at, self.params = slice_of(kv)
                if x.type == SHARD_SET:
                    self.theta = x.payload
                if x.type == SHARD_RESTORE and self.hold_restores:
                    self.unread.append(x)
                elif x.type == SHARD_RESTORE:   # u64 run, u64 from, u64 number, ...
                    self.take_restore(x)
                self.pending.append(x)
        return True

    def answer_gather(self, ver):
        self.send(SHARD_SLICE, ver=ver,
                  payload=struct.pack("<Q", 0) + self.theta[:self.gather_bytes])

    def expect(self, mtype, timeout=TIMEOUT, what=""):
        """The next order other than a PING or a MEMBER, which must be of type mtype."""
        end = time.time() + timeout
        while not self.pending and self._read(max(0.0, end - time.time())):
            pass
        need(self.pending, "the shard got no order %d within %.0f s %s" % (mtype, timeout, what))
        m = self.pending.pop(0)
        need(m.type == mtype, "the shard expected order %d %s, got %r" % (mtype, what, m))
        return m

    def settle(self, seconds):
        """Reads what comes for a while (PINGs are answered meanwhile)."""
        end = time.time() + seconds
        while time.time() < end:
            self._read(max(0.0, end - time.time()))

    def send(self, mtype, wid=NOID, flags=0, ver=0, payload=b""):
        data = frame(mtype, wid=wid, flags=flags, ver=ver, payload=payload,
                     unchecked=self.checksum == "off")
        self.sock.send_multipart([self.server_id, data])

    def take_unread_restore(self):
        """The RESTORE read without taking it (restore_read_not_taken), taken now; later ones
        are taken as they come."""
        self.hold_restores = False
        self.take_restore(self.unread.pop(0))

    def take_restore(self, x):
        self.restore_no = struct.unpack("<Q", x.payload[16:24])[0]
        self.version, self.awaiting, self.restores = x.ver, 0, self.restores + 1
        self.send_state()

    def send_state(self):
        self.send(SHARD_STATE, ver=self.version, payload=struct.pack(
            "<13Q", self.run, self.saved, 0, 0, 0, self.restores, self.awaiting, self.index,
            self.restore_no, NONE_SAVED, 0, self.at, self.params))

    def pushed(self, w, seq, went_to=1):
        """SHARD_PUSHED: this shard holds w's push `seq`, computed at w's version, which went to
        the shards of the set `went_to` (bit i: shard i)."""
        self.send(SHARD_PUSHED, wid=w.wid, flags=F_WANT_MODEL, ver=w.version,
                  payload=struct.pack("<QQQ", self.tokens[w.wid], seq, went_to))

    def close(self):
        self.sock.close(0)


class Server:
    """A server of one shard (the client's), or of more (`more`), for two workers; its endpoint
    once it wrote it."""

    def __init__(self, env, shard, policy, name, extra=(), more=()):
        ep_file = os.path.join(env.tmp, "control-%s.ep" % name)
        self.log_path = os.path.join(env.tmp, "control-%s.log" % name)
        if os.path.exists(ep_file):   # an earlier run's
            os.remove(ep_file)
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(
                [env.binary, "server", "--bind", "tcp://127.0.0.1:*", "--endpoint-file", ep_file,
                 "--shards", ",".join(x.endpoint for x in [shard] + list(more)),
                 "--policy", policy,
                 "--data", "synthetic:task=logistic,d=10,n=200", "--model", "mlp:h=1,u=5",
                 "--threads", "1", "--eval-every", "30", "--max-time", "55",
                 "--wait-workers", "2", "--heartbeat-timeout", "30"] + list(extra),
                stdout=log, stderr=subprocess.STDOUT)
        env.children.append(self.proc)
        for _ in range(200):
            if os.path.exists(ep_file) and open(ep_file).read().strip():
                self.endpoint = open(ep_file).read().strip()
                return
            for x in [shard] + list(more):
                x.settle(0.05 / (1 + len(more)))
        raise CheckFailed("the server wrote no endpoint within 10 s")

    def ends_naming(self, shard, why, timeout=20):
        """protocol.md: a shard that sends anything the protocol does not allow ends the run,
        naming the shard."""
        end = time.time() + timeout
        while self.proc.poll() is None and time.time() < end:
            shard.settle(0.05)
        need(self.proc.poll() is not None, "the server went on for %.0f s after the shard %s"
             % (timeout, why))
        need(self.proc.returncode != 0, "the server ended with status 0 after the shard %s" % why)
        text = open(self.log_path).read()
        need("shard 0" in text and why in text, "the server's last words do not name shard 0 "
             "and say it %s: %r" % (why, text[-400:]))


def first_apply(env, policy, extra=(), name=None):
    """INIT and SET to the shard, two workers in, both pushes reported: the apply of version 1,
    its order, and the shard, the workers and the order, for the check to go on."""
    shard = FakeShard()
    shard.server = Server(env, shard, policy, name or policy.split(":")[0], extra)
    endpoint = shard.server.endpoint
    init = shard.expect(SHARD_INIT, what="(the run)")
    kv = parse_kv(init.text())
    need(kv.get("shard") == "0" and kv.get("shards") == "1", "INIT of a one-shard run: %r" % kv)
    shard.expect(SHARD_SET, what="(the slice of theta0)")
    a = Worker(endpoint, "control-a", expect_model_payload=False, held=True)
    b = Worker(endpoint, "control-b", expect_model_payload=False, held=True)
    for w in (a, b):
        r = w.conn.expect(RELEASE, what="once both joined")
        # step 3: no shard has had a push of theirs yet, so none can send them a slice
        need(not r.flags & F_SENT, "a first RELEASE says SENT: %r" % r)
        w.take_first_release(r, False)
    shard.settle(0.1)
    need(a.wid in shard.tokens and b.wid in shard.tokens, "no SHARD_MEMBER before the WELCOMEs")
    shard.pushed(a, 1)
    a.conn.expect(WAIT, what="(one of the two pushes an apply of both needs)")
    shard.pushed(b, 1)
    for w in (a, b):
        r = w.conn.expect(RELEASE, what="(both pushes in: the apply)")
        need(r.ver == 1, "RELEASE at version %d after the first apply" % r.ver)
        need(r.flags & F_MODEL and r.flags & F_SENT,
             "a RELEASE after a push every shard reported lacks MODEL or SENT: %r" % r)
        w.version = 1
    order = shard.expect(SHARD_APPLY, what="(the first apply)")
    need(order.ver == 1 and struct.unpack("<fI", order.payload[:8])[1] == 2,
         "the first apply's order: %r" % order)
    # RELEASE [MODEL, SENT]: the shards were told to send both their slices of version 1
    shard.settle(0.1)
    for w in (a, b):
        need((1, w.wid, shard.tokens[w.wid]) in shard.sends,
             "no SHARD_SEND of version 1 naming worker %d: %r" % (w.wid, shard.sends))
    shard.version = 1
    return shard, a, b, order


def check_push_waits_for_norms(env):
    shard, a, b, order = first_apply(env, "dbw")
    need(order.flags & F_WANT_NORMS, "a DBW apply's order lacks WANT_NORMS: %r" % order)
    shard.pushed(a, 2)   # reported before the shard's norms of version 1
    a.conn.silent(1.0)
    shard.send(SHARD_APPLIED, ver=1, payload=struct.pack("<dd", 3.0, 2.5))
    r = a.conn.recv()
    need(r is not None and r.type in (WAIT, RELEASE),
         "no WAIT or RELEASE for the push that waited, once the norms came: %r" % r)
    shard.close()


def check_push_answered_without_norms(env):
    shard, a, b, order = first_apply(env, "bsp")
    need(not order.flags & F_WANT_NORMS, "a bsp apply's order asks for norms: %r" % order)
    shard.pushed(a, 2)
    a.conn.expect(WAIT, what="(bsp reads no norms: the push is decided at once)")
    shard.close()


def released(shard, sent, what):
    """Each (worker, whether its RELEASE must say SENT) released at bsp's next apply, and the
    shard ordered to send its slice of that version to those and no others."""
    for w, want in sent:
        r = w.conn.expect(RELEASE, what=what)
        need(r.flags & F_MODEL, "a RELEASE after a push wanting the model lacks MODEL: %r" % r)
        need(bool(r.flags & F_SENT) == want, "worker %d's RELEASE %s SENT %s: %r"
             % (w.wid, "lacks" if want else "says", what, r))
        w.version = r.ver
    apply = shard.expect(SHARD_APPLY, what=what)
    shard.settle(0.1)
    named = sorted(x for x in shard.sends if x[0] == apply.ver)
    want = sorted((apply.ver, w.wid, shard.tokens[w.wid]) for w, x in sent if x)
    need(named == want, "SHARD_SEND of version %d %s named %r, not %r"
         % (apply.ver, what, named, want))


def checkpointed_bsp(env, name):
    """first_apply under bsp with a checkpoint every apply (a file of its own, fresh), the
    SAVE of version 1 answered: the shard and the workers."""
    ckpt = os.path.join(env.tmp, "control-%s.ckpt" % name)
    if os.path.exists(ckpt):
        os.remove(ckpt)
    shard, a, b, _ = first_apply(env, "bsp", ["--checkpoint", ckpt, "--checkpoint-applies", "1"],
                                 name)
    shard.settle(0.6)   # the SAVE of version 1, answered
    need(shard.saved == 1, "no SAVE of version 1 under --checkpoint-applies 1: %r" % shard.saved)
    return shard, a, b


def restore_read_not_taken(shard):
    """The shard, started again, asks for a RESTORE and reads it without taking it yet (kept in
    shard.unread): what it sends now precedes its STATE with the restore's number."""
    shard.hold_restores = True
    shard.awaiting = 1
    shard.expect(SHARD_RESTORE, timeout=5, what="(to a shard that awaits one)")
    shard.awaiting = 0


def check_sent_across_restore(env):
    """Steps 3 and 9: a shard started again from its checkpoint knows no worker's connection,
    so after its RESTORE the server says SENT only to a worker whose push the shard reported
    since, and never to one whose push it reported before."""
    shard, a, b = checkpointed_bsp(env, "restore")
    shard.pushed(a, 2)
    a.conn.expect(WAIT, what="(bsp: b's push is still to come)")
    shard.awaiting = 1   # the shard was started again with --resume: its next STATE says so
    restore = shard.expect(SHARD_RESTORE, timeout=5, what="(to a shard that awaits one)")
    need(struct.unpack("<Q", restore.payload[8:16])[0] == 1,
         "a RESTORE not from the checkpoint of version 1: %r" % restore)
    shard.pushed(b, 2)
    released(shard, ((a, False), (b, True)), "(a's push reported before the restore, b's after)")
    shard.pushed(a, 3)
    a.conn.expect(WAIT, what="(bsp: b's push is still to come)")
    shard.pushed(b, 3)
    released(shard, ((a, True), (b, True)), "(both pushes reported since the restore)")
    shard.close()


def check_report_before_restore_ignored(env):
    """Step 9: what a shard reports before it takes a RESTORE (its SHARD_STATE with the
    restore's number comes first after it) predates the restore, maybe from the process the
    restore replaced over a connection since broken: the server counts none of it. The
    workers, unanswered, send their pushes again; reported again after the restore, they
    are counted."""
    shard, a, b = checkpointed_bsp(env, "early")
    restore_read_not_taken(shard)
    shard.pushed(a, 2)
    shard.pushed(b, 2)
    for w in (a, b):
        w.conn.silent(0.5)   # bsp would release both at once had the reports counted
    shard.take_unread_restore()
    shard.pushed(a, 2)   # sent again by its worker, reported again
    a.conn.expect(WAIT, what="(bsp: b's push is still to come)")
    shard.pushed(b, 2)
    released(shard, ((a, True), (b, True)), "(both pushes reported again after the restore)")
    shard.close()


def check_out_of_step_refusal_before_restore(env):
    """Step 9: a shard's refusal flagged DROPPED (out of step: an order it missed went before)
    while it has not taken the RESTORE the server sent is moot, as orders ZeroMQ kept across a
    broken connection reach the shard before that RESTORE: the run goes on. The same refusal
    once the shard has taken it ends the run (hostile-shard/refusal: unflagged, at any time)."""
    shard, a, b = checkpointed_bsp(env, "step")
    restore_read_not_taken(shard)
    shard.send(ERROR, flags=F_DROPPED, ver=3, payload=b"an apply of a version that is not the "
               b"next one")
    shard.take_unread_restore()
    shard.pushed(a, 2)
    a.conn.expect(WAIT, what="(bsp: the run went on after a refusal the restore made moot)")
    shard.pushed(b, 2)
    released(shard, ((a, True), (b, True)), "(the run went on after the moot refusal)")
    shard.send(ERROR, flags=F_DROPPED, ver=9, payload=b"out of step, restore taken")
    shard.server.ends_naming(shard, "refused the server's order")
    shard.close()


def check_restore_it_cannot_take(env):
    """Step 9: a shard neither of whose files holds a RESTORE's version (its FILE damaged) says
    so in SHARD_STATE (awaiting, the versions it holds, that RESTORE's number as the one it
    could not take): the server sends a new RESTORE of the newer version it holds below; and
    when it holds none older, the run ends, naming it."""
    shard, a, b = checkpointed_bsp(env, "unable")
    shard.hold_restores = True
    shard.awaiting = 1   # started again, its FILE (version 1) damaged: it read FILE.prev (0)
    first = shard.expect(SHARD_RESTORE, timeout=5, what="(to a shard that awaits one)")
    frm, number = struct.unpack("<QQ", first.payload[8:24])
    need(frm == 1, "a RESTORE not from the checkpoint of version 1: %r" % first)

    def unable(newest, number):
        shard.send(SHARD_STATE, ver=shard.version, payload=struct.pack(
            "<13Q", shard.run, newest, 0, 0, 0, shard.restores, 1, 0, shard.restore_no,
            NONE_SAVED, number, shard.at, shard.params))

    unable(0, number)
    second = shard.expect(SHARD_RESTORE, timeout=5, what="(after one it could not take)")
    frm, again = struct.unpack("<QQ", second.payload[8:24])
    need(frm == 0 and again != number, "after a RESTORE it could not take, one from %d "
         "numbered %d, not one from 0 under a new number" % (frm, again))
    unable(0, again)
    shard.server.ends_naming(shard, "cannot go back to version 0")
    shard.close()


def state(sh, run=None, index=0, length=None):
    """SHARD_STATE's thirteen u64 (step 7) from shard sh: run, newest checkpoint, bytes in and
    out, refused, restores taken, awaiting, index, the last restore's number, FILE.prev's
    checkpoint, the last restore it could not take, where its slice starts and its length."""
    return struct.pack("<13Q", sh.run if run is None else run, NONE_SAVED, 0, 0, 0, 0, 0, index,
                       0, NONE_SAVED, 0, sh.at, sh.params if length is None else length)


def hostile_shard_cases():
    """(name, what the server must say the shard did, what the shard sends once the run is
    set up) for every way protocol.md lets a shard break the run."""
    def pushed(payload, wid=0):
        return lambda sh: sh.send(SHARD_PUSHED, wid=wid, ver=0, payload=payload)
    token = struct.pack("<QQ", 1, 1)
    return [
        ("push-report-short", "reported a push the protocol does not allow",
         pushed(token)),
        ("push-report-long", "reported a push the protocol does not allow",
         pushed(token + struct.pack("<dQ", 1.0, 1))),
        ("push-report-not-this-shard", "reported a push the protocol does not allow",
         pushed(token + struct.pack("<Q", 0))),
        ("push-report-shard-beyond-run", "reported a push the protocol does not allow",
         pushed(token + struct.pack("<Q", 3))),
        ("push-report-no-such-slot", "reported a push the protocol does not allow",
         pushed(token + struct.pack("<Q", 1), wid=1000)),
        ("apply-norm-nan", "reported an apply's norm the protocol does not allow",
         lambda sh: sh.send(SHARD_APPLIED, ver=1, payload=struct.pack("<dd", float("nan"), 1))),
        ("apply-norms-negative", "reported an apply's norm the protocol does not allow",
         lambda sh: sh.send(SHARD_APPLIED, ver=1, payload=struct.pack("<dd", 1, -1.0))),
        ("apply-norm-short", "reported an apply's norm the protocol does not allow",
         lambda sh: sh.send(SHARD_APPLIED, ver=1, payload=struct.pack("<d", 1.0))),
        ("message-meant-for-a-worker", "sent a message meant for someone else",
         lambda sh: sh.send(RELEASE, ver=0)),
        ("refusal", "refused the server's order",
         lambda sh: sh.send(ERROR, payload=b"no")),
        ("another-run", "says it serves another run",
         lambda sh: sh.send(SHARD_STATE, ver=0, payload=state(sh, run=sh.run ^ 1))),
        ("short-state", "bytes, not 104: a shard of another syncwise version?",
         lambda sh: sh.send(SHARD_STATE, ver=0, payload=state(sh)[:88])),
        ("another-slice", "holds the slice of shard",
         lambda sh: sh.send(SHARD_STATE, ver=0, payload=state(sh, index=1))),
        ("slice-cut-otherwise", "holds the parameters [",
         lambda sh: sh.send(SHARD_STATE, ver=0, payload=state(sh, length=sh.params - 1))),
        ("bad-magic", "sent a message the server cannot read",
         lambda sh: sh.sock.send_multipart([sh.server_id, b"XXXX" + frame(SHARD_STATE)[4:]])),
        ("bad-checksum", "sent a message the server cannot read",
         lambda sh: sh.sock.send_multipart([sh.server_id, frame(SHARD_STATE, crc=1,
                                                                 payload=state(sh))])),
    ]


def run_over_says(shard, why):
    """SHARD_MEMBER row: worker 0xffffffff with DONE ends the run, its text why it failed."""
    shard.settle(0.2)
    over = [m for m in shard.pending if m.type == SHARD_MEMBER and m.wid == NOID]
    need(over and over[-1].flags & F_DONE, "no SHARD_MEMBER DONE when the run ended")
    need(why in over[-1].payload.decode("utf-8", "replace"),
         "the run's end does not say why it failed: %r" % over[-1].payload[:200])


def check_hostile_shard(env, name, why, attack):
    shard = FakeShard()
    server = Server(env, shard, "dbw", "hostile-" + name)
    shard.expect(SHARD_INIT, what="(the run)")
    attack(shard)
    server.ends_naming(shard, why)
    run_over_says(shard, why)   # and the shard hears why the run failed
    shard.close()


def check_slice_ahead(env):
    """A gather's slice of a version the run never reached ends the run too: a shard applies only
    what the server orders (taken, it would be gathered again for ever)."""
    shard = FakeShard()
    shard.gather_versions = [5] * 1000
    server = Server(env, shard, "dbw", "hostile-slice-ahead")
    server.ends_naming(shard, "sent a slice ahead of the run")
    run_over_says(shard, "sent a slice ahead of the run")
    shard.close()


def check_short_slice(env):
    """A gather's slice of the wrong length ends the run too."""
    shard = FakeShard()
    shard.gather_bytes = 4
    server = Server(env, shard, "dbw", "hostile-short-slice")
    server.ends_naming(shard, "sent a bad slice")
    run_over_says(shard, "sent a bad slice")
    shard.close()


def check_gather_of_two_versions(env):
    """protocol.md, Shards step 6: a gather's slices of two versions are no model the run held,
    so the server asks every shard again at once rather than evaluate them. Played as it happens:
    a gather is on its way at version 0, shard A answers it, a worker leaves and the barrier it
    held closes (an apply, version 1, decided at once), and shard B answers after that apply.
    Evaluations are due every 4 s here; the gather again comes within a second."""
    a, b = FakeShard(), FakeShard()
    a.hold_gathers = b.hold_gathers = True
    server = Server(env, a, "bsp", "two-version-gather", extra=("--eval-every", "4"), more=[b])
    both = (a, b)

    def gathered(what, timeout=10):
        end = time.time() + timeout
        while not all(x.held_gathers for x in both) and time.time() < end:
            for x in both:
                x.settle(0.02)
        need(all(x.held_gathers for x in both), "no gather reached both shards within %d s %s"
             % (timeout, what))
        for x in both:
            x.held_gathers.pop(0)

    gathered("(the initial model's)")
    for x in both:
        x.answer_gather(0)
    w1 = Worker(server.endpoint, "gather-1", expect_model_payload=False, held=True)
    w2 = Worker(server.endpoint, "gather-2", expect_model_payload=False, held=True)
    for w in (w1, w2):
        w.take_first_release(w.conn.expect(RELEASE, what="once both joined"), False)
    for x in both:
        x.settle(0.1)
        x.pushed(w1, 1, went_to=3)   # both shards hold w1's push: it waits at the barrier
    w1.conn.expect(WAIT, what="(bsp: w2 has not pushed)")
    gathered("(an evaluation due at 4 s)")
    a.answer_gather(0)
    w2.conn.send(LEAVE, wid=w2.wid, ver=w2.version)   # the barrier closes on w1's push alone
    r = w1.conn.expect(RELEASE, what="(w2 left: the apply of w1's push)")
    need(r.ver == 1, "RELEASE at version %d after the apply" % r.ver)
    b.answer_gather(1)   # B applied version 1 before it answered
    end = time.time() + 1.0
    while not all(x.held_gathers for x in both) and time.time() < end:
        for x in both:
            x.settle(0.02)
    need(all(x.held_gathers for x in both),
         "slices of versions 0 and 1 were not gathered again within 1 s: the server took them "
         "for a model")
    need(all(x.held_gathers[0].ver == 1 for x in both),
         "gathered again at %r, not the run's version 1" % [x.held_gathers[0].ver for x in both])
    a.close()
    b.close()
