#!/usr/bin/python3
"""A raw client of syncwise's wire protocol, written from docs/protocol.md alone.

usage: client.py --server EP --server-off EP [--sharded EP] [--live EP] [--binary PATH --tmp DIR]

  --server      an unsharded server, --policy asp, checksums on (plain TCP, auto)
  --server-off  an unsharded server, --policy asp, --checksum off --max-applies 4
  --sharded     a server started with --shards (two `syncwise shard`), --policy asp
  --live        an unsharded asp server with --wait-workers 2 --heartbeat-timeout 3
  --binary      syncwise itself: the control-plane checks start servers of their own against a
                shard the client plays (control_plane.py), logging in --tmp

Every check is named after the part of docs/protocol.md it tests, and a place where the server
does what the document does not say fails it. It prints PASS/FAIL per check; the exit status is
0 only if every check passed.

Needs only Debian's python3-zmq. The CRC-32C is computed here (Castagnoli, reflected 0x82F63B78).
"""
import argparse
import os
import re
import struct
import subprocess
import sys
import time

from wire import *  # noqa: F401,F403
from shards import *  # noqa: F401,F403
from control_plane import (check_push_waits_for_norms, check_push_answered_without_norms,
                           check_sent_across_restore, check_report_before_restore_ignored,
                           check_out_of_step_refusal_before_restore,
                           check_restore_it_cannot_take, check_gather_of_two_versions,
                           hostile_shard_cases, check_hostile_shard, check_short_slice,
                           check_slice_ahead)

# ================================================================ check 1: a worker's life
# protocol.md "Messages" (JOIN, WELCOME, RELEASE, PUSH, PULL, MODEL, HEARTBEAT, LEAVE),
# "A round", and the header table (worker id 0xffffffff in a RELEASE carrying parameters).


def check_join(env):
    w = Worker(env.server, "proto-life")
    need(w.checksum == "on", "plain TCP with --checksum auto: WELCOME says checksum=%s" % w.checksum)
    env.life = w


def check_repeat_join(env):
    # JOIN row: "the server answers a repeat from the same connection with the same id"
    w = env.life
    w.conn.send(JOIN, payload=b"proto-life")
    m = w.conn.expect(WELCOME, what="after a repeated JOIN")
    kv = parse_kv(m.text())
    need(int(kv["worker"]) == w.wid and int(kv["token"]) == w.token,
         "a repeated JOIN got worker=%s token=%s, first worker=%d" % (kv["worker"], kv["token"], w.wid))
    extra = w.conn.recv(0.5)   # "a WELCOME again; the RELEASE is not repeated"
    need(extra is None, "a repeated JOIN was answered with more than WELCOME: %r" % extra)


def check_push_zero(env):
    # PUSH with WANT_MODEL -> RELEASE [MODEL] at the next version (asp applies on arrival);
    # a zero gradient (wd=0, plain sgd) leaves the parameters as they were.
    w = env.life
    need(float(w.kv["wd"]) == 0.0, "this check expects wd=0")
    before = list(w.theta)
    for _ in range(3):
        w.push_and_release(w.zeros())
        need(w.theta == before, "a zero gradient changed the parameters")


def check_push_grad(env):
    # the parameters RELEASE carries after a push of g at lr: theta - lr * g (guide: asp, sgd)
    w = env.life
    g = small_grad(w.n, 1)
    before = list(w.theta)
    w.push_and_release(g)
    want = [t - w.lr * x for t, x in zip(before, g)]
    need(close_to(w.theta, want), "parameters after one push are not theta - lr*g")
    env.life_theta = w.theta


def check_push_no_model(env):
    # "releases without MODEL carry no payload"
    w = env.life
    r = w.push_and_release(w.zeros(), want_model=False)
    # header: the worker id is "the one a server's answer is for"
    need(r.wid == w.wid, "RELEASE without MODEL has worker %#x, not %d" % (r.wid, w.wid))


def check_pull(env):
    # PULL -> MODEL: "the parameters at the header's version"
    w = env.life
    w.conn.send(PULL, wid=w.wid, ver=w.version)
    m = w.conn.expect(MODEL_MSG, what="after PULL")
    need(m.ver == w.version, "MODEL at version %d, server released %d" % (m.ver, w.version))
    need(close_to(floats(m.payload, w.n), env.life_theta), "MODEL differs from the last release")


def pairs(entries):
    return b"".join(struct.pack("<If", i, v) for i, v in entries)


def check_sparse_on_dense(env):
    # PUSH_SPARSE / PULL_SPARSE ("A round of a sparse model"); the server here runs a dense mlp
    w = env.life
    before = list(w.theta)
    entries = [(0, 0.5), (3, -0.25), (w.n - 1, 1.0)]
    w.conn.send(PUSH_SPARSE, wid=w.wid, flags=F_WANT_MODEL, ver=w.version, payload=pairs(entries))
    r = w.conn.expect(RELEASE, what="(after PUSH_SPARSE)")
    need(r.ver == w.version + 1 and r.flags & F_MODEL, "PUSH_SPARSE answered %r" % r)
    w.version, w.theta = r.ver, floats(r.payload, w.n)
    want = list(before)
    for i, v in entries:
        want[i] -= w.lr * v
    need(close_to(w.theta, want), "a sparse push did not update exactly its weights")
    idx = [0, 3, w.n - 1]
    w.conn.send(PULL_SPARSE, wid=w.wid, ver=w.version, payload=struct.pack("<3I", *idx))
    m = w.conn.expect(MODEL_SPARSE, what="(after PULL_SPARSE)")
    need(m.ver == w.version, "MODEL_SPARSE at %d, not %d" % (m.ver, w.version))
    need(close_to(floats(m.payload, 3), [w.theta[i] for i in idx]), "MODEL_SPARSE values")
    env.life_theta = w.theta   # PUSH_SPARSE row: "a dense model's server takes it too"


def check_heartbeat(env):
    # HEARTBEAT row: from a second socket, version = token; echoed when id and token match,
    # else ERROR UNKNOWN whose version echoes the refused message's
    w = env.life
    hb = Conn(env.server, w.checksum)
    hb.send(HEARTBEAT, wid=w.wid, ver=w.token)
    m = hb.expect(HEARTBEAT, what="(echo of a heartbeat with the right token)")
    need(m.wid == w.wid and m.ver == w.token and m.payload == b"", "heartbeat echo %r" % m)
    bad = (w.token + 1) % 2 ** 64
    hb.send(HEARTBEAT, wid=w.wid, ver=bad)
    m = hb.expect(ERROR, what="(heartbeat with a wrong token)")
    need(m.flags & F_UNKNOWN, "wrong-token heartbeat refused without UNKNOWN: %r" % m)
    need(m.ver == bad, "ERROR UNKNOWN version %d does not echo the heartbeat's %d" % (m.ver, bad))
    env.life_hb = hb


def check_leave(env):
    # LEAVE: no answer documented; afterwards the server no longer knows the membership
    w = env.life
    w.conn.send(LEAVE, wid=w.wid, ver=w.version)
    w.conn.silent(0.5)
    env.life_hb.send(HEARTBEAT, wid=w.wid, ver=w.token)
    m = env.life_hb.expect(ERROR, what="(heartbeat after LEAVE)")
    need(m.flags & F_UNKNOWN, "heartbeat after LEAVE: %r" % m)
    w.conn.send(PUSH, wid=w.wid, flags=F_WANT_MODEL, ver=w.version, payload=fpack(w.zeros()))
    m = w.conn.expect(ERROR, what="(PUSH after LEAVE)")
    need(m.flags & F_UNKNOWN, "PUSH after LEAVE refused without UNKNOWN: %r" % m)

# ================================================================ check 2: ctl
# protocol.md CTL / CTL_REPLY rows and "Who can do what": anyone may ask status; a policy
# switch from anyone but an operator is ERROR "which says where operator commands are taken".


def check_ctl_status(env):
    m = ctl(env.server, "status")
    need(m.type == CTL_REPLY, "CTL status answered %r" % m)
    text = m.text()
    need("asp" in text, "status does not name the policy asp: %r" % text[:200])
    refused_count(env.server)   # CTL_REPLY "for people to read": these lines may change


def check_ctl_policy_refused(env):
    m = ctl(env.server, "policy bsp")
    need(m.type == ERROR, "CTL policy from a non-operator answered %r" % m)
    where = re.search(r"\b(ipc|tcp)://[^\s)'\"]+", m.text())
    need(where, "the ERROR does not say where operator commands are taken: %r" % m.text())
    env.operator = where.group(0)
    need("policy asp" in ctl(env.server, "status").text(), "the policy changed anyway")


def check_ctl_unknown(env):
    # CTL_REPLY row: "an unknown command is answered with a line starting error:"
    m = ctl(env.server, "frobnicate")
    need(m.type == CTL_REPLY and m.payload.startswith(b"error:"),
         "CTL with an unknown command answered %r" % m)

# ================================================================ check 3: hostile frames
# protocol.md "What the server checks": every frame's size, magic, version (a message naming
# both), type, flags, reserved field, payload length, checksum; a push's socket, release,
# float count, finiteness, version. "Anything else is counted ... and answered with ERROR;
# the server goes on serving everyone else."


class Hostile:
    def __init__(self, env):
        self.env = env
        self.w = Worker(env.server, "proto-honest")
        self.stranger = Conn(env.server)
        # "Failures": "A newcomer gets a slot no worker held before while there is one"
        if env.life is not None:
            need(self.w.wid != env.life.wid, "a newcomer got the slot %d of a worker that left"
                 % self.w.wid)

    def case(self, who, data, want, counted=True):
        """Send `data` from the stranger or the worker; `want(msg)` judges the answer."""
        sock = self.w.conn if who == "worker" else self.stranger
        before = refused_count(self.env.server)
        sock.send_raw(data)
        if want is None:
            sock.silent(1.0)
        else:
            m = sock.expect(ERROR, what="(refusal)")
            want(m)
        after = refused_count(self.env.server)
        if counted:
            need(after == before + 1, "refused count went %d -> %d" % (before, after))
        self.w.push_and_release(self.w.zeros())    # the honest worker is still served
        self.stranger.silent(0.05)                 # and nothing more came to the stranger

    def push_frame(self, payload=None, **kw):
        w = self.w
        kw.setdefault("wid", w.wid)
        kw.setdefault("flags", F_WANT_MODEL)
        kw.setdefault("ver", w.version)
        return frame(PUSH, payload=fpack(w.zeros()) if payload is None else payload, **kw)


def says(*words):
    def judge(m):
        t = m.text().lower()
        for word in words:
            need(word in t, "ERROR text %r lacks %r" % (m.text(), word))
    return judge


def known(m):
    # the server knows the worker: a refusal of its own push must not say UNKNOWN
    need(not m.flags & F_UNKNOWN, "refusal of a known worker's push says UNKNOWN: %r" % m)


def unknown_echo(ver):
    def judge(m):
        need(m.flags & F_UNKNOWN, "refusal lacks UNKNOWN: %r" % m)
        need(m.ver == ver, "ERROR UNKNOWN version %d does not echo %d" % (m.ver, ver))
    return judge


def any_error(m):
    pass


def hostile_cases(h):
    """(name, sender, frame or frames, judge). Frames are built when the case runs."""
    w = h.w
    n = w.n
    nan = fpack([float("nan")] + [0.0] * (n - 1))
    inf = fpack([0.0] * (n - 1) + [float("inf")])
    cases = []
    for who in ("stranger", "worker"):
        mine = known if who == "worker" else any_error
        cases += [
            ("bad-magic", who, lambda: h.push_frame(magic=b"XWNP"), any_error),
            ("protocol-version-7", who, lambda: h.push_frame(proto=7), says("7", "1")),
            ("wrong-crc", who, lambda: h.push_frame(crc=crc32c(fpack(w.zeros())) ^ 1), any_error),
            ("length-field+4", who, lambda: h.push_frame(length=4 * n + 4), any_error),
            ("length-field-4", who, lambda: h.push_frame(length=4 * n - 4), any_error),
            ("length-over-limit", who, lambda: h.push_frame(length=1 << 62), any_error),
            ("shorter-than-header", who, lambda: h.push_frame()[:20], any_error),
            ("reserved-nonzero", who, lambda: h.push_frame(reserved=1), any_error),
            ("unknown-type-99", who, lambda: frame(99, wid=w.wid), any_error),
            ("server-only-type-WELCOME", who, lambda: frame(WELCOME, wid=w.wid), any_error),
            ("undefined-flag-256", who, lambda: h.push_frame(flags=F_WANT_MODEL | 256), any_error),
            ("multi-frame", who, lambda: [h.push_frame(), b"second frame"], any_error),
            ("unchecked-on-checked-run", who, lambda: h.push_frame(unchecked=True), any_error),
            ("push-NaN", who, lambda: h.push_frame(payload=nan), mine),
            ("push-Inf", who, lambda: h.push_frame(payload=inf), mine),
            ("push-n-1-floats", who, lambda: h.push_frame(payload=fpack([0.0] * (n - 1))), mine),
            ("push-n+1-floats", who, lambda: h.push_frame(payload=fpack([0.0] * (n + 1))), mine),
            ("push-version-never-had", who, lambda: h.push_frame(ver=w.version + 1000), mine),
            ("push-unknown-worker-id", who, lambda: h.push_frame(wid=w.wid + 1000, ver=777),
             unknown_echo(777)),
        ]
    # "Sparse": pairs of length a multiple of 8, indices strictly ascending below the size,
    # finite values; a pull's indices the same way
    sparse = [("push-sparse-descending", PUSH_SPARSE, pairs([(3, 0.5), (0, 0.5)])),
              ("push-sparse-repeated-index", PUSH_SPARSE, pairs([(3, 0.5), (3, 0.5)])),
              ("push-sparse-index-n", PUSH_SPARSE, pairs([(n, 0.5)])),
              ("push-sparse-length-12", PUSH_SPARSE, pairs([(1, 0.5)]) + bytes(4)),
              ("push-sparse-NaN", PUSH_SPARSE, pairs([(1, float("nan"))])),
              ("pull-sparse-descending", PULL_SPARSE, struct.pack("<2I", 5, 0)),
              ("pull-sparse-index-n", PULL_SPARSE, struct.pack("<I", n)),
              ("pull-sparse-length-2", PULL_SPARSE, bytes(2))]
    for name, mtype, payload in sparse:
        cases.append((name, "worker", lambda t=mtype, p=payload: frame(
            t, wid=w.wid, flags=F_WANT_MODEL if t == PUSH_SPARSE else 0, ver=w.version,
            payload=p), known))
    cases += [
        # "no older than the version of that worker's push before it": by now the honest worker
        # has pushed at versions above 0 (each case ends with its push and release)
        ("push-version-older-than-its-last", "worker", lambda: h.push_frame(ver=0),
         lambda m: (known(m), says("never go back")(m))),
        # "A push must come from the socket that joined under that id"
        ("push-with-worker's-id", "stranger", lambda: h.push_frame(), any_error),
        # "a stranger naming a worker's id keeps nothing alive and makes nobody leave"
        ("leave-with-worker's-id", "stranger", lambda: frame(LEAVE, wid=w.wid, ver=w.version),
         any_error),
        ("heartbeat-wrong-token", "stranger",
         lambda: frame(HEARTBEAT, wid=w.wid, ver=(w.token ^ 1)), unknown_echo(w.token ^ 1)),
    ]
    return cases


def check_hostile(env, h, name, who, make, judge):
    h.case(who, make(), judge)


def check_oversized(env, h):
    # "ZeroMQ's ZMQ_MAXMSGSIZE also stops oversized frames before they are buffered": a 4 MB
    # frame never reaches the server's code, so the stranger hears nothing
    before = refused_count(env.server)
    h.case("stranger", h.push_frame(payload=bytes(4 << 20), crc=0), None, counted=False)
    after = refused_count(env.server)   # "neither answered nor counted"
    need(after == before, "an oversized frame changed the refused count %d -> %d" % (before, after))

# ================================================================ check 2b: operator, bsp, sync
# "Who can do what" (the operator socket), "A round" (bsp: WAIT, then one RELEASE frame for
# every worker the barrier releases), PUSH "from a worker the engine has released", HEARTBEAT
# echoed to a held worker, and DROPPED (guide: sync drops gradients older than V).


def operator_policy(env, spec):
    m = ctl(env.operator, "policy " + spec)
    need(m.type == CTL_REPLY, "operator CTL policy %s answered %r" % (spec, m))
    need(("policy " + spec.split(":")[0]) in ctl(env.server, "status").text(),
         "status does not show the policy %s after the switch" % spec)


def check_bsp_round(env, h):
    need(env.operator, "no operator endpoint (check ctl/policy-refused failed)")
    operator_policy(env, "bsp")
    a, b = h.w, Worker(env.server, "proto-second")
    env.second = b
    a.push(a.zeros())
    wait = a.conn.expect(WAIT, what="(bsp: the other worker has not pushed)")
    need(wait.payload == b"" and not wait.flags & F_DROPPED, "WAIT %r" % wait)
    before = refused_count(env.server)
    a.push(a.zeros())                                   # not released: refused
    a.conn.expect(ERROR, what="(push from a worker that was not released)")
    need(refused_count(env.server) == before + 1, "the held push was not counted")
    hb = Conn(env.server, a.checksum)                   # a held worker hears its echoes
    hb.send(HEARTBEAT, wid=a.wid, ver=a.token)
    hb.expect(HEARTBEAT, what="(echo while held at the barrier)")
    b.push(b.zeros())
    ra = a.conn.expect(RELEASE, what="(barrier complete)")
    rb = b.conn.expect(RELEASE, what="(barrier complete)")
    need(ra.ver == a.version + 1 and ra.flags & F_MODEL, "bsp RELEASE %r" % ra)
    need(ra.raw == rb.raw, "the two workers of one barrier got different RELEASE frames")
    a.version = b.version = ra.ver


def check_sync_dropped(env, h):
    operator_policy(env, "sync:grads_to_wait=1")
    a, b = h.w, env.second
    a.push(a.zeros())
    r = a.conn.expect(RELEASE, what="(sync k=1: applied)")
    need(r.ver == a.version + 1, "sync apply: RELEASE at %d" % r.ver)
    b.push(b.zeros())                                   # computed at the version before: stale
    m = b.conn.recv()
    need(m is not None and m.type in (WAIT, RELEASE) and m.flags & F_DROPPED,
         "a stale push under sync was answered %r, not WAIT/RELEASE with DROPPED" % m)
    need(m.ver == r.ver, "the drop moved the version to %d" % m.ver)
    if m.type == RELEASE and m.flags & F_MODEL:
        need(m.wid == NOID, "RELEASE [MODEL|DROPPED] has worker %#x" % m.wid)
    a.version, b.version = r.ver, m.ver
    operator_policy(env, "asp")
    for w in (a, b):
        w.conn.send(LEAVE, wid=w.wid, ver=w.version)

# ================================================================ check 4: checksums off
# protocol.md "Payload checksums: agreed at join": WELCOME says checksum=off; then messages
# carry UNCHECKED and a zero checksum field; a message flagged UNCHECKED with a non-zero
# checksum is refused; finiteness is still checked. The run ends at --max-applies 4:
# RELEASE `DONE` ("the run is over: the worker answers with LEAVE and exits"; "the server goes on
# serving until every worker it told has said goodbye").


def check_off_join(env):
    w = Worker(env.server_off, "proto-off")   # JOIN sent checksummed: the worker is not told yet
    need(w.checksum == "off", "--checksum off: WELCOME says checksum=%s" % w.checksum)
    # "a run without checksums sends its WELCOME unchecked too"
    need(w.welcome_msg.flags & F_UNCHECKED, "the WELCOME of an off run is checksummed")
    r = w.first_release
    need(r.flags & F_UNCHECKED and r.crc == 0, "first RELEASE on an off run: %r crc %#x" % (r, r.crc))
    env.off = w


def check_off_push(env):
    w = env.off
    w.push_and_release(w.zeros())              # Conn sends UNCHECKED, crc 0 (checksum=off)
    hb = Conn(env.server_off, "off")
    hb.send(HEARTBEAT, wid=w.wid, ver=w.token)
    hb.expect(HEARTBEAT, what="(unchecked heartbeat echo)")


def check_off_refusals(env):
    w = env.off
    zeros = fpack(w.zeros())
    w.conn.send_raw(frame(PUSH, wid=w.wid, flags=F_WANT_MODEL, ver=w.version, payload=zeros,
                          unchecked=True, crc=crc32c(zeros)))
    w.conn.expect(ERROR, what="(UNCHECKED with a non-zero checksum field)")
    w.push([float("inf")] + [0.0] * (w.n - 1))
    m = w.conn.expect(ERROR, what="(non-finite push on an unchecked run)")
    need(not m.flags & F_UNKNOWN, "%r" % m)


def check_off_checked_push(env):
    # "a message without the flag is checked as always, even in a run without checksums"
    w = env.off
    w.push(w.zeros(), unchecked=False)
    m = w.conn.expect(RELEASE, what="(checksummed push to an off run)")
    w.version = m.ver
    zeros = fpack(w.zeros())
    w.conn.send_raw(frame(PUSH, wid=w.wid, flags=F_WANT_MODEL, ver=w.version, payload=zeros,
                          crc=crc32c(zeros) ^ 1))
    w.conn.expect(ERROR, what="(a wrong checksum, not flagged UNCHECKED, on an off run)")


def check_off_done(env):
    w = env.off
    for _ in range(6):
        w.push(w.zeros())
        m = w.conn.expect(RELEASE, what="(towards --max-applies)")
        w.version = m.ver
        if m.flags & F_DONE:
            need(m.payload == b"" or m.flags & F_MODEL, "%r" % m)
            hb = Conn(env.server_off, "off-end")
            hb.send(HEARTBEAT, wid=w.wid, ver=w.token)
            hb.expect(HEARTBEAT, what="(a heartbeat after DONE, before the goodbye)")
            w.conn.send(LEAVE, wid=w.wid, ver=w.version)
            # The goodbye and the heartbeats travel on two connections, whose order the server
            # need not keep: a heartbeat read before the LEAVE is still echoed. Soon after it,
            # the server is gone (its last worker said goodbye): heartbeats go unanswered.
            end = time.time() + 5
            while True:
                hb.send(HEARTBEAT, wid=w.wid, ver=w.token)
                m = hb.recv(0.5)
                if m is None or m.type == ERROR:
                    return
                need(m.type == HEARTBEAT and time.time() < end,
                     "a heartbeat 5 s after the goodbye: %r" % m)
                time.sleep(0.2)
    raise CheckFailed("no RELEASE with DONE after --max-applies 4")


# ================================================================ check 6: held workers, liveness
# --wait-workers: JOIN is answered WELCOME, the RELEASE waits until 2 are in, and a held worker
# hears its heartbeats' echoes (HEARTBEAT row); then both are released by one frame (RELEASE
# row). "Failures": a silent worker is dropped after --heartbeat-timeout (3 s here); "What the
# server checks": "Only a worker's own messages are signs of life: ... a stranger naming a
# worker's id keeps nothing alive and makes nobody leave."


def check_wait_workers(env):
    a = Worker(env.live, "proto-held-a", held=True)
    a.conn.silent(0.5)                                   # held until a second worker is in
    a.hb = Conn(env.live, a.checksum)
    a.hb.send(HEARTBEAT, wid=a.wid, ver=a.token)
    a.hb.expect(HEARTBEAT, what="(echo to a worker held by --wait-workers)")
    b = Worker(env.live, "proto-held-b", held=True)
    ra = a.conn.expect(RELEASE, what="(second worker in)")
    rb = b.conn.expect(RELEASE, what="(second worker in)")
    a.take_first_release(ra)
    b.take_first_release(rb)
    need(ra.raw == rb.raw, "the workers one decision released got different RELEASE frames")
    env.held = (a, b)


def check_liveness(env):
    a, b = env.held
    stranger = Conn(env.live)
    crashed0 = status_number(env.live, "crashed")
    deadline = time.time() + 20
    while status_number(env.live, "crashed") == crashed0:
        need(time.time() < deadline, "a worker silent for 20 s was not dropped (timeout 3 s)")
        a.hb.send(HEARTBEAT, wid=a.wid, ver=a.token)     # a lives by its heartbeats
        a.hb.expect(HEARTBEAT, what="(echo)")
        stranger.send(PUSH, wid=b.wid, flags=F_WANT_MODEL, ver=b.version, payload=fpack(b.zeros()))
        stranger.expect(ERROR, what="(stranger's push in b's name)")
        stranger.send(LEAVE, wid=b.wid, ver=b.version)
        stranger.expect(ERROR, what="(stranger's LEAVE in b's name)")
        time.sleep(0.3)
    need(status_number(env.live, "crashed") == crashed0 + 1, "more than one worker dropped")
    b.hb = Conn(env.live, b.checksum)
    b.hb.send(HEARTBEAT, wid=b.wid, ver=b.token)
    m = b.hb.expect(ERROR, what="(heartbeat of the dropped worker)")
    need(m.flags & F_UNKNOWN, "heartbeat of a dropped worker: %r" % m)
    a.push_and_release(a.zeros())                        # the heartbeats kept a alive
    a.conn.send(LEAVE, wid=a.wid, ver=a.version)

def start_own_server(env, name, *extra):
    """A server of this check's own (killed at the end), its endpoint."""
    ep_file = os.path.join(env.tmp, name + ".ep")
    log = open(os.path.join(env.tmp, name + ".log"), "w")
    proc = subprocess.Popen(
        [env.binary, "server", "--bind", "tcp://127.0.0.1:*", "--endpoint-file", ep_file,
         "--data", "synthetic:task=logistic,d=10,n=200", "--model", "mlp:h=1,u=5",
         "--threads", "1", "--eval-every", "30", "--max-time", "55"] + list(extra),
        stdout=log, stderr=subprocess.STDOUT)
    env.children.append(proc)
    deadline = time.time() + 10
    while not (os.path.exists(ep_file) and open(ep_file).read().strip()):
        need(time.time() < deadline, "the server wrote no endpoint within 10 s")
        time.sleep(0.05)
    return open(ep_file).read().strip()


def beat_until_unknown(hb, w, within, why):
    """Heartbeats of w every 0.3 s, echoed, until one is answered ERROR UNKNOWN (within s)."""
    deadline = time.time() + within
    while True:
        hb.send(HEARTBEAT, wid=w.wid, ver=w.token)
        m = hb.recv()
        need(m is not None, "no answer to a heartbeat")
        if m.type == ERROR:
            need(m.flags & F_UNKNOWN, "heartbeat of a dropped worker: %r" % m)
            return
        need(m.type == HEARTBEAT, "a heartbeat answered %r" % m)
        need(time.time() < deadline, why)
        time.sleep(0.3)


def check_route_gone(env):
    """Failures: "a message the server sends on a member's connection that finds it gone drops
    that member at once, as a crash (its heartbeats then hear UNKNOWN)"; HEARTBEAT row: a
    member's own connection quiet for 2 s while its heartbeats come is probed. (1) A held
    worker's connection closes; a second worker starts the run, whose RELEASE to the first finds
    its connection gone. (2) A running member's connection, quiet, is probed; once closed, the
    next probe finds it gone. The heartbeat timeout (6 s) never comes into it."""
    ep = start_own_server(env, "gone", "--wait-workers", "2", "--heartbeat-timeout", "6")
    a = Worker(ep, "proto-gone-a", held=True)
    hb = Conn(ep, a.checksum)
    hb.send(HEARTBEAT, wid=a.wid, ver=a.token)
    hb.expect(HEARTBEAT, what="(echo to a held worker)")
    a.conn.close()
    time.sleep(0.5)
    b = Worker(ep, "proto-gone-b", held=True)
    b.conn.expect(RELEASE, what="(second worker in)")
    # within 1 s: before a probe could find it (a's connection quiet for 2 s since its JOIN)
    beat_until_unknown(hb, a, 1, "a member whose connection is gone was still echoed 1 s after "
                       "a RELEASE to it")
    c = Worker(ep, "proto-gone-c")
    joined = time.time()
    while time.time() < joined + 2.8:
        hb.send(HEARTBEAT, wid=c.wid, ver=c.token)
        hb.expect(HEARTBEAT, what="(echo to a running member)")
        time.sleep(0.3)
    c.conn.silent(0.3)                        # probes are skipped, and counted
    need(c.conn.probes >= 1, "no HEARTBEAT probe on a member's own connection, quiet for 2.8 s "
         "while its heartbeats came")
    c.conn.close()
    beat_until_unknown(hb, c, 4, "a member whose connection is gone was still echoed 4 s later, "
                       "its own connection quiet")


# ================================================================ main


class Env:
    def __init__(self, args):
        self.server, self.server_off, self.sharded = args.server, args.server_off, args.sharded
        self.live = args.live
        self.binary, self.tmp, self.children = args.binary, args.tmp, []
        self.operator = None
        self.life = None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--server-off", required=True)
    ap.add_argument("--sharded")
    ap.add_argument("--live")
    ap.add_argument("--binary")
    ap.add_argument("--tmp", default="/tmp")
    args = ap.parse_args()
    env = Env(args)
    t0 = time.time()

    run_group((("1 life/join-welcome-release", check_join),
               ("1 life/repeat-join", check_repeat_join),
               ("1 life/push-zero-want-model", check_push_zero),
               ("1 life/push-gradient-theta", check_push_grad),
               ("1 life/push-without-want-model", check_push_no_model),
               ("1 life/pull-model", check_pull),
               ("1 life/sparse-push-pull-on-dense-model", check_sparse_on_dense),
               ("1 life/heartbeat-echo-and-unknown", check_heartbeat),
               ("1 life/leave", check_leave),
               ("2 ctl/status", check_ctl_status),
               ("2 ctl/policy-refused-names-operator", check_ctl_policy_refused),
               ("2 ctl/unknown-command", check_ctl_unknown)), env)

    h = None
    try:
        h = Hostile(env)
    except CheckFailed as e:
        why = str(e)
        run_check("3 hostile/setup", lambda: need(False, why))
    if h:
        for name, who, make, judge in hostile_cases(h):
            run_check("3 hostile/%s/%s" % (who, name), check_hostile, env, h, name, who, make, judge)
        run_check("3 hostile/stranger/over-ZMQ_MAXMSGSIZE", check_oversized, env, h)
        run_check("2b operator/bsp-wait-shared-release", check_bsp_round, env, h)
        run_check("2b operator/sync-dropped", check_sync_dropped, env, h)

    run_group((("4 checksum-off/welcome-release", check_off_join),
               ("4 checksum-off/push-heartbeat", check_off_push),
               ("4 checksum-off/refusals", check_off_refusals),
               ("4 checksum-off/checksummed-push", check_off_checked_push),
               ("4 checksum-off/max-applies-done", check_off_done)), env)

    if env.sharded:
        run_group((("5 shards/welcome-chunk-table", check_shard_table),
                   ("5 shards/pull-slices", check_shard_pull),
                   ("5 shards/push-slices-release", check_shard_push),
                   ("5 shards/refusals", check_shard_hostile),
                   ("5 shards/repeated-sequence-number", check_shard_repeat_seq),
                   ("5 shards/push-older-than-its-last", check_shard_push_older),
                   ("5 shards/slices-of-one-push-disagree", check_shard_slices_disagree),
                   ("5 shards/server-refuses-dense-push-pull", check_shard_server_refuses_dense),
                   ("5 shards/status-and-leave", check_shard_status_leave)), env)

    if env.live:
        run_group((("6 held/wait-workers-echo-shared-release", check_wait_workers),
                   ("6 held/heartbeat-timeout-and-strangers", check_liveness)), env)

    if env.binary:
        run_check("7 control-plane/push-waits-for-norms", check_push_waits_for_norms, env)
        run_check("7 control-plane/push-answered-without-norms",
                  check_push_answered_without_norms, env)
        run_check("7 control-plane/sent-across-a-restore", check_sent_across_restore, env)
        run_check("7 control-plane/report-before-restore-ignored",
                  check_report_before_restore_ignored, env)
        run_check("7 control-plane/out-of-step-refusal-before-restore",
                  check_out_of_step_refusal_before_restore, env)
        run_check("7 control-plane/restore-it-cannot-take", check_restore_it_cannot_take, env)
        run_check("7 control-plane/gather-of-two-versions", check_gather_of_two_versions, env)
        for name, why, attack in hostile_shard_cases():
            run_check("8 hostile-shard/" + name, check_hostile_shard, env, name, why, attack)
        run_check("8 hostile-shard/short-gather-slice", check_short_slice, env)
        run_check("8 hostile-shard/gather-slice-ahead-of-the-run", check_slice_ahead, env)
        run_check("6 held/connection-gone-dropped-at-once", check_route_gone, env)
        for p in env.children:
            p.kill()
            p.wait()

    failed = [r for r in RESULTS if not r[1]]
    print("%d checks, %d passed, %d failed; %.1f s"
          % (len(RESULTS), len(RESULTS) - len(failed), len(failed), time.time() - t0))
    for name, _, why in failed:
        print("FAILED: %s: %s" % (name, why))
    CTX.destroy(linger=0)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
