"""The Order Editor example driven by the official Python MCP SDK (a client nobody here wrote),
over stdio and streamable HTTP, in both protocol eras: `legacy` (2025-11-25, initialize +
resources/subscribe) and `auto` (2026-07-28, server/discover + subscriptions/listen).

Each test names the GB requirements it proves.
"""

import json
from contextlib import AsyncExitStack

import anyio
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from conftest import HTTP_TOKEN, example_bin, mcp_server

# Legacy-era tests subscribe with resources/subscribe on purpose.
pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:resources/subscribe is removed")]

MODES = ["legacy", "auto"]
REDACTED = "••••••"


class Recorder:
    """Collects notifications as `message_handler` sees them."""

    def __init__(self):
        self.seen: list[str] = []
        self.others: list[str] = []

    async def __call__(self, message):
        method = getattr(message, "method", None)
        if method == "notifications/resources/updated":
            self.seen.append(f"updated:{message.params.uri}")
        elif method == "notifications/tools/list_changed":
            self.seen.append("tools_changed")
        elif method is not None and method != "notifications/subscriptions/acknowledged":
            self.others.append(method)

    def take(self) -> list[str]:
        out, self.seen = self.seen, []
        return out

    async def wait_for(self, what: str, timeout: float = 5.0) -> None:
        with anyio.fail_after(timeout):
            while what not in self.seen:
                await anyio.sleep(0.02)


async def connect(stack: AsyncExitStack, server, mode: str, recorder: Recorder) -> Client:
    client = await stack.enter_async_context(Client(mcp_server(server), mode=mode, message_handler=recorder, cache=None))
    if client.protocol_version >= "2026-07-28":
        await stack.enter_async_context(
            client.listen(tools_list_changed=True, resource_subscriptions=["app://windows"])
        )
    else:
        await client.subscribe_resource("app://windows")
    return client


def stdio_server():
    return StdioServerParameters(command=example_bin(), args=["--rows", "10000"])


async def read_windows(client: Client) -> tuple[dict, str]:
    result = await client.read_resource("app://windows")
    assert len(result.contents) == 1  # GB-12.2-1
    content = result.contents[0]
    assert content.mime_type == "application/json"
    return json.loads(content.text), content.text


def window(snapshot: dict, wid: str) -> dict:
    return next(w for w in snapshot["windows"] if w["id"] == wid)


async def tool_names(client: Client) -> set[str]:
    return {t.name for t in (await client.list_tools()).tools}


async def call(client: Client, name: str, args: dict | None = None):
    r = await client.call_tool(name, args or {})
    return r.is_error, r.structured_content


async def walkthrough(client: Client, rec: Recorder, ordered: bool) -> None:
    """GB Appendix A end to end. `ordered`: the call's notifications must already have arrived
    when its response does (true on stdio, where one connection carries both)."""
    # GB-3-2, GB-11-1: capabilities; GB-3-3, GB-8.1-1: instructions.
    caps = client.server_capabilities
    assert caps.resources.subscribe is True
    assert caps.tools.list_changed is True
    assert client.instructions.startswith('You are connected to a "multi-window desktop application"')
    assert client.server_info.name == "order-editor"

    # GB-4.1-1, GB-12.1-1: exactly one resource.
    resources = (await client.list_resources()).resources
    assert [r.uri for r in resources] == ["app://windows"]

    # GB-4.1-2, GB-4.1-4, GB-9-1, GB-11-2, GB-4.2-1, GB-4.2-2, GB-4.2-3, GB-4.2-4, GB-4.2-5, GB-4.2-6,
    # GB-4.2-7, GB-4.2-8, GB-4.2-9, GB-4.2-10, GB-4.4-2, GB-1.3-3 (topology only as ownerId),
    # GB-4.5-2, GB-11-9: the whole snapshot in one read, with the password redacted everywhere.
    snap, raw = await read_windows(client)
    assert set(snap) == {"operableWindowIds", "windows"}
    assert snap["operableWindowIds"] == ["w-A", "w-C"]
    editor = window(snap, "w-A")
    assert editor["title"] == "Order Editor" and editor["modal"] is False and editor["ownerId"] is None
    items = {i["label"]: i for b in editor["blocks"] if b["type"] == "fields" for i in b["items"]}
    assert items["Recipient"]["value"] == ""
    assert items["Amount"]["value"] == "$100.00"
    assert items["Payment password"] == {"label": "Payment password", "value": REDACTED, "sensitive": True}
    assert "hunter2" not in raw
    for w in snap["windows"]:
        assert set(w) == {"id", "title", "modal", "ownerId", "version", "summary", "blocks"}
        assert all("type" in b for b in w["blocks"])
    assert {"type": "notice", "id": "status", "severity": "error", "text": "Recipient cannot be empty"} in editor["blocks"]
    report = window(snap, "w-C")
    table = next(b for b in report["blocks"] if b["type"] == "table")
    assert table["total"] == 10000 and table["offset"] == 0 and len(table["rows"]) == 20  # GB-B-2, GB-9-2

    # GB-5.1-4, GB-5.1-2, GB-5.2-1, GB-5.2-2, GB-11-5, GB-12.4-2, GB-12.3-4: each operable window's
    # own tools, name-safe, object schemas. GB-5.1-1, GB-5.6-3: reading large data is a (read-only) tool.
    # GB-5.3-1: close and focus are ordinary actions of the app, not reserved operations.
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"w-A__edit_field", "w-A__submit", "w-A__close", "w-A__focus", "w-C__load_rows", "app__new_report", "app__lock"} <= set(tools)
    for t in tools.values():
        assert t.input_schema["type"] == "object" and "properties" in t.input_schema
        assert t.output_schema["type"] == "object" and "$schema" not in t.input_schema
    # GB-1.3-2: every write is window-level: each tool belongs to a window in the snapshot, or to the app.
    window_ids = {w["id"] for w in snap["windows"]}
    assert all(name.split("__", 1)[0] in window_ids | {"app"} for name in tools), sorted(tools)
    assert "expectedVersion" in tools["w-A__edit_field"].input_schema["properties"]  # GB-5.5-1
    assert "expectedVersion" not in tools["w-C__load_rows"].input_schema["properties"]
    assert tools["w-A__submit"].annotations.destructive_hint is True  # GB-5.6-1
    assert tools["w-C__load_rows"].annotations.read_only_hint is True  # GB-9-3
    rec.take()

    # GB-7.3-1, GB-7.4-3, GB-5.4-7, GB-5.4-9, GB-7.4-1, GB-12.3-2: failures are isError results
    # whose structuredContent is the coded error object.
    is_error, body = await call(client, "w-A__submit")
    assert is_error and body["code"] == "validation_failed"
    assert [f["field"] for f in body["fields"]] == ["recipient"]

    # GB-7.1-2, GB-7.4-2, GB-11-6: a stale expectedVersion is rejected with currentVersion.
    v = editor["version"]
    is_error, body = await call(client, "w-A__edit_field", {"field": "Recipient", "value": "X", "expectedVersion": v + 1})
    assert is_error and body == {"code": "stale_state", "message": body["message"], "currentVersion": v}

    # GB-6-3, GB-4.2-8, GB-6-1, GB-8.3-1, GB-11-7, GB-12.3-1: a write succeeds, bumps the version and
    # notifies after it took effect.
    is_error, body = await call(client, "w-A__edit_field", {"field": "Recipient", "value": "Alice", "expectedVersion": v})
    assert not is_error, body
    if ordered:
        assert "updated:app://windows" in rec.seen, rec.seen
    await rec.wait_for("updated:app://windows")
    snap, _ = await read_windows(client)
    assert window(snap, "w-A")["version"] == v + 1
    assert window(snap, "w-A")["summary"].startswith("Editing order #12345 for Alice")
    rec.take()

    # GB-2-5, GB-2-3, GB-2-4, GB-2-7, GB-1.3-1, GB-11-3, GB-11-4, GB-5.1-5, GB-5.1-6, GB-6-2, OQ-GB-25:
    # submitting opens a window-level modal; only the top of that chain stays operable.
    is_error, body = await call(client, "w-A__submit")
    assert not is_error, body
    (dialog,) = body["openedWindowIds"]
    if ordered:
        assert {"tools_changed", "updated:app://windows"} <= set(rec.seen), rec.seen
    await rec.wait_for("tools_changed")
    snap, _ = await read_windows(client)
    d = window(snap, dialog)
    assert d["modal"] is True and d["ownerId"] == "w-A"
    assert snap["operableWindowIds"] == [dialog, "w-C"]
    names = await tool_names(client)
    assert not any(n.startswith("w-A__") for n in names)
    assert {f"{dialog}__confirm", f"{dialog}__cancel"} <= names

    # GB-7.2-2, GB-7.4-4: a blocked window's tool is refused at run time.
    is_error, body = await call(client, "w-A__focus")
    assert is_error and body["code"] == "blocked_by_modal"
    is_error, body = await call(client, f"{dialog}__cancel")
    assert not is_error
    assert "w-A__submit" in await tool_names(client)

    # GB-9-3, GB-9-4: large data through a read-only tool's result.
    is_error, body = await call(client, "w-C__load_rows", {"offset": 9998, "limit": 5})
    assert not is_error
    assert body["result"]["total"] == 10000 and len(body["result"]["rows"]) == 2

    # GB-12.4-3: a window whose app id is not name-safe gets one handle used everywhere.
    is_error, body = await call(client, "app__new_report")
    (report2,) = body["openedWindowIds"]
    assert report2.replace("-", "").replace("_", "").isalnum()
    snap, _ = await read_windows(client)
    assert report2 in snap["operableWindowIds"] and window(snap, report2)["title"] == "Report Details"
    assert f"{report2}__load_rows" in await tool_names(client)

    # GB-10.2-2, GB-10.2-4, GB-2-6: an app-level modal collapses the operable set and the tool list.
    is_error, body = await call(client, "app__lock")
    (lock,) = body["openedWindowIds"]
    snap, _ = await read_windows(client)
    assert snap["operableWindowIds"] == [lock]
    assert window(snap, lock)["modal"] is True and window(snap, lock)["ownerId"] is None
    assert await tool_names(client) == {f"{lock}__unlock"}
    is_error, body = await call(client, "app__new_report")
    assert is_error and body["code"] == "blocked_by_modal"
    assert not (await call(client, f"{lock}__unlock"))[0]

    # GB-7.4-5, GB-7.4-6: unknown windows and actions.
    is_error, body = await call(client, "w-Z__close")
    assert is_error and body["code"] == "window_not_found"
    is_error, body = await call(client, "w-A__fly")
    assert is_error and body["code"] == "action_not_available"

    # GB-12.5-1, GB-12.1-2: windows came and went, the resource list never changed.
    assert [r.uri for r in (await client.list_resources()).resources] == ["app://windows"]
    # GB-6-5, GB-6-7, GB-4.1-3: the only notifications are resources/updated (for app://windows
    # itself) and tools/list_changed.
    assert rec.others == [], rec.others


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_walkthrough(mode):
    rec = Recorder()
    async with AsyncExitStack() as stack:
        client = await connect(stack, stdio_server(), mode, rec)
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        await walkthrough(client, rec, ordered=True)


@pytest.mark.parametrize("mode", MODES)
async def test_http_walkthrough(mode, http_server):
    rec = Recorder()
    async with AsyncExitStack() as stack:
        client = await connect(stack, http_server, mode, rec)
        await walkthrough(client, rec, ordered=False)


@pytest.mark.parametrize("mode_a,mode_b", [("legacy", "legacy"), ("auto", "legacy"), ("legacy", "auto")])
async def test_http_two_clients_share_one_ui(mode_a, mode_b, http_server):
    """GB-10.1-1, GB-10.1-2, GB-10.1-4, GB-11-8: two clients, one UI; A's write makes B's version
    stale and both are notified. GB-8.2-1: a client that connects later reads the same state."""
    rec_a, rec_b = Recorder(), Recorder()
    async with AsyncExitStack() as stack:
        a = await connect(stack, http_server, mode_a, rec_a)
        b = await connect(stack, http_server, mode_b, rec_b)
        snap, _ = await read_windows(b)
        v = window(snap, "w-A")["version"]
        is_error, _ = await call(a, "w-A__edit_field", {"field": "amount", "value": "$42.00", "expectedVersion": v})
        assert not is_error
        await rec_a.wait_for("updated:app://windows")
        await rec_b.wait_for("updated:app://windows")
        is_error, body = await call(b, "w-A__edit_field", {"field": "amount", "value": "$43.00", "expectedVersion": v})
        assert is_error and body["code"] == "stale_state" and body["currentVersion"] == v + 1
        late = await connect(stack, http_server, mode_b, Recorder())
        assert (await read_windows(late))[0] == (await read_windows(a))[0]


def post_initialize(url: str, headers: dict):
    """POSTs a legacy `initialize` with `headers`; (status, headers, body)."""
    import urllib.error
    import urllib.request

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "no-token", "version": "1.0"}}}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def test_http_initialize_without_the_token_is_401(http_server):
    """`order_editor --http` answers an `initialize` without the access token with 401, a bare
    `WWW-Authenticate: Bearer realm="bridge"` (no OAuth resource metadata) and no body; the
    same request with the token opens a session."""
    for headers in [{}, {"Authorization": "Bearer not-the-token-0123456789"}, {"Authorization": f"Basic {HTTP_TOKEN}"}]:
        status, answer_headers, body = post_initialize(http_server, headers)
        assert status == 401, (headers, status, body)
        assert answer_headers.get("www-authenticate") == 'Bearer realm="bridge"', answer_headers
        assert body == b"", body
    status, answer_headers, _ = post_initialize(http_server, {"Authorization": f"Bearer {HTTP_TOKEN}"})
    assert status == 200
    assert answer_headers.get("mcp-session-id")
