"""What the bridge costs a real egui window under Xvfb (issue #9 item 5, BENCHMARKS.md):

- idle CPU: the app with bridge (serving MCP over HTTP, no client busy) and without it
  (`--no-bridge`), each left alone for IDLE_S seconds after start-up; CPU time from
  /proc/PID/stat (user + system), in the same run;
- tools/call → drawn: an agent's `edit_field` until the frame that shows it. The app's
  `--layout-report` file carries the model's `revision` and the frame's `drawnAtMs`; the time
  is `drawnAtMs - (time the request was sent)`. Median and p90 of SAMPLES calls, plus the call's
  own round trip for comparison.

Run (after `cargo build --release -p egui-order-editor`):
    .venv/bin/python examples/egui_order_editor/bench/gui_costs.py [path/to/egui_order_editor]
Needs Xvfb and the Python `mcp` client (./test.sh's .venv). The app's MCP token is set through
BRIDGE_MCP_TOKEN and sent as a bearer token. Prints one JSON object.
"""

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

IDLE_S = 10
SAMPLES = 40
# The app's MCP bearer token over HTTP (it reads BRIDGE_MCP_TOKEN; without it, it makes one up).
TOKEN = "bench-token-0123456789abcdef"
ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "target" / "release" / "egui_order_editor"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_display() -> int:
    n = 93
    while Path(f"/tmp/.X11-unix/X{n}").exists():
        n += 1
    return n


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for(pred, timeout=30.0, what="condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.005)
    raise TimeoutError(what)


def report(path: Path):
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def start(display: int, args: list[str], layout: Path):
    env = {**os.environ, "DISPLAY": f":{display}", "BRIDGE_MCP_TOKEN": TOKEN}
    proc = subprocess.Popen([str(BIN), "--rows", "10000", "--layout-report", str(layout), *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: report(layout), what="the first frame")
    return proc


def idle_cpu(display: int, args: list[str], tmp: Path) -> float:
    layout = tmp / f"idle-{len(args)}.json"
    proc = start(display, args, layout)
    try:
        time.sleep(1.0)  # start-up settles
        before = cpu_seconds(proc.pid)
        time.sleep(IDLE_S)
        return (cpu_seconds(proc.pid) - before) / IDLE_S * 100.0  # % of one core
    finally:
        proc.terminate()
        proc.wait(10)


async def latency(display: int, tmp: Path) -> dict:
    port = free_port()
    layout = tmp / "latency.json"
    proc = start(display, ["--http", f"127.0.0.1:{port}"], layout)
    drawn, calls = [], []
    try:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=create_mcp_http_client(headers=headers))
        async with Client(transport, mode="legacy", cache=None) as client:
            for i in range(SAMPLES + 5):
                rev = report(layout)["revision"]
                sent = time.time() * 1000.0
                t0 = time.monotonic()
                await client.call_tool("w-A__edit_field", {"field": "recipient", "value": f"Agent {i}"})
                call_ms = (time.monotonic() - t0) * 1000.0
                shown = wait_for(lambda: (r := report(layout)) and r["revision"] > rev and r, what="the frame")
                if i >= 5:  # warm-up
                    drawn.append(shown["drawnAtMs"] - sent)
                    calls.append(call_ms)
                await asyncio.sleep(0.05)
    finally:
        proc.terminate()
        proc.wait(10)

    def stats(xs):
        xs = sorted(xs)
        return {"median": round(statistics.median(xs), 2), "p90": round(xs[int(len(xs) * 0.9) - 1], 2)}

    return {"toolsCallToDrawnMs": stats(drawn), "toolsCallRoundTripMs": stats(calls), "samples": len(drawn)}


def main():
    display = free_display()
    xvfb = subprocess.Popen(["Xvfb", f":{display}", "-screen", "0", "1280x900x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: Path(f"/tmp/.X11-unix/X{display}").exists(), what="Xvfb")
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            # Interleaved: with, without, with, without.
            idle = {"bridge": [], "plain": []}
            for _ in range(2):
                idle["bridge"].append(idle_cpu(display, ["--http", f"127.0.0.1:{free_port()}"], tmp))
                idle["plain"].append(idle_cpu(display, ["--no-bridge"], tmp))
            result = {
                "idleCpuPercentOfOneCore": {k: [round(x, 3) for x in v] for k, v in idle.items()},
                **asyncio.run(latency(display, tmp)),
                "binary": str(BIN),
            }
            print(json.dumps(result))
    finally:
        xvfb.terminate()
        xvfb.wait(10)


if __name__ == "__main__":
    main()
