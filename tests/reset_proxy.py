#!/usr/bin/python3
"""A TCP proxy that breaks its connections on demand, as a network fault does.

    reset_proxy.py TARGET_PORT PORT_FILE

Listens on a free loopback port (written to PORT_FILE), forwards every connection to
TARGET_PORT, and on SIGUSR1 resets every connection it carries (RST, not FIN: what a
middlebox or a peer's crash sends), then goes on accepting new ones: what was on its way is
lost, as after a real fault, and the ends connect again."""
import os
import signal
import socket
import struct
import sys
import threading

target = int(sys.argv[1])
live = set()
lock = threading.Lock()


def pump(src, dst):
    try:
        while True:
            data = src.recv(1 << 16)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


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
    threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
    threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
