"""The Tauri Order Editor (examples/tauri_order_editor) end to end under Xvfb (issue 21 item 3).

Each test starts its own X server (Xvfb, the egui test's `Xvfb` helper), `tauri-driver`
(2.1.0, in front of WebKitGTK's `WebKitWebDriver`) on it, and a WebDriver session (Selenium's
`webdriver.Remote`, so nothing is downloaded) whose capabilities make the driver start
`tauri_order_editor --http 127.0.0.1:PORT …`. The app's MCP token reaches it through
`BRIDGE_MCP_TOKEN` in the environment tauri-driver starts it with. Then the test plays both
parts of GB's shared UI: an agent over MCP (the official Python `mcp` client, legacy era,
subscribed to `app://windows`; the egui test's helpers) and a user in the page (WebDriver:
typing, Enter, clicks, reading the DOM). "Confirm order" and "Report Details" are Tauri
windows of their own: the test switches WebDriver to them by window handle.

No WebKit environment override is needed (no WEBKIT_DISABLE_COMPOSITING_MODE, no D-Bus
session, the sandbox stays on): `WEBKIT_ENV` below stays empty unless a machine proves
otherwise, and then it is the only place one goes (named in .ci/run as well).

Screenshots are kept in `<target>/tmp/tauri/*.png`. Run with `./test.sh` (when Xvfb, xdotool,
WebKitWebDriver, tauri-driver and the example are available), or on its own after
`cargo build -p tauri-order-editor`: `.venv/bin/python -m pytest -q tests/tauri`.

Each test names issue 21 and the GB requirements it proves.
"""

import importlib.util
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_egui_helpers():
    """The egui test's module (tests/gui/test_egui_xvfb.py) for its X server, MCP agent and
    snapshot helpers, loaded under another name so pytest does not collect its tests twice."""
    spec = importlib.util.spec_from_file_location("egui_xvfb_helpers", ROOT / "tests" / "gui" / "test_egui_xvfb.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gui = _load_egui_helpers()
Recorder, agent, read_windows, window, fields, call = (
    gui.Recorder, gui.agent, gui.read_windows, gui.window, gui.fields, gui.call
)
REDACTED = gui.REDACTED

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:resources/subscribe is removed")]

STARTUP_TIMEOUT = 120.0
TIMEOUT = 30.0
# Test-only WebKit environment overrides (none needed so far; see the module docstring).
WEBKIT_ENV: dict[str, str] = {}
XSS = '<img src=x onerror="window.__TAURI__.core.invoke(\'plugin:bridge|call\',{name:\'w-A__submit\',arguments:{}})">'


# ---------------------------------------------------------------------------------------------
# Prerequisites


def tauri_driver() -> str | None:
    found = shutil.which("tauri-driver")
    if found:
        return found
    home = Path.home() / ".cargo" / "bin" / "tauri-driver"
    return str(home) if home.exists() else None


def require_tools() -> None:
    missing = [tool for tool in ("Xvfb", "xdotool", "WebKitWebDriver") if shutil.which(tool) is None]
    if tauri_driver() is None:
        missing.append("tauri-driver")
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (pip)")
    if missing:
        pytest.skip(
            f"Tauri WebDriver prerequisites missing: {', '.join(missing)} (apt-get install xvfb xdotool "
            "webkit2gtk-driver; cargo install tauri-driver --version 2.1.0 --locked; pip install selenium; see .ci/run)"
        )


def app_bin() -> str:
    path = gui.target_dir() / "debug" / "tauri_order_editor"
    if not path.exists():
        pytest.fail(f"{path} is missing: run `cargo build -p tauri-order-editor` (./test.sh does)")
    return str(path)


def shots_dir() -> Path:
    path = gui.target_dir() / "tmp" / "tauri"
    path.mkdir(parents=True, exist_ok=True)
    return path


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


# ---------------------------------------------------------------------------------------------
# tauri-driver, the WebDriver session, the app


class Session:
    """tauri-driver on `display` and a WebDriver session that started the app."""

    def __init__(self, display: str, workdir: Path, extra_args: list[str]):
        from selenium import webdriver
        from selenium.webdriver.common.options import ArgOptions
        from selenium.webdriver.remote.client_config import ClientConfig
        from selenium.webdriver.remote.remote_connection import RemoteConnection

        self.display = display
        self.journal_path = workdir / "journal.jsonl"
        self.url_file = workdir / "mcp-url"
        self.mcp_port = gui.free_port()
        self.url = f"http://127.0.0.1:{self.mcp_port}/mcp"
        driver_port, native_port = gui.free_port(), gui.free_port()
        env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "WAYLAND_SOCKET")}
        env.update(DISPLAY=display, BRIDGE_MCP_TOKEN=gui.HTTP_TOKEN, **WEBKIT_ENV)
        self.env = env
        self.log_path = workdir / "tauri-driver.log"
        self.log = open(self.log_path, "wb")
        # Its own process group: tauri-driver, WebKitWebDriver and the app are stopped together.
        self.proc = subprocess.Popen(
            gui.dying_with_us([tauri_driver(), "--port", str(driver_port), "--native-port", str(native_port)]),
            env=env, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, start_new_session=True,
        )
        self.driver = None
        deadline = time.monotonic() + STARTUP_TIMEOUT
        # tauri-driver listens before the WebKitWebDriver it started does, and a session request
        # it cannot forward fails: wait for both.
        while not (port_open(driver_port) and port_open(native_port)):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise AssertionError(f"tauri-driver did not start:\n{self.logs()}")
            time.sleep(0.1)
        options = ArgOptions()
        options.set_capability("browserName", "wry")
        options.set_capability("tauri:options", {
            "application": app_bin(),
            "args": ["--http", f"127.0.0.1:{self.mcp_port}", "--rows", "1000", "--journal", str(self.journal_path),
                     "--mcp-url-file", str(self.url_file), *extra_args],
        })
        # An app that cannot start makes the new-session request hang: every request is bounded.
        executor = f"http://127.0.0.1:{driver_port}"
        try:
            connection = RemoteConnection(client_config=ClientConfig(executor, timeout=STARTUP_TIMEOUT))
            self.driver = webdriver.Remote(command_executor=connection, options=options)
        except Exception as e:
            self.close()
            raise AssertionError(f"no WebDriver session: {e}\n{self.logs()}") from None
        self.main = None

    def logs(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    async def started(self) -> None:
        """The app serves MCP (it wrote its URL) and the page drew the Order Editor."""
        from selenium.webdriver.common.by import By

        try:
            with anyio.fail_after(STARTUP_TIMEOUT):
                while not (self.url_file.exists() and self.url_file.read_text() == self.url):
                    await anyio.sleep(0.1)
                # The app opens the main window and the first report's own window at once: the
                # session may start in either, so find the main page among the windows.
                while not self.find_main():
                    await anyio.sleep(0.1)
                while not self.driver.find_elements(By.CSS_SELECTOR, 'body[data-ready="1"] section[data-window-id="w-A"]'):
                    await anyio.sleep(0.1)
        except TimeoutError:
            raise AssertionError(f"the app did not come up in {STARTUP_TIMEOUT} s:\n{self.logs()}") from None

    def find_main(self) -> bool:
        """Switches to the main window (index.html, `body[data-page=main]`) and makes it
        `self.main`, once it is there."""
        from selenium.common.exceptions import NoSuchWindowException

        for handle in self.driver.window_handles:
            try:
                self.driver.switch_to.window(handle)
                if self.driver.execute_script("return document.body?.dataset.page ?? null") == "main":
                    self.main = handle
                    return True
            except NoSuchWindowException:
                continue
        return False

    def journal(self) -> list[dict]:
        """The app's journal (`--journal`), every entry written before its call returned."""
        try:
            return [json.loads(line) for line in self.journal_path.read_text().splitlines() if line.strip()]
        except OSError:
            return []

    def repainted(self, rect: tuple[int, int, int, int]) -> bool:
        """Whether `rect` of the X screen shows more than one colour (a page drawn there, not the
        blank a moved window leaves until the window under it repaints)."""
        from PIL import ImageGrab

        lo, hi = ImageGrab.grab(xdisplay=self.display).crop(rect).convert("L").getextrema()
        return lo != hi

    def shot(self, name: str, crop: tuple[int, int, int, int] | None = None) -> None:
        """The X screen (every Tauri window; `crop`: that part of it) and WebDriver's view of the
        current window."""
        from PIL import ImageGrab

        screen = ImageGrab.grab(xdisplay=self.display)
        (screen.crop(crop) if crop else screen).save(shots_dir() / f"{name}.png")
        self.driver.save_screenshot(str(shots_dir() / f"{name}-webview.png"))

    def close(self) -> None:
        if self.driver is not None:
            try:
                self.driver.quit()
            except Exception:
                pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=10)
        self.log.close()


anyio_backend = gui.anyio_backend


@pytest.fixture
def xvfb(tmp_path):
    require_tools()
    server = gui.Xvfb(tmp_path / "xvfb.log")
    try:
        yield server
    finally:
        server.close()


def _session_fixture(extra_args):
    @pytest.fixture
    async def fixture(xvfb, tmp_path):
        running = Session(xvfb.display, tmp_path, extra_args)
        try:
            await running.started()
            yield running
        finally:
            running.close()

    return fixture


app = _session_fixture([])
probed_app = _session_fixture(["--probe-window"])


# ---------------------------------------------------------------------------------------------
# The user's side: the DOM


def css(s: Session, selector: str):
    from selenium.webdriver.common.by import By

    return s.driver.find_elements(By.CSS_SELECTOR, selector)


async def until(check, what: str, timeout: float = TIMEOUT):
    """Polls `check` (sync) until it returns something truthy; returns that. The page redraws a
    window by replacing its elements: an element found before a redraw is stale, so look again."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

    try:
        with anyio.fail_after(timeout):
            while True:
                try:
                    got = check()
                except (StaleElementReferenceException, NoSuchElementException, ValueError):
                    got = None
                if got:
                    return got
                await anyio.sleep(0.05)
    except TimeoutError:
        raise AssertionError(f"timed out after {timeout} s waiting for {what}") from None


def field_input(s: Session, label: str, wid: str = "w-A"):
    (found,) = css(s, f'section[data-window-id="{wid}"] input[data-field="{label}"]')
    return found


def fresh(read):
    """`read()` again when a redraw made an element it found stale (a few times)."""
    from selenium.common.exceptions import StaleElementReferenceException

    for _ in range(50):
        try:
            return read()
        except StaleElementReferenceException:
            time.sleep(0.05)
    return read()


async def click(s: Session, selector: str, what: str, closes_window: bool = False) -> None:
    """The user clicks the element `selector` finds (looked up again if a redraw replaced it).
    `closes_window`: the click closes the window it is in, which may be gone before WebDriver
    answers the click (what it did is checked through MCP and the journal afterwards)."""
    from selenium.common.exceptions import NoSuchWindowException

    def attempt():
        (found,) = css(s, selector)
        try:
            found.click()
        except NoSuchWindowException:
            if not closes_window:
                raise
        return True

    await until(attempt, what)


def typing(s: Session, *keys: str) -> None:
    """The user types `keys` on the keyboard: into whatever has the focus, as a keyboard does
    (WebDriver's actions, not an element reference a redraw could make stale)."""
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(s.driver).send_keys(*keys).perform()


def select_all(s: Session) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    ActionChains(s.driver).key_down(Keys.CONTROL).send_keys("a").key_up(Keys.CONTROL).perform()


def field_selector(label: str, wid: str = "w-A") -> str:
    return f'section[data-window-id="{wid}"] input[data-field="{label}"]'


def summary_text(s: Session, wid: str = "w-A") -> str:
    found = css(s, f'section[data-window-id="{wid}"] h2.summary')
    return found[0].text if found else ""


async def switch_to_window(s: Session, url_part: str, what: str) -> str:
    """Switches WebDriver to the Tauri window whose page URL contains `url_part` (a new window
    handle), and returns its handle."""

    def find():
        for handle in s.driver.window_handles:
            if handle == s.main:
                continue
            s.driver.switch_to.window(handle)
            if url_part in s.driver.current_url:
                return handle
        s.driver.switch_to.window(s.main)
        return None

    return await until(find, what)


def page_invoke(s: Session, command: str, args: dict | None = None) -> list:
    """Runs Tauri's `invoke(command, args)` in the current window's page, with that page's
    rights: `["ok", value]` or `["refused", error]`."""
    return s.driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.__TAURI__.core.invoke(arguments[0], arguments[1])"
        "  .then((v) => done(['ok', v]), (e) => done(['refused', e]));",
        command, args or {},
    )


def x_windows(s, title: str) -> list[str]:
    """The visible X windows titled `title` (a regex) on `s`'s display (`s.env`)."""
    try:
        out = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", title], env=s.env,
                             capture_output=True, text=True, timeout=30).stdout
    except subprocess.SubprocessError:
        return []
    return out.split()


# ---------------------------------------------------------------------------------------------
# The tests


def test_page_module_is_the_plugins():
    """dist/bridge.js is the plugin's guest-js/index.js, unchanged (the page has no build step,
    so it ships a copy: this keeps the copy honest)."""
    copy = ROOT / "examples" / "tauri_order_editor" / "dist" / "bridge.js"
    original = ROOT / "bridge-runtime" / "tauri" / "guest-js" / "index.js"
    assert copy.read_bytes() == original.read_bytes(), "cp bridge-runtime/tauri/guest-js/index.js examples/tauri_order_editor/dist/bridge.js"


async def test_agent_edit_appears_in_the_page(app):
    """Issue 21; GB-10.1-1, GB-10.1-2: one UI shared by agent and user: the agent's
    `edit_field` shows in the page's DOM (the field, the summary, GB-4.2-8), the window is
    highlighted as the agent's, and the journal panel names the agent. GB-6-1: the update
    notification comes."""
    rec = Recorder()
    async with AsyncExitStack() as stack:
        client = await agent(stack, app, rec)
        app.shot("01-initial")
        snap, _ = await read_windows(client)
        version = window(snap, "w-A")["version"]
        is_error, body = await call(
            client, "w-A__edit_field", {"field": "recipient", "value": "Alice Whitfield", "expectedVersion": version}
        )
        assert not is_error, body
        await rec.wait_for("updated:app://windows")
        await until(lambda: field_input(app, "Recipient").get_property("value") == "Alice Whitfield", "the edit in the DOM")
        assert fresh(lambda: summary_text(app)) == "Editing order #12345 for Alice Whitfield, amount $100.00"
        assert fresh(lambda: css(app, 'section[data-window-id="w-A"]')[0].get_attribute("data-version")) == str(version + 1)
        await until(lambda: css(app, 'section.window.agent[data-window-id="w-A"]'), "the agent highlight")
        await until(lambda: [r for r in css(app, '#journal-rows li[data-actor="agent"][data-what="edit_field"][data-outcome="ok"]')
                             if "Alice Whitfield" in r.text], "the journal row")
        app.shot("02-agent-edit")


async def test_user_commits_on_enter_and_the_agents_old_version_is_stale(app):
    """Issue 21; GB-1.2-1: the app is the server, the user operates the same UI as the agent at
    the same time and never speaks the protocol. GB-7.1-1, GB-7.1-2, GB-7.4-2: the user types
    into Amount and presses Enter: the
    edit commits as the user (the journal says so) and moves the window's version, so the
    agent's write with its old `expectedVersion` gets `stale_state` with `currentVersion`. GB-6-1,
    GB-8.3-1: the subscribed agent got `notifications/resources/updated` for the user's edit."""
    from selenium.webdriver.common.keys import Keys

    rec = Recorder()
    async with AsyncExitStack() as stack:
        client = await agent(stack, app, rec)
        snap, _ = await read_windows(client)
        version = window(snap, "w-A")["version"]
        rec.take()
        await click(app, field_selector("Amount"), "the Amount field")
        select_all(app)
        typing(app, "$80.00")
        # Nothing commits while the user types.
        assert [e for e in app.journal() if e["actor"]["kind"] == "user"] == []
        typing(app, Keys.ENTER)
        await rec.wait_for("updated:app://windows")
        snap, _ = await read_windows(client)
        assert fields(snap, "w-A")["Amount"]["value"] == "$80.00"
        now = window(snap, "w-A")["version"]
        assert now == version + 1
        (user,) = [e for e in app.journal() if e["actor"]["kind"] == "user"]
        assert user["operation"] == {"kind": "tool", "name": "w-A__edit_field"}
        assert user["arguments"] == {"field": "Amount", "value": "$80.00"} and user["outcome"] == {"status": "ok"}

        is_error, body = await call(
            client, "w-A__edit_field", {"field": "amount", "value": "$1.00", "expectedVersion": version}
        )
        assert is_error and body["code"] == "stale_state", body
        assert body["currentVersion"] == now
        snap, _ = await read_windows(client)
        assert fields(snap, "w-A")["Amount"]["value"] == "$80.00"
        await until(lambda: css(app, '#journal-rows li[data-actor="agent"][data-what="edit_field"][data-outcome="stale_state"]'),
                    "the refusal in the journal panel")
        # Focus loss commits too: the user edits Recipient and clicks elsewhere.
        await click(app, field_selector("Recipient"), "the Recipient field")
        typing(app, "Bob")
        await click(app, 'section[data-window-id="w-A"] h2.summary', "the heading")
        await until(lambda: summary_text(app) == "Editing order #12345 for Bob, amount $80.00", "the blur commit")
        app.shot("03-user-commits")


async def test_submit_opens_the_confirm_window_and_only_the_user_confirms(app):
    """Issue 21; GB-2-5, GB-10.1-1: the user turns on "Only I confirm orders" (the app's own
    command), the user's click on "Submit order" opens "Confirm order" as its own Tauri window
    (labelled with the bridge window's id); the agent's `{dialog}__confirm` gets
    `action_not_available` (GB-7.4-8) and the main page shows the editor blocked (GB-2-2); the
    user confirms by a click in that window, which closes, and the order is placed."""
    rec = Recorder()
    async with AsyncExitStack() as stack:
        client = await agent(stack, app, rec)
        is_error, body = await call(client, "w-A__edit_field", {"field": "recipient", "value": "Chen Li"})
        assert not is_error, body
        await until(lambda: summary_text(app).startswith("Editing order #12345 for Chen Li"), "the agent's edit")
        await click(app, "#user-confirms", "the switch")
        await until(lambda: any(e["actor"]["kind"] == "user" and e["operation"]["kind"] == "edit" for e in app.journal()),
                    "the switch as the user's edit")
        rec.take()
        await click(app, 'section[data-window-id="w-A"] button[data-action="submit"]', "Submit order")
        await rec.wait_for("tools_changed")
        snap, _ = await read_windows(client)
        (dialog,) = [w["id"] for w in snap["windows"] if w["title"] == "Confirm order"]
        assert window(snap, dialog)["ownerId"] == "w-A" and window(snap, dialog)["modal"] is True
        assert window(snap, dialog)["summary"] == "Waiting for the user to confirm the order for Chen Li, amount $100.00"
        # GB-4.2-11: the page disables the editor from the snapshot's operableWindowIds alone.
        await until(lambda: css(app, 'section[data-window-id="w-A"] fieldset:disabled'), "the editor blocked")
        is_error, body = await call(client, f"{dialog}__confirm")
        assert is_error and body["code"] == "action_not_available", body

        handle = await switch_to_window(app, f"window={dialog}", "the Confirm order window")
        assert app.driver.title == "Confirm order"
        await until(lambda: css(app, f'section[data-window-id="{dialog}"] button[data-action="confirm"]'), "its buttons")
        assert fresh(lambda: css(app, ".user-note")[0].text) == "Only you can confirm this order: the agent cannot."
        assert fresh(lambda: [e.text for e in css(app, ".dialog-grid dd")]) == ["Chen Li", "$100.00"]
        (dialog_x,) = x_windows(app, "^Confirm order$")
        # No window manager under Xvfb: every window sits at (0, 0). Move the dialog aside for
        # the screenshot (the README's) so the blocked editor shows beside it.
        subprocess.run(["xdotool", "windowmove", "--sync", dialog_x, "530", "300"], env=app.env, timeout=30, check=False)
        await until(lambda: app.repainted((0, 0, 420, 260)), "the main window repainted where the dialog was")
        # The dialog's page is scoped to its bridge window (the plugin's `scope`), and its
        # window holds no MCP token: another window's tool is refused there, and so is
        # `mcp_config` (granted to the main window only, capabilities/main-window.json).
        assert page_invoke(app, "plugin:bridge|scope") == ["ok", {"windowId": dialog}]
        outcome, error = page_invoke(app, "plugin:bridge|call", {"name": "w-A__edit_field", "arguments": {"field": "recipient", "value": "x"}})
        assert outcome == "refused" and error["code"] == "action_not_available", error
        outcome, error = page_invoke(app, "plugin:bridge|mcp_config")
        assert outcome == "refused" and "not allowed" in str(error), error
        app.shot("04-confirm-window", crop=(0, 0, 980, 760))
        rec.take()
        await click(app, 'button[data-action="confirm"]', "Confirm", closes_window=True)
        await rec.wait_for("tools_changed")
        snap, _ = await read_windows(client)
        assert window(snap, dialog) is None
        assert window(snap, "w-A")["summary"] == "Order #12345 for Chen Li was placed"
        (confirm,) = [e for e in app.journal() if e["operation"] == {"kind": "tool", "name": f"{dialog}__confirm"}
                      and e["actor"]["kind"] == "user"]
        assert confirm["outcome"] == {"status": "ok"}
        # The plugin closes the Tauri window with the bridge window.
        await until(lambda: handle not in app.driver.window_handles, "the dialog window to close")
        app.driver.switch_to.window(app.main)
        await until(lambda: summary_text(app) == "Order #12345 for Chen Li was placed", "the placed order in the page")
        app.shot("05-order-placed")


async def test_password_is_dots_in_the_dom_and_masked_over_mcp(app):
    """Issue 21; GB-4.5-2: the payment password is a password input whose value is the mask
    (the page never gets the secret: it reads what agents read), and the agent reads
    `••••••` with `sensitive: true`. The user's new password goes through
    `set_payment_password`, whose journal entry masks it."""
    from selenium.webdriver.common.keys import Keys

    async with AsyncExitStack() as stack:
        client = await agent(stack, app, Recorder())
        snap, raw = await read_windows(client)
        assert fields(snap, "w-A")["Payment password"] == {"label": "Payment password", "value": REDACTED, "sensitive": True}
        assert "hunter2" not in raw
        assert fresh(lambda: field_input(app, "Payment password").get_attribute("type")) == "password"
        assert fresh(lambda: field_input(app, "Payment password").get_property("value")) == REDACTED
        assert "hunter2" not in app.driver.page_source
        app.shot("06-password")
        await click(app, field_selector("Payment password"), "the password field")
        select_all(app)
        typing(app, "correct horse", Keys.ENTER)
        await until(lambda: any(e["operation"] == {"kind": "tool", "name": "w-A__set_payment_password"} for e in app.journal()),
                    "the user's password commit")
        (entry,) = [e for e in app.journal() if e["operation"]["kind"] == "tool"]
        assert entry["actor"]["kind"] == "user" and entry["arguments"] == {"password": REDACTED}
        snap, raw = await read_windows(client)
        assert "correct horse" not in raw and fields(snap, "w-A")["Payment password"]["value"] == REDACTED
        await until(lambda: field_input(app, "Payment password").get_property("value") == REDACTED, "the mask back")
        assert "correct horse" not in app.driver.page_source


async def test_report_opens_as_its_own_window(app):
    """Issue 21; GB-10.1-1: the report open at start and the one the agent's `app__new_report`
    opens are "Report Details" windows of their own; the user pages the new one (GB-9-3: rows
    come through `load_rows`, as the user); the agent's `{id}__close` closes its window (GB-6-2)."""
    async with AsyncExitStack() as stack:
        client = await agent(stack, app, Recorder())
        # The report open at start (w-C) has its own window too; the main page leaves it out.
        await switch_to_window(app, "window=w-C", "the first report's window")
        await until(lambda: css(app, 'section[data-window-id="w-C"] .range'), "the first report drawn")
        app.driver.switch_to.window(app.main)
        assert css(app, 'section[data-window-id="w-C"]') == []
        is_error, body = await call(client, "app__new_report")
        assert not is_error, body
        (report,) = body["openedWindowIds"]
        handle = await switch_to_window(app, f"window={report}", "the report window")
        await until(lambda: css(app, f'section[data-window-id="{report}"] .range'), "the report drawn")
        assert fresh(lambda: css(app, ".range")[0].text) == "Rows 1–20 of 1000"
        first = fresh(lambda: [td.text for td in css(app, 'table[data-block="rows"] tbody tr:first-child td')])
        assert first == ["10000", "Alice", "0.99"]
        await click(app, 'button[data-action="next"]', "Next")
        await until(lambda: css(app, ".range") and css(app, ".range")[0].text == "Rows 21–40 of 1000", "the next page")
        assert fresh(lambda: css(app, 'table[data-block="rows"] tbody tr:first-child td')[0].text) == "10020"
        loads = [e for e in app.journal() if e["operation"] == {"kind": "tool", "name": f"{report}__load_rows"}]
        assert loads and all(e["actor"]["kind"] == "user" for e in loads)
        assert x_windows(app, "^Report Details$"), "a top-level X window"
        app.shot("07-report-window")
        is_error, body = await call(client, f"{report}__close")
        assert not is_error, body
        await until(lambda: handle not in app.driver.window_handles, "the report window to close")
        app.driver.switch_to.window(app.main)


async def test_agent_markup_is_text_and_triggers_no_call(app):
    """Issue 21 (the page's trust rule): a Recipient the agent sets to an `<img onerror=…>` that
    would press "Submit order" through the plugin renders as text (the input's value, the
    summary) and creates no element; no call runs as the user (the journal has none), the order
    is not submitted."""
    async with AsyncExitStack() as stack:
        client = await agent(stack, app, Recorder())
        is_error, body = await call(client, "w-A__edit_field", {"field": "recipient", "value": XSS})
        assert not is_error, body
        await until(lambda: field_input(app, "Recipient").get_property("value") == XSS, "the value in the field")
        assert fresh(lambda: summary_text(app)) == f"Editing order #12345 for {XSS}, amount $100.00"
        assert css(app, "img") == []
        # A later change drawn after it: whatever the first render could trigger has run by then.
        is_error, body = await call(client, "w-A__edit_field", {"field": "amount", "value": "$90.00"})
        assert not is_error, body
        await until(lambda: field_input(app, "Amount").get_property("value") == "$90.00", "the next change drawn")
        await until(lambda: css(app, '#journal-rows li[data-what="edit_field"]:nth-child(2)'), "both rows in the panel")
        assert css(app, "img") == []
        assert [e for e in app.journal() if e["actor"]["kind"] == "user"] == []
        snap, _ = await read_windows(client)
        assert [w["title"] for w in snap["windows"]] == ["Order Editor", "Report Details"]
        assert "<img src=x" in fresh(lambda: css(app, '#journal-rows li[data-what="edit_field"]')[-1].text)
        # The second wall, tauri.conf.json's CSP (script-src 'self'): markup that did reach the
        # DOM could run no inline script and no inline handler.
        # (An inline script runs when inserted; an inline handler before a listener added after
        # it, so the listener's turn is when to look.)
        ran = app.driver.execute_script(
            "const s = document.createElement('script'); s.textContent = 'window.__inlineRan = true';"
            "document.body.append(s); s.remove();"
            "const i = document.createElement('img'); i.setAttribute('onerror', 'window.__handlerRan = true');"
            "return new Promise((done) => { i.addEventListener('error', () => { i.remove();"
            "  done([window.__inlineRan === true, window.__handlerRan === true, 'error seen']); });"
            "  i.src = 'x'; document.body.append(i); });"
        )
        assert ran == [False, False, "error seen"], ran
        app.shot("08-markup-as-text")


async def test_user_undoes_the_agents_change_and_sees_the_mcp_configuration(app):
    """Issue 21 (the egui example's controls, issue 20 items 5 and 6): "Undo agent's change"
    names the agent's last change; the user's click takes it back (the journal records the
    user's undo) and the page shows the old value; the agent's next write with the version its
    edit left gets `stale_state` (GB-7.1-2). "Copy MCP configuration" shows the URL and the
    token the app serves with (the `mcp_config` command, granted to the main window only)."""
    rec = Recorder()
    async with AsyncExitStack() as stack:
        client = await agent(stack, app, rec)
        is_error, body = await call(client, "w-A__edit_field", {"field": "recipient", "value": "Alice"})
        assert not is_error, body
        is_error, body = await call(client, "w-A__edit_field", {"field": "recipient", "value": "Mallory"})
        assert not is_error, body
        await until(lambda: field_input(app, "Recipient").get_property("value") == "Mallory", "the agent's edit")
        snap, _ = await read_windows(client)
        agents = window(snap, "w-A")["version"]
        await until(lambda: [b for b in css(app, "#undo-w-A") if b.is_enabled()], "Undo enabled")
        assert fresh(lambda: css(app, '[data-undo-note="w-A"]')[0].text) == f"The agent's edit_field (before it: version {agents - 1})"
        rec.take()
        await click(app, "#undo-w-A", "Undo")
        await rec.wait_for("updated:app://windows")
        await until(lambda: field_input(app, "Recipient").get_property("value") == "Alice", "the old value drawn")
        (undone,) = [e for e in app.journal() if e["operation"]["kind"] == "undo"]
        assert undone["actor"]["kind"] == "user" and undone["operation"]["tool"] == "w-A__edit_field"
        is_error, body = await call(
            client, "w-A__edit_field", {"field": "recipient", "value": "Mallory again", "expectedVersion": agents}
        )
        assert is_error and body["code"] == "stale_state", body
        app.shot("09-user-undid")

        await click(app, "#mcp-config", "Copy MCP configuration")
        shown = await until(lambda: css(app, "#mcp-config-text")[0].text, "the MCP configuration")
        assert f"URL: {app.url}" in shown and f"Token: {gui.HTTP_TOKEN}" in shown, shown
        assert f"Bearer {gui.HTTP_TOKEN}" in shown


async def test_page_without_the_permission_is_refused(probed_app):
    """Issue 21 (permissions): a page in a window no capability names (`--probe-window`, label
    `probe`) asks the plugin for the windows and for a user call: Tauri refuses both, and the
    call never reached the bridge (no journal entry, the field unchanged)."""
    app = probed_app
    async with AsyncExitStack() as stack:
        client = await agent(stack, app, Recorder())
        await switch_to_window(app, "probe.html", "the probe window")
        for probe in ("probe-windows", "probe-call"):
            text = await until(lambda: (t := css(app, f"#{probe}")[0].text) != "…" and t, f"{probe} answered")
            assert text.startswith("refused:") and "not allowed" in text, text
        app.shot("10-probe-refused")
        app.driver.switch_to.window(app.main)
        assert [e for e in app.journal() if e["actor"]["kind"] == "user"] == []
        snap, _ = await read_windows(client)
        assert fields(snap, "w-A")["Recipient"]["value"] == ""


async def test_an_mcp_host_starts_the_app_over_stdio(xvfb, tmp_path):
    """Issue 21 (MCP over stdio): an MCP host starts the app with `--mcp-stdio` and talks to it
    over its stdin and stdout (the official Python client's stdio transport) while the web view
    runs on Xvfb: the session starts, the windows read right (the password masked, GB-4.5-2),
    and an edit takes effect (GB-7.1-1: the version moves). Nothing the app or the web view's
    helper processes print corrupts the stream."""
    from mcp.client.stdio import StdioServerParameters

    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "WAYLAND_SOCKET", "BRIDGE_MCP_TOKEN")}
    env.update(DISPLAY=xvfb.display, **WEBKIT_ENV)
    server = StdioServerParameters(command=app_bin(), args=["--mcp-stdio", "--rows", "100"], env=env)
    with anyio.fail_after(STARTUP_TIMEOUT):
        async with gui.Client(server, mode="legacy", cache=None) as client:
            snap, raw = await read_windows(client)
            assert [w["id"] for w in snap["windows"]] == ["w-A", "w-C"]
            assert fields(snap, "w-A")["Payment password"]["value"] == REDACTED and "hunter2" not in raw
            version = window(snap, "w-A")["version"]
            is_error, body = await call(client, "w-A__edit_field", {"field": "recipient", "value": "Over stdio", "expectedVersion": version})
            assert not is_error, body
            snap, _ = await read_windows(client)
            assert fields(snap, "w-A")["Recipient"]["value"] == "Over stdio"
            assert window(snap, "w-A")["version"] == version + 1
            # The app's windows are up meanwhile: the main window and the report's own.
            display = type("Display", (), {"env": env})
            await until(lambda: x_windows(display, "^Order Editor$") and x_windows(display, "^Report Details$"),
                        "the app's windows on the X server")


def wm_close(env: dict, window: str) -> None:
    """Sends X window `window` the window manager's close (`WM_PROTOCOLS` / `WM_DELETE_WINDOW`,
    what a close button or Alt+F4 sends; Xvfb runs no window manager to send it)."""
    script = r"""
import ctypes, sys
x = ctypes.cdll.LoadLibrary("libX11.so.6")
x.XOpenDisplay.restype = ctypes.c_void_p
x.XOpenDisplay.argtypes = [ctypes.c_char_p]
x.XInternAtom.restype = ctypes.c_ulong
x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
class ClientMessage(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
                ("display", ctypes.c_void_p), ("window", ctypes.c_ulong), ("message_type", ctypes.c_ulong),
                ("format", ctypes.c_int), ("l", ctypes.c_long * 5)]
class Event(ctypes.Union):
    _fields_ = [("xclient", ClientMessage), ("pad", ctypes.c_long * 24)]
x.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long, ctypes.POINTER(Event)]
x.XFlush.argtypes = [ctypes.c_void_p]
x.XCloseDisplay.argtypes = [ctypes.c_void_p]
d = x.XOpenDisplay(None)
assert d, "no X display"
ev = Event()
ev.xclient.type = 33  # ClientMessage
ev.xclient.window = int(sys.argv[1])
ev.xclient.message_type = x.XInternAtom(d, b"WM_PROTOCOLS", 0)
ev.xclient.format = 32
ev.xclient.l[0] = x.XInternAtom(d, b"WM_DELETE_WINDOW", 0)
assert x.XSendEvent(d, int(sys.argv[1]), 0, 0, ctypes.byref(ev))
x.XFlush(d)
x.XCloseDisplay(d)
"""
    subprocess.run([sys.executable, "-c", script, window], env=env, check=True, timeout=30)


class StdioApp:
    """The app as an MCP host starts it (`--mcp-stdio`), its stdin and stdout raw pipes."""

    def __init__(self, xvfb):
        self.env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "WAYLAND_SOCKET", "BRIDGE_MCP_TOKEN")}
        self.env.update(DISPLAY=xvfb.display, **WEBKIT_ENV)
        self.proc = subprocess.Popen(gui.dying_with_us([app_bin(), "--mcp-stdio", "--rows", "100"]), env=self.env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def request(self, id_: int, method: str, params: dict) -> dict:
        line = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}
        self.proc.stdin.write((json.dumps(line) + "\n").encode())
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], STARTUP_TIMEOUT)
        assert ready, f"no answer to {method}"
        answer = json.loads(self.proc.stdout.readline())
        assert answer["id"] == id_, answer
        return answer

    async def started(self) -> None:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}
        assert "result" in self.request(1, "initialize", init)
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()
        await until(lambda: x_windows(self, "^Order Editor$") and x_windows(self, "^Report Details$"),
                    "the app's windows on the X server", timeout=STARTUP_TIMEOUT)

    def exit_status(self, timeout: float = 30.0) -> int | None:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


async def test_the_app_exits_when_its_mcp_host_closes_stdin(xvfb):
    """Issue 21 (MCP over stdio): MCP's stdio lifecycle ends a server by closing its stdin; the
    app then exits by itself, status 0, rather than leave its windows behind for every restart of
    the host's server."""
    app = StdioApp(xvfb)
    try:
        await app.started()
        assert app.request(2, "ping", {})["result"] == {}
        app.proc.stdin.close()
        assert app.exit_status() == 0
    finally:
        app.close()


async def test_closing_the_editor_quits_the_app(xvfb):
    """Issue 21 (the window manager's close): closing the main window quits the app, as in the
    egui example, even with "Report Details" still open in its own window; the Order Editor is
    never left open to agents with no window showing it."""
    app = StdioApp(xvfb)
    try:
        await app.started()
        [editor] = x_windows(app, "^Order Editor$")
        wm_close(app.env, editor)
        assert app.exit_status() == 0
    finally:
        app.close()
