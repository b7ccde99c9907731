"""What bridge costs a real Tauri app under Xvfb (BENCHMARKS.md, "A Tauri app on bridge"):

- idle CPU: the Tauri Order Editor (serving MCP over HTTP, no client busy) against the same
  Tauri shell and page without bridge (the plain shell bench/build_cost.sh generates), each left
  alone IDLE_S seconds after start-up; CPU time (user + system, /proc/PID/stat) summed over the
  app's process tree (the app, WebKitWebProcess, WebKitNetworkProcess and any sandbox helper),
  interleaved runs, plus the tree's resident memory at the end; then, to attribute it, the
  example's tree under tauri-driver before and after the page's timers are cleared;
- tools/call → DOM updated: an agent's `edit_field` (the Python `mcp` client over HTTP, the
  token through BRIDGE_MCP_TOKEN) until the page's DOM shows it. The app runs under tauri-driver
  as tests/tauri runs it (that module's `Session`, imported); a MutationObserver injected with
  `execute_script` records `Date.now()` when the recipient field's model value (`data-model`)
  becomes the call's value, and the next animation frame after it. Latency = that time minus the
  wall time the request was sent. Median and p90 of SAMPLES calls after WARMUP, plus the call's
  own round trip;
- beside it, in the same run, the egui example's figures from
  examples/egui_order_editor/bench/gui_costs.py (its tools/call → drawn and idle CPU).

Run (release builds; the plain shell from `KEEP_BINS=dir bench/build_cost.sh release`):
    .venv/bin/python examples/tauri_order_editor/bench/tauri_costs.py \\
        path/to/tauri_order_editor path/to/tauri_plain_shell [path/to/egui_order_editor]
Needs Xvfb, tauri-driver, WebKitWebDriver and .venv (mcp, selenium, pillow, pytest). Prints one
JSON object.
"""

import asyncio
import warnings
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

warnings.filterwarnings("ignore", "resources/subscribe is removed")

IDLE_S = 10
# After start-up, before measuring idle: the example opens two web views at start (the editor and
# the "Report Details" window open at start, in its own Tauri window), the second's page loads
# after the first's, and on a loaded 2-core machine both take several seconds to settle.
SETTLE_S = float(os.environ.get("BENCH_SETTLE_S", "15"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
SAMPLES = 40
WARMUP = 5
ROOT = Path(__file__).resolve().parents[3]


def load(name: str, path: Path):
    """A test module by path (not collected by pytest: loaded under another name)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tauri_test = load("tauri_test_helpers", ROOT / "tests" / "tauri" / "test_tauri_order_editor.py")
gui = tauri_test.gui


# ---------------------------------------------------------------------------------------------
# Process trees and CPU


def stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = text[text.index("(") + 1:text.rindex(")")]
    return [name, *text.rsplit(")", 1)[1].split()]  # [comm, state, ppid, ...]


def tree(root: int) -> dict[int, str]:
    """`root` and its descendants: pid → command name."""
    parents, names = {}, {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            f = stat_fields(int(entry.name))
            if f:
                parents[int(entry.name)], names[int(entry.name)] = int(f[2]), f[0]
    found, frontier = {root: names.get(root, "?")}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                found[pid] = names[pid]
                frontier.append(pid)
    return found


def cpu_ticks(pid: int) -> int:
    f = stat_fields(pid)
    return int(f[12]) + int(f[13]) if f else 0  # utime + stime


def rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def wait_for(pred, timeout=120.0, what="condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise TimeoutError(what)


def tree_cpu(root: int) -> dict:
    """The CPU of `root`'s process tree over IDLE_S seconds (% of one core), per process name."""
    before = {pid: cpu_ticks(pid) for pid in tree(root)}
    time.sleep(IDLE_S)
    after = tree(root)
    by_name: dict[str, float] = {}
    for pid, name in after.items():
        share = (cpu_ticks(pid) - before.get(pid, 0)) / os.sysconf("SC_CLK_TCK") / IDLE_S * 100.0
        by_name[name] = round(by_name.get(name, 0.0) + share, 3)
    return {"percentOfOneCore": round(sum(by_name.values()), 3), "byProcess": by_name}


def idle_cpu(display: str, argv: list[str], ready, workdir: Path) -> dict:
    """Starts `argv`, waits for `ready()` and a WebKitWebProcess in its tree, lets it settle,
    then measures the tree's CPU over IDLE_S seconds (% of one core)."""
    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "WAYLAND_SOCKET")}
    env.update(DISPLAY=display, BRIDGE_MCP_TOKEN=gui.HTTP_TOKEN)
    with open(workdir / "idle.log", "ab") as log:
        proc = subprocess.Popen(gui.dying_with_us(argv), env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        wait_for(ready, what="the app")
        wait_for(lambda: "WebKitWebProces" in tree(proc.pid).values(), what="the web process")
        time.sleep(SETTLE_S)
        cpu = tree_cpu(proc.pid)
        return {**cpu, "rssMiB": round(sum(rss_kib(pid) for pid in tree(proc.pid)) / 1024.0, 1)}
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


async def idle_attribution(display: str, workdir: Path) -> dict:
    """Where the example's idle CPU goes: its tree under tauri-driver as started, then after the
    page's timers (none left since the journal panel follows `bridge://journal`) are cleared
    through WebDriver."""
    session = tauri_test.Session(display, workdir, [])
    try:
        await session.started()
        app = wait_for(lambda: next((pid for pid, name in tree(session.proc.pid).items()
                                     if name.startswith("tauri_order_edi")), None), what="the app's pid")
        time.sleep(SETTLE_S)
        as_started = tree_cpu(app)
        session.driver.execute_script("for (let i = 1; i < 100000; i++) { clearInterval(i); clearTimeout(i); }")
        time.sleep(SETTLE_S)
        return {"asStarted": as_started, "pageTimersCleared": tree_cpu(app)}
    finally:
        session.close()


# ---------------------------------------------------------------------------------------------
# tools/call → DOM updated

FIELD = 'section[data-window-id="w-A"] input[data-field="Recipient"]'
OBSERVE = """
window.__bench = {expect: arguments[0], selector: arguments[1], domAt: null, frameAt: null};
if (!window.__benchObserver) {
  const check = () => {
    const b = window.__bench;
    const input = document.querySelector(b.selector);
    if (b.domAt === null && input && input.dataset.model === b.expect) {
      b.domAt = Date.now();
      requestAnimationFrame(() => { b.frameAt = Date.now(); });
    }
  };
  window.__benchObserver = new MutationObserver(check);
  window.__benchObserver.observe(document.body, {subtree: true, childList: true, attributes: true});
}
"""


def stats(xs: list[float]) -> dict:
    xs = sorted(xs)
    return {"median": round(statistics.median(xs), 2), "p90": round(xs[int(len(xs) * 0.9) - 1], 2)}


async def latency(display: str, workdir: Path) -> dict:
    session = tauri_test.Session(display, workdir, [])
    dom, frame, calls = [], [], []
    try:
        await session.started()
        async with AsyncExitStack() as stack:
            client = await tauri_test.agent(stack, session, gui.Recorder())
            for i in range(SAMPLES + WARMUP):
                value = f"Agent {i}"
                session.driver.execute_script(OBSERVE, value, FIELD)
                sent = time.time() * 1000.0
                t0 = time.monotonic()
                result = await client.call_tool("w-A__edit_field", {"field": "recipient", "value": value})
                call_ms = (time.monotonic() - t0) * 1000.0
                if result.is_error:
                    raise RuntimeError(f"edit_field failed: {result.structured_content}")
                seen = None
                deadline = time.monotonic() + 30.0
                while not seen:
                    if time.monotonic() > deadline:
                        state = session.driver.execute_script(
                            "return [window.__bench, (document.querySelector(arguments[0]) || {}).outerHTML]", FIELD)
                        raise TimeoutError(f"the page never showed {value!r}: {state}")
                    await asyncio.sleep(0.02)
                    b = session.driver.execute_script("return window.__bench")
                    seen = b if b and b["domAt"] is not None and b["frameAt"] is not None else None
                if i >= WARMUP:
                    dom.append(seen["domAt"] - sent)
                    frame.append(seen["frameAt"] - sent)
                    calls.append(call_ms)
                await asyncio.sleep(0.05)
    finally:
        session.close()
    return {
        "toolsCallToDomMs": stats(dom),
        "toolsCallToNextFrameMs": stats(frame),
        "toolsCallRoundTripMs": stats(calls),
        "samples": len(dom),
    }


def main():
    example, plain = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    egui = Path(sys.argv[3]).resolve() if len(sys.argv) > 3 else None
    tauri_test.app_bin = lambda: str(example)  # the Session starts the release build given
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        xvfb = gui.Xvfb(tmp / "xvfb.log")
        try:
            idle = {"bridge": [], "plain": []}
            for r in range(ROUNDS):  # interleaved: with, without, with, without
                url_file = tmp / f"url-{r}"
                port = gui.free_port()
                idle["bridge"].append(idle_cpu(
                    xvfb.display,
                    [str(example), "--http", f"127.0.0.1:{port}", "--mcp-url-file", str(url_file)],
                    lambda: url_file.exists() and url_file.read_text().strip() != "", tmp,
                ))
                idle["plain"].append(idle_cpu(xvfb.display, [str(plain)], lambda: True, tmp))
            lat = asyncio.run(latency(xvfb.display, tmp))
            lat["idleUnderTauriDriver"] = asyncio.run(idle_attribution(xvfb.display, tmp))
        finally:
            xvfb.close()
    result = {"tauri": {"idleCpu": idle, **lat, "binary": str(example), "plainShell": str(plain)}}
    if egui:
        out = subprocess.run([sys.executable, str(ROOT / "examples/egui_order_editor/bench/gui_costs.py"), str(egui)],
                             capture_output=True, text=True)
        result["egui"] = json.loads(out.stdout) if out.returncode == 0 else {"error": out.stderr[-2000:]}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
