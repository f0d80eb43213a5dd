#!/usr/bin/python3
"""A TCP proxy that breaks its connections on demand, as a network fault does.

    reset_proxy.py TARGET_PORT PORT_FILE

Listens on a free loopback port (written to PORT_FILE), forwards every connection to
TARGET_PORT, and on SIGUSR1 resets every connection it carries (RST, not FIN: what a
middlebox or a peer's crash sends), then goes on accepting new ones: what was on its way is
lost, as after a real fault, and the ends connect again.

On SIGUSR2 it holds what the target sends for HOLD_S seconds (a link stalled one way) and then
delivers it; a target that closes a connection meanwhile loses what was held, and the client's
end is reset: as when a host closes a socket with data still unsent on a slow link (its kernel
resets the connection, dropping that data)."""
import os
import select
import signal
import socket
import struct
import sys
import threading
import time

target = int(sys.argv[1])
HOLD_S = 3.0
live = set()
lock = threading.Lock()
held_until = 0.0  # SIGUSR2: until then, what the target sends waits here


def pump(src, dst, may_hold):
    held = b""
    try:
        while True:
            if held and time.monotonic() >= held_until:
                dst.sendall(held)
                held = b""
            if may_hold and not select.select([src], [], [], 0.05)[0]:
                continue  # to deliver what was held when its time comes
            data = src.recv(1 << 16)
            if not data:
                break
            if may_hold and time.monotonic() < held_until:
                held += data
            else:
                dst.sendall(held + data)
                held = b""
    except (OSError, ValueError):  # ValueError: reset_all closed it meanwhile
        pass
    for s in (src, dst):
        try:
            if held and s is dst:  # closed while held: lost, and the client reset
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    if held:
        dst.close()


def hold(signum, frame):
    global held_until
    held_until = time.monotonic() + HOLD_S


def reset_all(signum, frame):
    with lock:
        for s in live:
            try:  # linger 0: the bytes still queued are dropped, and the peer gets RST; the
                # shutdown first wakes the thread reading it (a close alone would wait for it)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.shutdown(socket.SHUT_RDWR)
                s.close()
            except OSError:
                pass
        live.clear()


signal.signal(signal.SIGUSR1, reset_all)
signal.signal(signal.SIGUSR2, hold)
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(64)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write("%d\n" % server.getsockname()[1])
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
while True:
    try:
        client, _ = server.accept()
    except InterruptedError:
        continue
    try:
        upstream = socket.create_connection(("127.0.0.1", target))
    except OSError:  # nothing behind it (yet): the client sees its connection closed
        client.close()
        continue
    with lock:
        live.update((client, upstream))
    threading.Thread(target=pump, args=(client, upstream, False), daemon=True).start()
    threading.Thread(target=pump, args=(upstream, client, True), daemon=True).start()
