#!/usr/bin/python3
"""A member whose step hangs after its first push while its heartbeats go on, as a worker's
training thread stuck in a deadlock while its heartbeat thread lives: joins the server at
ENDPOINT, pushes one zero gradient, then only heartbeats (HEARTBEAT row of docs/protocol.md:
worker id, token as version) every 0.2 s for SECONDS, reading nothing it is sent.

usage: stuck_member.py ENDPOINT SECONDS (net_runtime.sh's --step-timeout case)
"""
import sys
import time

from wire import HEARTBEAT, Worker

w = Worker(sys.argv[1], "stuck")
w.push(w.zeros())
deadline = time.time() + float(sys.argv[2])
while time.time() < deadline:
    w.conn.send(HEARTBEAT, wid=w.wid, ver=w.token)
    time.sleep(0.2)
