#!/usr/bin/python3
"""A TCP proxy that breaks its connections on demand, as network faults do.

    reset_proxy.py TARGET_PORT PORT_FILE [DELAY_S]

Listens on a free loopback port (written to PORT_FILE) and forwards every connection to
TARGET_PORT, each way DELAY_S seconds late (a long link; 0 by default); then, on a signal:

SIGUSR1  resets every connection it carries (RST, not FIN: what a middlebox or a peer's crash
         sends), and goes on accepting new ones: what was on its way is lost, as after a real
         fault, and the ends connect again.
SIGUSR2  holds what the target sends for HOLD_S seconds (a link stalled one way), then delivers
         it; a target that closes a connection meanwhile loses what was held, and the client's
         end is reset: as when a host closes a socket with data still unsent on a slow link (its
         kernel resets the connection, dropping that data).
SIGHUP   half-opens the connection that has carried the most bytes: the target's end is reset,
         the client's kept open, and what the client sends on it is read and dropped, as by a
         middlebox that lost the connection without telling the client.
SIGWINCH cuts the link for CUT_S seconds, as a partition does: nothing passes either way, and
         no new connection is taken. Then new connections pass at once, but those it carried
         stay stalled BACKOFF_S seconds more, as TCP connections that sent during a cut wait for
         their next retransmission after the link heals (they come further apart the longer
         the cut); then what they held is delivered."""
import os
import select
import signal
import socket
import struct
import sys
import threading
import time

target = int(sys.argv[1])
DELAY_S = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
HOLD_S = 3.0
CUT_S = 1.5
BACKOFF_S = 4.5
cut_until = 0.0  # SIGWINCH: until then, no new connection is taken
lock = threading.RLock()  # a signal's handler may run while the main thread holds it
pairs = []  # [client, upstream, bytes carried, cut, stalled until] of every connection carried
held_until = 0.0  # SIGUSR2: until then, what the target sends waits here


def reset(s):
    """Closes s with RST (linger 0); the shutdown first wakes a thread reading it."""
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.shutdown(socket.SHUT_RDWR)
        s.close()
    except OSError:
        pass


def upward(pair):
    client, upstream = pair[0], pair[1]
    stalled = b""  # what the client sent while the link was cut (SIGWINCH)
    try:
        while True:
            if stalled and time.monotonic() >= pair[4]:
                if not pair[3]:  # half open meanwhile (SIGHUP): dropped
                    upstream.sendall(stalled)
                stalled = b""
            if not select.select([client], [], [], 0.05)[0]:
                continue  # to deliver what was stalled when its time comes
            data = client.recv(1 << 16)
            if not data:
                break
            pair[2] += len(data)
            time.sleep(DELAY_S)  # what comes meanwhile waits its turn: a link's latency, roughly
            if time.monotonic() < pair[4]:
                stalled += data
                continue
            try:
                if not pair[3]:  # once cut, dropped
                    upstream.sendall(stalled + data)
                stalled = b""
            except OSError:
                if not pair[3]:
                    raise
    except (OSError, ValueError):  # ValueError: closed meanwhile by a signal's handler
        pass
    if pair[3]:
        return  # half open: the client's end stays as it is
    for s in (client, upstream):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def downward(pair):
    client, upstream = pair[0], pair[1]
    held = b""
    try:
        while True:
            if held and time.monotonic() >= max(held_until, pair[4]):
                client.sendall(held)
                held = b""
            if not select.select([upstream], [], [], 0.05)[0]:
                continue  # to deliver what was held when its time comes
            data = upstream.recv(1 << 16)
            if not data:
                break
            pair[2] += len(data)
            time.sleep(DELAY_S)  # what comes meanwhile waits its turn: a link's latency, roughly
            if time.monotonic() < max(held_until, pair[4]):
                held += data
            else:
                client.sendall(held + data)
                held = b""
    except (OSError, ValueError):  # ValueError: closed meanwhile by a signal's handler
        pass
    if pair[3]:
        return
    if held:  # closed while held: lost, and the client reset
        reset(client)
    for s in (client, upstream):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def reset_all(signum, frame):
    with lock:
        for pair in pairs:
            reset(pair[0])
            reset(pair[1])
        pairs.clear()


def hold(signum, frame):
    global held_until
    held_until = time.monotonic() + HOLD_S


def half_open(signum, frame):
    with lock:
        live = [p for p in pairs if not p[3]]
        if live:
            busiest = max(live, key=lambda p: p[2])
            busiest[3] = True
            reset(busiest[1])


def partition(signum, frame):
    global cut_until
    now = time.monotonic()
    cut_until = now + CUT_S
    with lock:
        for pair in pairs:
            pair[4] = now + CUT_S + BACKOFF_S


signal.signal(signal.SIGUSR1, reset_all)
signal.signal(signal.SIGWINCH, partition)
signal.signal(signal.SIGUSR2, hold)
signal.signal(signal.SIGHUP, half_open)
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(64)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write("%d\n" % server.getsockname()[1])
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
while True:
    # Not while the link is cut: a connection made then waits in the backlog, as its SYN would.
    if time.monotonic() < cut_until or not select.select([server], [], [], 0.05)[0]:
        time.sleep(0.02)
        continue
    try:
        client, _ = server.accept()
    except InterruptedError:
        continue
    try:
        upstream = socket.create_connection(("127.0.0.1", target))
    except OSError:  # nothing behind it (yet): the client sees its connection closed
        client.close()
        continue
    pair = [client, upstream, 0, False, 0.0]
    with lock:
        pairs.append(pair)
    threading.Thread(target=upward, args=(pair,), daemon=True).start()
    threading.Thread(target=downward, args=(pair,), daemon=True).start()
