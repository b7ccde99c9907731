"""The egui Order Editor (examples/egui_order_editor) end to end with real pixels (issue #9 item 3).

Each test starts its own X server (Xvfb, a free display picked by the server itself through
`-displayfd`), runs `egui_order_editor --http 127.0.0.1:PORT --layout-report FILE` on it, and
then plays both parts of GB's shared UI: an agent over MCP (the official Python `mcp` client,
legacy era, subscribed to `app://windows`) and a user at the keyboard and mouse (`xdotool`,
XTEST events like a real pointer and keyboard). What the user sees is checked on screenshots
of the X server (Pillow's `ImageGrab`), cropped to where the app reports it drew each widget.

Screenshots are kept in `<target>/tmp/gui/*.png`. Run with `./test.sh` (when Xvfb, xdotool
and the egui example are available), or on its own after `cargo build -p egui-order-editor`:
`.venv/bin/python -m pytest -q tests/gui`.

Each test names the GB requirements it proves.
"""

import json
import os
import select
import shutil
import socket
import subprocess
import time
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

# The access token the app requires over HTTP, handed over in BRIDGE_MCP_TOKEN as a launcher would.
HTTP_TOKEN = "gui-test-token-0123456789abcdef"

# Legacy-era sessions subscribe with resources/subscribe on purpose.
pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:resources/subscribe is removed")]

ROOT = Path(__file__).resolve().parents[2]
REDACTED = "••••••"
SCREEN = (1280, 900)
# Slow, shared machines: every wait is for a condition, with a generous deadline.
STARTUP_TIMEOUT = 90.0
TIMEOUT = 30.0

# A pixel "changed" when a channel moved by more than this (anti-aliasing noise stays below).
PIXEL_DELTA = 40


# ---------------------------------------------------------------------------------------------
# Prerequisites and paths


def target_dir() -> Path:
    explicit = os.environ.get("CARGO_TARGET_DIR")
    if explicit:
        return Path(explicit)
    try:
        out = subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps"],
            cwd=ROOT, capture_output=True, check=True, timeout=120,
        ).stdout
        return Path(json.loads(out)["target_directory"])
    except (OSError, subprocess.SubprocessError, ValueError, KeyError):
        return ROOT / "target"


def egui_bin() -> str:
    explicit = os.environ.get("BRIDGE_EGUI_BIN")
    if explicit:
        return explicit
    path = target_dir() / "debug" / "egui_order_editor"
    if not path.exists():
        pytest.fail(f"{path} is missing: run `cargo build -p egui-order-editor` (./test.sh does)")
    return str(path)


def require_tools() -> None:
    missing = [tool for tool in ("Xvfb", "xdotool") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"GUI prerequisites missing: {', '.join(missing)} (apt-get install xvfb xdotool)")


def shots_dir() -> Path:
    path = target_dir() / "tmp" / "gui"
    path.mkdir(parents=True, exist_ok=True)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dying_with_us(argv: list[str]) -> list[str]:
    """`argv` run through util-linux `setpriv --pdeathsig TERM` (when there is one): the child
    gets SIGTERM if this test process dies, even by SIGKILL, so a crashed or killed run leaves
    no X server or app behind. (The fixtures stop them on every normal exit, failures included.)"""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "TERM", "--", *argv] if setpriv else argv


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


# ---------------------------------------------------------------------------------------------
# The X server and the app


class Xvfb:
    """`Xvfb -displayfd`: the server takes the first free display number itself (it checks the
    lock files and /tmp/.X11-unix, so parallel runs and a developer's own servers never clash)
    and writes it to the pipe once it accepts connections."""

    def __init__(self, log: Path):
        read_end, write_end = os.pipe()
        self.log = open(log, "wb")
        try:
            self.proc = subprocess.Popen(
                dying_with_us(["Xvfb", "-displayfd", str(write_end), "-screen", "0",
                               f"{SCREEN[0]}x{SCREEN[1]}x24", "-nolisten", "tcp", "-noreset"]),
                pass_fds=(write_end,), stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
            )
        finally:
            os.close(write_end)
        try:
            number = b""
            deadline = time.monotonic() + STARTUP_TIMEOUT
            while not number.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    self.close()
                    raise RuntimeError(f"Xvfb did not start: {log.read_text(errors='replace')}")
                ready, _, _ = select.select([read_end], [], [], min(left, 0.5))
                if ready:
                    chunk = os.read(read_end, 64)
                    if not chunk:
                        continue
                    number += chunk
        finally:
            os.close(read_end)
        self.display = f":{number.decode().strip()}"

    def close(self) -> None:
        stop(self.proc)
        self.log.close()


class App:
    """`egui_order_editor` on `display`, serving MCP over HTTP, reporting its layout."""

    def __init__(self, display: str, workdir: Path):
        self.display = display
        self.layout_path = workdir / "layout.json"
        self.log_path = workdir / "app.log"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "WAYLAND_SOCKET")}
        env["DISPLAY"] = display
        env["BRIDGE_MCP_TOKEN"] = HTTP_TOKEN
        self.env = env
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            dying_with_us([egui_bin(), "--http", f"127.0.0.1:{self.port}", "--rows", "100",
                           "--layout-report", str(self.layout_path)]),
            env=env, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
        )

    def logs(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def check_alive(self) -> None:
        if self.proc.poll() is not None:
            raise AssertionError(f"egui_order_editor exited with {self.proc.returncode}:\n{self.logs()}")

    async def started(self) -> None:
        """MCP is up (the line on stderr) and the first frame was laid out and drawn."""
        try:
            with anyio.fail_after(STARTUP_TIMEOUT):
                while "serving MCP at" not in self.logs():
                    self.check_alive()
                    await anyio.sleep(0.1)
                await self.wait_layout(lambda w: "recipient" in w and "editor:w-A" in w, timeout=STARTUP_TIMEOUT)
                # The pointer starts mid-screen, over the journal panel, whose cut rows show a
                # tooltip when hovered: park it off both windows.
                self.xdotool("mousemove", "--sync", str(SCREEN[0] - 1), str(SCREEN[1] - 1))
                # The layout is written right after the frame is built; wait until it is on
                # screen (the editor's area is no longer the X server's black root window).
                await wait_screen(
                    self, lambda img: img.crop(self.widget("editor:w-A")).getextrema() != ((0, 0),) * 3,
                    timeout=STARTUP_TIMEOUT, what="the first frame",
                )
                await stable_screen(self)
        except TimeoutError:
            raise AssertionError(f"egui_order_editor did not come up in {STARTUP_TIMEOUT} s:\n{self.logs()}") from None

    def layout(self) -> dict:
        try:
            return json.loads(self.layout_path.read_text())["widgets"]
        except (OSError, ValueError, KeyError):
            return {}

    def shown(self) -> dict:
        """What the app reports some widgets show (the journal rows, newest first; the Undo
        button's state; "Only I confirm orders")."""
        try:
            return json.loads(self.layout_path.read_text()).get("shown", {})
        except (OSError, ValueError):
            return {}

    async def wait_shown(self, pred, timeout: float = TIMEOUT, what: str = "the app to show it") -> dict:
        try:
            with anyio.fail_after(timeout):
                while True:
                    self.check_alive()
                    shown = self.shown()
                    if shown and pred(shown):
                        return shown
                    await anyio.sleep(0.05)
        except TimeoutError:
            save(screenshot(self), "timeout")
            raise AssertionError(f"timed out waiting for {what}: {self.shown()}") from None

    def widget(self, name: str, layout: dict | None = None) -> tuple[int, int, int, int]:
        x0, y0, x1, y1 = (layout or self.layout())[name]
        return int(x0), int(y0), int(x1), int(y1)

    async def wait_layout(self, pred, timeout: float = TIMEOUT) -> dict:
        with anyio.fail_after(timeout):
            while True:
                self.check_alive()
                widgets = self.layout()
                if widgets and pred(widgets):
                    return widgets
                await anyio.sleep(0.05)

    def xdotool(self, *args: str) -> str:
        return subprocess.run(
            ["xdotool", *args], env=self.env, capture_output=True, text=True, check=True, timeout=60
        ).stdout

    async def click(self, name: str) -> None:
        """The user moves the mouse onto widget `name`, looks, and clicks it. Moving the mouse
        makes the app draw a frame, which may move the widget (e.g. when the agent highlight
        goes away): aim again until it sits still under the pointer."""
        await self.no_agent_highlight()
        for _ in range(5):
            x0, y0, x1, y1 = self.widget(name)
            self.xdotool("mousemove", "--sync", str((x0 + x1) // 2), str((y0 + y1) // 2))
            await stable_screen(self)
            if self.widget(name) == (x0, y0, x1, y1):
                self.xdotool("click", "1")
                return
        raise AssertionError(f"{name} keeps moving: {self.layout()}")

    async def no_agent_highlight(self) -> None:
        """Waits until the app no longer highlights what an agent just did (for `HIGHLIGHT`, 3 s,
        gui.rs), so screen comparisons see the change under test and not the highlight's end."""
        try:
            with anyio.fail_after(TIMEOUT):
                while agent_marks(screenshot(self)) > 0:
                    await anyio.sleep(0.2)
        except TimeoutError:
            save(screenshot(self), "timeout")
            raise AssertionError("the agent highlight stays on screen (see timeout.png)") from None

    async def agent_highlight_over(self) -> None:
        """Waits until the app no longer highlights the agent's last call (call it once the
        frame that ran the call reported its layout, e.g. after its journal row showed), and
        that frame is on screen."""
        await self.wait_shown(lambda s: s.get("agentHighlight") is False, what="the agent highlight to end")
        await self.no_agent_highlight()
        await stable_screen(self)

    def focus_main_window(self) -> None:
        """Give the main window the keyboard focus, as a window manager does when the user
        clicks into a window. (Xvfb runs without one: the X focus stays PointerRoot, winit sees
        no FocusIn and egui drops the keystrokes.)"""
        (wid,) = self.xdotool("search", "--onlyvisible", "--name", "^Order Editor$").split()
        self.xdotool("windowfocus", "--sync", wid)

    def close(self) -> None:
        stop(self.proc)
        self.log.close()


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def xvfb(tmp_path):
    require_tools()
    server = Xvfb(tmp_path / "xvfb.log")
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
async def app(xvfb, tmp_path):
    running = App(xvfb.display, tmp_path)
    try:
        await running.started()
        yield running
    finally:
        running.close()


# ---------------------------------------------------------------------------------------------
# Pixels


def screenshot(app: App):
    from PIL import ImageGrab

    app.check_alive()
    return ImageGrab.grab(xdisplay=app.display).convert("RGB")


def changed_pixels(a, b) -> int:
    """How many pixels differ by more than PIXEL_DELTA in some channel (images of one size)."""
    from PIL import ImageChops

    r, g, b = ImageChops.difference(a, b).split()
    most = ImageChops.lighter(ImageChops.lighter(r, g), b)
    return most.point(lambda v: 255 if v > PIXEL_DELTA else 0).histogram()[255]


def consistent_shot(app: App) -> tuple[dict, object]:
    """A screenshot and the layout it was drawn with (the layout read before and after the
    grab is the same; the app writes it after every frame that moved a widget)."""
    while True:
        before = app.layout()
        img = screenshot(app)
        if app.layout() == before:
            return before, img


async def wait_screen(app: App, pred, timeout: float = TIMEOUT, what: str = "the screen to change"):
    """Takes screenshots until `pred(screenshot)` holds; returns that screenshot."""
    try:
        with anyio.fail_after(timeout):
            while True:
                img = screenshot(app)
                if pred(img):
                    return img
                await anyio.sleep(0.1)
    except TimeoutError:
        save(screenshot(app), "timeout")
        raise AssertionError(f"timed out after {timeout} s waiting for {what} (see timeout.png)") from None


# The main window's area: under Xvfb without a window manager it sits at (0, 0); its bottom
# panel is the status bar (the outcome of the user's last action).
MAIN_WINDOW = (0, 0, 760, 620)
STATUS_BAR = (0, 600, 760, 620)


def red_pixels(img, rect) -> int:
    """Pixels in `rect` drawn in the app's error red (200, 40, 40)."""
    from PIL import ImageChops

    r, g, b = img.crop(rect).split()
    mask = ImageChops.multiply(
        r.point(lambda v: 255 if v > 150 else 0),
        ImageChops.multiply(g.point(lambda v: 255 if v < 90 else 0), b.point(lambda v: 255 if v < 90 else 0)),
    )
    return mask.histogram()[255]


def agent_marks(img, rect=MAIN_WINDOW) -> int:
    """Pixels in `rect` drawn in the app's "agent" orange (230, 130, 0): the frame and label it
    puts on the window an agent just acted on, for a few seconds (gui.rs `HIGHLIGHT`)."""
    from PIL import ImageChops

    r, g, b = img.crop(rect).split()
    mask = ImageChops.multiply(
        ImageChops.multiply(r.point(lambda v: 255 if v > 200 else 0), g.point(lambda v: 255 if 100 < v < 160 else 0)),
        b.point(lambda v: 255 if v < 40 else 0),
    )
    return mask.histogram()[255]


def colored_pixels(img, rect, rgb, tolerance: int = 30) -> int:
    """Pixels in `rect` within `tolerance` of colour `rgb` in every channel."""
    from PIL import ImageChops

    channels = img.crop(rect).split()
    masks = [c.point(lambda v, want=want: 255 if abs(v - want) <= tolerance else 0) for c, want in zip(channels, rgb)]
    return ImageChops.multiply(ImageChops.multiply(masks[0], masks[1]), masks[2]).histogram()[255]


# Agents' names in the journal panel (gui.rs `journal_agent_color`); the note in a dialog only
# the user answers (and other notes) in blue.
JOURNAL_AGENT = (150, 70, 190)
NOTE_BLUE = (40, 110, 200)


async def stable_screen(app: App, timeout: float = TIMEOUT):
    """Waits until two screenshots 0.3 s apart are the same (the frame is drawn and nothing
    animates), and returns it."""
    try:
        with anyio.fail_after(timeout):
            last = screenshot(app)
            while True:
                await anyio.sleep(0.3)
                img = screenshot(app)
                if changed_pixels(last, img) == 0:
                    return img
                last = img
    except TimeoutError:
        save(screenshot(app), "timeout")
        raise AssertionError(f"the screen kept changing for {timeout} s (see timeout.png)") from None


def save(img, name: str) -> None:
    img.save(shots_dir() / f"{name}.png")


def marks(img, rect) -> list[tuple[int, int, int, int]]:
    """The separate marks (glyphs, dots) drawn inside text field `rect`: bounding boxes
    (x, y, w, h) of 8-connected groups of pixels that stand out from the field's background."""
    x0, y0, x1, y1 = rect
    crop = img.crop((x0 + 3, y0 + 3, x1 - 3, y1 - 3)).convert("L")
    w, h = crop.size
    px = crop.load()
    values = sorted(px[i, j] for i in range(w) for j in range(h))
    bg = values[len(values) // 2]
    fg = {(i, j) for i in range(w) for j in range(h) if abs(px[i, j] - bg) > 60}
    out = []
    while fg:
        stack = [fg.pop()]
        pts = []
        while stack:
            a, b = stack.pop()
            pts.append((a, b))
            for da in (-1, 0, 1):
                for db in (-1, 0, 1):
                    if (a + da, b + db) in fg:
                        fg.remove((a + da, b + db))
                        stack.append((a + da, b + db))
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        out.append((min(xs), min(ys), max(xs) - min(xs) + 1, max(ys) - min(ys) + 1))
    return sorted(out)


# ---------------------------------------------------------------------------------------------
# The agent's side


class Recorder:
    """Collects notifications as `message_handler` sees them."""

    def __init__(self):
        self.seen: list[str] = []

    async def __call__(self, message):
        method = getattr(message, "method", None)
        if method == "notifications/resources/updated":
            self.seen.append(f"updated:{message.params.uri}")
        elif method == "notifications/tools/list_changed":
            self.seen.append("tools_changed")

    def take(self) -> list[str]:
        out, self.seen = self.seen, []
        return out

    async def wait_for(self, what: str, timeout: float = TIMEOUT) -> None:
        try:
            with anyio.fail_after(timeout):
                while what not in self.seen:
                    await anyio.sleep(0.02)
        except TimeoutError:
            raise AssertionError(f"no {what} notification in {timeout} s (got {self.seen})") from None


async def agent(stack: AsyncExitStack, app: App, rec: Recorder) -> Client:
    """A legacy-era (2025-11-25) session subscribed to app://windows."""
    client = await stack.enter_async_context(Client(
        streamable_http_client(
            app.url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {HTTP_TOKEN}"})
        ),
        mode="legacy",
        message_handler=rec,
        cache=None,
    ))
    assert client.protocol_version == "2025-11-25"
    await client.subscribe_resource("app://windows")
    return client


async def read_windows(client: Client) -> tuple[dict, str]:
    result = await client.read_resource("app://windows")
    (content,) = result.contents
    return json.loads(content.text), content.text


def window(snapshot: dict, wid: str) -> dict | None:
    return next((w for w in snapshot["windows"] if w["id"] == wid), None)


def fields(snapshot: dict, wid: str) -> dict:
    return {i["label"]: i for b in window(snapshot, wid)["blocks"] if b["type"] == "fields" for i in b["items"]}


async def tool_names(client: Client) -> set[str]:
    return {t.name for t in (await client.list_tools()).tools}


async def call(client: Client, name: str, args: dict | None = None):
    r = await client.call_tool(name, args or {})
    return r.is_error, r.structured_content


async def until(check, what: str, timeout: float = TIMEOUT):
    """Polls the async `check` until it returns something truthy."""
    try:
        with anyio.fail_after(timeout):
            while True:
                got = await check()
                if got:
                    return got
                await anyio.sleep(0.1)
    except TimeoutError:
        raise AssertionError(f"timed out after {timeout} s waiting for {what}") from None


# ---------------------------------------------------------------------------------------------
# The tests


async def test_agent_edit_shows_on_screen(app):
    """GB-10.1-1, GB-10.1-2: one UI, shared by the agent and the user: an agent's `edit_field`
    is drawn in the real window, where the recipient field is, and the heading shows the new
    summary (GB-4.2-8). GB-6-1, GB-8.3-1: the update notification comes after it took effect."""
    rec = Recorder()
    async with AsyncExitStack() as stack:
        client = await agent(stack, app, rec)
        snap, _ = await read_windows(client)
        version = window(snap, "w-A")["version"]
        layout0, before = consistent_shot(app)
        save(before, "01-initial")

        is_error, body = await call(
            client, "w-A__edit_field", {"field": "recipient", "value": "Alice Whitfield", "expectedVersion": version}
        )
        assert not is_error, body
        await rec.wait_for("updated:app://windows")
        snap, _ = await read_windows(client)
        assert fields(snap, "w-A")["Recipient"]["value"] == "Alice Whitfield"
        assert window(snap, "w-A")["version"] == version + 1

        # The field as drawn now (the layout may move while the app highlights the agent's window).
        def recipient_changed(img):
            layout = app.layout()
            return changed_pixels(before.crop(app.widget("recipient", layout0)), img.crop(app.widget("recipient", layout))) > 30

        await wait_screen(app, recipient_changed, what="the recipient field to show the agent's value")
        layout1, after = consistent_shot(app)
        # The frame that shows the edit also shows the user which window the agent is working in
        # (an orange frame around the editor, for a few seconds).
        assert agent_marks(before) == 0
        assert agent_marks(after, app.widget("editor:w-A", layout1)) > 100
        save(after, "02-after-agent-edit")
        assert changed_pixels(before.crop(app.widget("recipient", layout0)), after.crop(app.widget("recipient", layout1))) > 30
        # The new recipient is drawn as glyphs inside the field (it was empty).
        assert not marks(before, app.widget("recipient", layout0))
        assert len(marks(after, app.widget("recipient", layout1))) >= 8
        # The heading shows the new summary ("Editing order #12345 for Alice Whitfield, ...").
        assert window(snap, "w-A")["summary"].startswith("Editing order #12345 for Alice Whitfield")
        assert changed_pixels(before.crop(app.widget("summary", layout0)), after.crop(app.widget("summary", layout0))) > 30

        # Nothing else moved: the empty area between the editor and the journal panel (which
        # gets the agent's entry) is as it was.
        e0, e1 = app.widget("editor:w-A", layout0), app.widget("editor:w-A", layout1)
        journal_top = min(app.widget("journal", layout0)[1], app.widget("journal", layout1)[1])
        below = (0, max(e0[3], e1[3]) + 6, e0[2], min(max(e0[3], e1[3]) + 206, journal_top - 4))
        assert below[3] - below[1] > 40, below
        assert changed_pixels(before.crop(below), after.crop(below)) <= 5
        # Nor did the Report Details window beside it (its own X window at x >= 770).
        report = (800, 60, 1200, 500)
        assert changed_pixels(before.crop(report), after.crop(report)) <= 5


async def test_user_typing_commits_through_the_bridge(app):
    """The user clicks into Amount, selects all, types "$250.00" and presses Enter.
    GB-7.1-1: the user's edit bumps the window's version like any write; GB-6-1, GB-10.1-4: the
    subscribed agent is notified, and what it then reads has the edit (GB-8.3-1, GB-8.3-3).
    GB-7.1-2, GB-7.1-5: an agent write based on the version it read before is `stale_state`;
    the user's edit stands."""
    rec = Recorder()
    async with AsyncExitStack() as stack:
        client = await agent(stack, app, rec)
        snap, _ = await read_windows(client)
        version = window(snap, "w-A")["version"]
        assert fields(snap, "w-A")["Amount"]["value"] == "$100.00"
        layout0, before = consistent_shot(app)
        rec.take()

        app.focus_main_window()
        await app.click("amount")
        app.xdotool("key", "ctrl+a")
        app.xdotool("type", "--delay", "30", "$250.00")

        # The typing is on screen: the field's text changed (inside its frame, which the focus
        # redraws), with no selection block left and no "00" of "$100.00" (drawn as one mark).
        def typed(img):
            x0, y0, x1, y1 = app.widget("amount")
            inside = (x0 + 3, y0 + 3, x1 - 3, y1 - 3)
            if changed_pixels(before.crop(inside), img.crop(inside)) <= 30:
                return False
            glyphs = marks(img, (x0, y0, x1, y1))
            return len(glyphs) >= 6 and max(w for _, _, w, _ in glyphs) < 10

        await wait_screen(app, typed, what="the typed amount")
        save(screenshot(app), "03-user-typing")
        # ...but not committed: a form commits on Enter (or when the field loses focus), so an
        # agent's expectedVersion stays good while the user types.
        snap, _ = await read_windows(client)
        assert fields(snap, "w-A")["Amount"]["value"] == "$100.00"
        assert window(snap, "w-A")["version"] == version
        assert "updated:app://windows" not in rec.seen, rec.seen

        app.xdotool("key", "Return")
        await rec.wait_for("updated:app://windows")
        # Read right after the notification: the edit has already taken effect (GB-6-1).
        snap, _ = await read_windows(client)
        assert fields(snap, "w-A")["Amount"]["value"] == "$250.00"
        new_version = window(snap, "w-A")["version"]
        assert new_version > version
        assert window(snap, "w-A")["summary"] == "Editing order #12345, recipient not yet filled in"
        save(await stable_screen(app), "04-user-committed")

        # The agent, still holding the version it read before the user's edit, is refused.
        is_error, body = await call(
            client, "w-A__edit_field", {"field": "amount", "value": "$999.00", "expectedVersion": version}
        )
        assert is_error and body["code"] == "stale_state", body
        assert body["currentVersion"] == new_version
        snap, _ = await read_windows(client)
        assert fields(snap, "w-A")["Amount"]["value"] == "$250.00"
        assert window(snap, "w-A")["version"] == new_version


async def test_agent_submit_opens_dialog_user_cancels(app):
    """GB-2-5, GB-2-3, GB-2-4: the agent's submit opens the window-level modal "Confirm order";
    the operable set has the dialog instead of w-A, and (GB-5.1-5, GB-5.1-6, GB-6-2) w-A's
    tools are gone from tools/list with list_changed sent. The dialog is drawn on screen; the
    user clicks its Cancel button: the dialog closes and w-A's tools come back."""
    rec = Recorder()
    async with AsyncExitStack() as stack:
        client = await agent(stack, app, rec)
        is_error, body = await call(client, "w-A__edit_field", {"field": "recipient", "value": "Bob"})
        assert not is_error, body
        await wait_screen(app, lambda img: len(marks(img, app.widget("recipient"))) >= 3, what="Bob in the form")
        layout0, before = consistent_shot(app)
        rec.take()

        is_error, body = await call(client, "w-A__submit")
        assert not is_error, body
        (dialog,) = body["openedWindowIds"]
        await rec.wait_for("tools_changed")
        names = await tool_names(client)
        assert not any(n.startswith("w-A__") for n in names), sorted(names)
        assert {f"{dialog}__confirm", f"{dialog}__cancel"} <= names
        snap, _ = await read_windows(client)
        assert dialog in snap["operableWindowIds"] and "w-A" not in snap["operableWindowIds"]
        d = window(snap, dialog)
        assert d["modal"] is True and d["ownerId"] == "w-A" and d["title"] == "Confirm order"

        layout = await app.wait_layout(lambda w: {"dialog", "confirm", "cancel"} <= set(w))
        rect = app.widget("dialog", layout)
        assert rect[2] - rect[0] > 200 and rect[3] - rect[1] > 60, rect
        await wait_screen(app, lambda img: changed_pixels(before.crop(rect), img.crop(rect)) > 500, what="the dialog")
        save(await stable_screen(app), "05-dialog-open")

        # The user answers the dialog.
        await app.click("cancel")
        await until(lambda: _dialog_gone(client, dialog), what="the dialog to close")
        names = await tool_names(client)
        assert {"w-A__edit_field", "w-A__submit"} <= names and not any(n.startswith(f"{dialog}__") for n in names)
        snap, _ = await read_windows(client)
        assert "w-A" in snap["operableWindowIds"]
        assert "tools_changed" in rec.seen
        await app.wait_layout(lambda w: "dialog" not in w)
        save(await stable_screen(app), "06-dialog-cancelled")


async def _dialog_gone(client: Client, dialog: str) -> bool:
    snap, _ = await read_windows(client)
    return window(snap, dialog) is None


async def test_user_submits_what_the_agent_filled_in(app):
    """The agent fills the form; the user presses "Submit order" and then "Confirm" with the
    mouse. The dialog shows and carries what the agent chose; after Confirm the order is placed:
    the summary says so, and (GB-5.1-5, GB-5.1-6) edit_field and submit are no longer offered."""
    rec = Recorder()
    async with AsyncExitStack() as stack:
        client = await agent(stack, app, rec)
        for field, value in (("recipient", "Chen Li"), ("amount", "$75.50")):
            is_error, body = await call(client, "w-A__edit_field", {"field": field, "value": value})
            assert not is_error, body
        await wait_screen(app, lambda img: len(marks(img, app.widget("recipient"))) >= 4, what="Chen Li in the form")
        rec.take()

        await app.click("submit")
        await rec.wait_for("tools_changed")
        snap, _ = await read_windows(client)
        (dialog,) = [w["id"] for w in snap["windows"] if w["title"] == "Confirm order"]
        assert window(snap, dialog)["summary"] == "Confirm the order for Chen Li, amount $75.50?"
        assert snap["operableWindowIds"] == [dialog, "w-C"]
        await app.wait_layout(lambda w: "confirm" in w)
        save(await stable_screen(app), "07-user-submitted")
        rec.take()

        await app.click("confirm")
        await rec.wait_for("tools_changed")
        snap, _ = await read_windows(client)
        assert window(snap, dialog) is None
        assert window(snap, "w-A")["summary"] == "Order #12345 for Chen Li was placed"
        names = await tool_names(client)
        assert "w-A__close" in names and "w-A__edit_field" not in names and "w-A__submit" not in names
        save(await stable_screen(app), "08-order-placed")

        # What the agent can no longer do, the user cannot either (GB-5.1-4): "Submit order" is
        # drawn disabled, so the user's click does nothing: no dialog, no new version, no
        # refusal to read in the status bar.
        version = window(snap, "w-A")["version"]
        await app.click("submit")
        await stable_screen(app)
        assert red_pixels(screenshot(app), STATUS_BAR) == 0
        snap, _ = await read_windows(client)
        assert [w["id"] for w in snap["windows"]] == ["w-A", "w-C"]
        assert window(snap, "w-A")["version"] == version


async def test_password_is_masked_on_screen_and_redacted_over_mcp(app):
    """GB-4.5-2: the agent reads the payment password as `••••••` with `sensitive: true` and
    never its text, while the window shows a password field: dots only, no glyphs."""
    async with AsyncExitStack() as stack:
        client = await agent(stack, app, Recorder())
        snap, raw = await read_windows(client)
        assert fields(snap, "w-A")["Payment password"] == {"label": "Payment password", "value": REDACTED, "sensitive": True}
        assert "hunter2" not in raw
        layout, img = consistent_shot(app)
        save(img, "09-password-field")
        dots = marks(img, app.widget("payment_password", layout))
        # A 14-character secret as a row of small dots (neighbouring dots may touch), on one line.
        assert len(dots) >= 6, dots
        assert all(h <= 5 for _, _, _, h in dots), dots
        assert len({y for _, y, _, _ in dots}) == 1, dots
        # The amount field next to it shows real glyphs ("$100.00"), much taller than a dot.
        assert max(h for _, _, _, h in marks(img, app.widget("amount", layout))) >= 8


async def test_report_windows_are_real_top_level_windows(app):
    """GB-10.1-1: windows are the real desktop windows. The agent's `app__new_report` opens a
    second Report Details as its own top-level X window; its `close` removes it (GB-6-2)."""
    rec = Recorder()
    async with AsyncExitStack() as stack:
        client = await agent(stack, app, rec)
        is_error, body = await call(client, "app__new_report")
        assert not is_error, body
        (report,) = body["openedWindowIds"]
        title = f"^Report Details \\(.*\\)$"
        wids = await until(lambda: _x_windows(app, title, 2), what="a second report window")
        geometry = app.xdotool("getwindowgeometry", wids[-1])
        assert "500x560" in geometry, geometry
        save(await stable_screen(app), "10-second-report")
        is_error, body = await call(client, f"{report}__close")
        assert not is_error, body
        await until(lambda: _x_windows(app, title, 1, exact=True), what="the report window to close")


async def _x_windows(app: App, title: str, n: int, exact: bool = False):
    try:
        out = app.xdotool("search", "--onlyvisible", "--name", title).split()
    except subprocess.CalledProcessError:
        out = []
    return out if (len(out) == n if exact else len(out) >= n) else None


async def test_agent_highlight_ends_by_itself(app):
    """The app frames the window an agent acted on in orange for `HIGHLIGHT` (3 s, gui.rs) and
    then goes back by itself, with no input from the user, and without moving the form."""
    async with AsyncExitStack() as stack:
        client = await agent(stack, app, Recorder())
        is_error, body = await call(client, "w-A__edit_field", {"field": "recipient", "value": "Dana"})
        assert not is_error, body
        await wait_screen(app, lambda img: agent_marks(img) > 100, what="the agent highlight")
        # HIGHLIGHT is 3 s; allow a slow machine plenty more, with no input at all meanwhile.
        await wait_screen(app, lambda img: agent_marks(img) == 0, timeout=15, what="the agent highlight to end")


async def test_calls_keep_working_while_the_window_is_hidden(app):
    """Issue #9: a hidden (unmapped) window draws no frames, yet an agent's calls still run at
    once and not after the 30 s action timeout. eframe still runs `App::logic` on a repaint
    request, and the bridge's fallback thread takes over when no frame comes. Mapped again, the
    window shows the edit."""
    async with AsyncExitStack() as stack:
        client = await agent(stack, app, Recorder())
        (main,) = app.xdotool("search", "--onlyvisible", "--name", "^Order Editor$").split()
        app.xdotool("windowunmap", "--sync", main)
        assert await _x_windows(app, "^Order Editor$", 0, exact=True) is not None, "the window is hidden"
        started = time.monotonic()
        for value in ("Hidden 1", "Hidden 2", "Hidden 3"):
            is_error, body = await call(client, "w-A__edit_field", {"field": "recipient", "value": value})
            assert not is_error, body
        # Well under the action timeout (30 s) for all three: nobody waited for a frame that never came.
        assert time.monotonic() - started < 10, time.monotonic() - started
        snap, _ = await read_windows(client)
        assert fields(snap, "w-A")["Recipient"]["value"] == "Hidden 3"
        app.xdotool("windowmap", "--sync", main)
        await wait_screen(app, lambda img: len(marks(img, app.widget("recipient"))) >= 6, what="the edit drawn once shown")
        save(await stable_screen(app), "11-shown-again")


# ---------------------------------------------------------------------------------------------
# The human stays in command: the journal panel, "Undo agent's change", "Only I confirm orders"


def _journal_row(row: str, who: str, what: str, window_id: str, outcome: str) -> bool:
    """Whether journal line `row` ("HH:MM:SS  who  what  window  outcome  args  versions") is
    that entry."""
    parts = row.split("  ")
    return (
        len(parts) >= 5 and len(parts[0]) == 8 and parts[0][2] == ":" and parts[0][5] == ":"
        and parts[1].startswith(who) and parts[2:5] == [what, window_id, outcome]
    )


async def test_journal_panel_shows_the_agent_and_the_user_undoes_its_change(app):
    """Issue 20 items 5 and 6 (the egui app): (a) the agent's `edit_field` appears in the
    journal panel at once, drawn in pixels, named by its HTTP token's label, its arguments as
    the journal keeps them and a user-only call's secret masked (GB-4.5-2); (b) the user clicks
    "Undo agent's change" and the Recipient field shows the old value again, in pixels; (c) the
    agent's next write with its old expectedVersion gets `stale_state` (GB-7.1-2), drawn red in
    the panel."""
    rec = Recorder()
    async with AsyncExitStack() as stack:
        client = await agent(stack, app, rec)
        is_error, body = await call(client, "w-A__edit_field", {"field": "recipient", "value": "Alice"})
        assert not is_error, body
        await app.wait_shown(lambda s: _journal_row(s["journal"][0], "Agent", "edit_field", "w-A", "ok"))
        await app.agent_highlight_over()
        await stable_screen(app)
        layout_old, old = consistent_shot(app)
        save(old, "20-agent-first-edit")
        old_field = old.crop(app.widget("recipient", layout_old))
        snap, _ = await read_windows(client)
        version = window(snap, "w-A")["version"]

        # (a) The agent's edit in the journal panel: its text (layout report) and its pixels.
        is_error, body = await call(
            client, "w-A__edit_field", {"field": "recipient", "value": "Mallory Mayhem", "expectedVersion": version}
        )
        assert not is_error, body
        shown = await app.wait_shown(lambda s: "Mallory" in s["journal"][0], what="the edit in the journal")
        row = shown["journal"][0]
        assert _journal_row(row, "Agent", "edit_field", "w-A", "ok"), row
        assert "token default" in row, row
        assert f'{{"expectedVersion":{version},"field":"recipient","value":"Mallory Mayhem"}}' in row and f"v{version}→{version + 1}" in row, row
        assert shown["undo"]["enabled"] is True and "edit_field" in shown["undo"]["text"], shown["undo"]
        layout_new = await app.wait_layout(lambda w: "journal_row:0" in w)
        row_rect = app.widget("journal_row:0", layout_new)
        img = await wait_screen(
            app, lambda img: changed_pixels(old.crop(row_rect), img.crop(row_rect)) > 50, what="the new journal row"
        )
        assert colored_pixels(img, app.widget("journal_row:0", app.layout()), JOURNAL_AGENT) > 20, "the agent, named"

        # The agent tries the user's own action: refused, and the panel shows the secret masked.
        is_error, body = await call(client, "w-A__set_payment_password", {"password": "agent-chosen-secret"})
        assert is_error and body["code"] == "action_not_available", body
        shown = await app.wait_shown(lambda s: "set_payment_password" in s["journal"][0])
        row = shown["journal"][0]
        assert _journal_row(row, "Agent", "set_payment_password", "w-A", "action_not_available"), row
        assert f'{{"password":"{REDACTED}"}}' in row and "agent-chosen-secret" not in json.dumps(shown), row
        await app.agent_highlight_over()
        mallory = (await stable_screen(app)).crop(app.widget("recipient"))
        assert changed_pixels(old_field, mallory) > 30, "the field shows the agent's new value"
        save(screenshot(app), "21-journal-agent-edit")

        # (b) The user takes the agent's change back: the field shows "Alice" again, in pixels.
        rec.take()
        await app.click("undo")
        await rec.wait_for("updated:app://windows")

        def old_value_back(img):
            return changed_pixels(old_field, img.crop(app.widget("recipient"))) == 0

        await wait_screen(app, old_value_back, what="the old recipient drawn again")
        snap, _ = await read_windows(client)
        assert fields(snap, "w-A")["Recipient"]["value"] == "Alice"
        undone = window(snap, "w-A")["version"]
        assert undone > version + 1
        shown = await app.wait_shown(lambda s: _journal_row(s["journal"][0], "You", "undo edit_field", "w-A", "ok"))
        assert f"v{version + 1}→{undone}" in shown["journal"][0], shown["journal"][0]
        save(await stable_screen(app), "22-user-undid")

        # (c) The agent still holds the version its edit left: stale.
        is_error, body = await call(
            client, "w-A__edit_field", {"field": "recipient", "value": "Mallory again", "expectedVersion": version + 1}
        )
        assert is_error and body["code"] == "stale_state", body
        assert body["currentVersion"] == undone
        snap, _ = await read_windows(client)
        assert fields(snap, "w-A")["Recipient"]["value"] == "Alice"
        shown = await app.wait_shown(lambda s: _journal_row(s["journal"][0], "Agent", "edit_field", "w-A", "stale_state"))
        await app.agent_highlight_over()
        layout, img = consistent_shot(app)
        assert red_pixels(img, app.widget("journal_row:0", layout)) > 20, "the refusal's code drawn red"
        assert changed_pixels(old_field, img.crop(app.widget("recipient", layout))) == 0, "Alice still"


async def test_only_the_user_confirms_orders(app):
    """Issue 20 items 4 to 6 (the egui app): the user ticks "Only I confirm orders"; the agent's
    submit still opens "Confirm order" (GB-2-5), whose summary says it waits for the user; the
    dialog has no confirm tool in tools/list and the agent's `{dialog}__confirm` by name gets
    `action_not_available` (GB-7.4-8); the dialog on screen keeps its Confirm button and says
    the agent cannot confirm; the user's click on it places the order."""
    rec = Recorder()
    async with AsyncExitStack() as stack:
        client = await agent(stack, app, rec)
        layout0, before = consistent_shot(app)
        box = app.widget("user_confirms", layout0)
        assert app.shown()["userConfirms"] is False
        await app.click("user_confirms")
        await app.wait_shown(lambda s: s["userConfirms"] is True, what="the switch on")
        await wait_screen(app, lambda img: changed_pixels(before.crop(box), img.crop(box)) > 10, what="the tick")
        shown = await app.wait_shown(lambda s: _journal_row(s["journal"][0], "You", "edit", "w-A", "ok"))

        for field, value in (("recipient", "Chen Li"), ("amount", "$75.50")):
            is_error, body = await call(client, "w-A__edit_field", {"field": field, "value": value})
            assert not is_error, body
        rec.take()
        is_error, body = await call(client, "w-A__submit")
        assert not is_error, body
        (dialog,) = body["openedWindowIds"]
        await rec.wait_for("tools_changed")
        snap, _ = await read_windows(client)
        assert window(snap, dialog)["summary"] == "Waiting for the user to confirm the order for Chen Li, amount $75.50"
        assert dialog in snap["operableWindowIds"]
        names = await tool_names(client)
        assert f"{dialog}__confirm" not in names and f"{dialog}__cancel" in names, sorted(names)

        is_error, body = await call(client, f"{dialog}__confirm")
        assert is_error and body["code"] == "action_not_available", body
        snap, _ = await read_windows(client)
        assert window(snap, dialog) is not None
        assert window(snap, "w-A")["summary"] != "Order #12345 for Chen Li was placed"
        await app.wait_shown(lambda s: _journal_row(s["journal"][0], "Agent", "confirm", dialog, "action_not_available"))

        layout = await app.wait_layout(lambda w: {"dialog", "confirm", "dialog_user_note"} <= set(w))
        await app.agent_highlight_over()
        img = await stable_screen(app)
        assert colored_pixels(img, app.widget("dialog_user_note", layout), NOTE_BLUE) > 20, "the note is drawn"
        save(img, "23-only-the-user-confirms")
        summary_rect = app.widget("summary", layout)
        rec.take()

        await app.click("confirm")
        await rec.wait_for("tools_changed")
        snap, _ = await read_windows(client)
        assert window(snap, dialog) is None
        assert window(snap, "w-A")["summary"] == "Order #12345 for Chen Li was placed"
        await app.wait_shown(lambda s: _journal_row(s["journal"][0], "You", "confirm", dialog, "ok"))
        await app.wait_layout(lambda w: "dialog" not in w)
        after = await stable_screen(app)
        assert changed_pixels(img.crop(summary_rect), after.crop(app.widget("summary"))) > 100, "the heading says placed"
        save(after, "24-user-confirmed")
