"""MCP Apps (spec MA, extension `io.modelcontextprotocol/ui`) with the official Python MCP SDK
client, over stdio (how desktop hosts that render Apps start local servers) and streamable
HTTP, in both protocol eras. A client that advertises the extension gets each window tool's
view; one that does not gets the same tools without it, the same results, and -32021 on a view
read.

Each test names the MA requirements it proves.
"""

import json
from contextlib import AsyncExitStack

import pytest
from mcp.client.client import Client
from mcp.client.extension import advertise
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from conftest import example_bin, mcp_server

pytestmark = pytest.mark.anyio

UI = "io.modelcontextprotocol/ui"
UI_MIME = "text/html;profile=mcp-app"
MODES = ["legacy", "auto"]
SECRET = "hunter2"


def stdio_server():
    return StdioServerParameters(command=example_bin(), args=["--rows", "100"])


async def connect(stack: AsyncExitStack, server, mode: str, ui: bool) -> Client:
    extensions = [advertise(UI, {"mimeTypes": [UI_MIME]})] if ui else None
    return await stack.enter_async_context(Client(mcp_server(server), mode=mode, extensions=extensions, cache=None))


def dump(model) -> dict:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def tools(client: Client) -> list[dict]:
    return [dump(t) for t in (await client.list_tools()).tools]


def view_uri(tool: dict) -> str | None:
    return ((tool.get("_meta") or {}).get("ui") or {}).get("resourceUri")


async def check_negotiation(server, mode: str) -> None:
    async with AsyncExitStack() as stack:
        with_ui = await connect(stack, server, mode, ui=True)
        without = await connect(stack, server, mode, ui=False)

        # MA-3-1, MA-2-2: the server advertises the extension (initialize or server/discover).
        for client in (with_ui, without):
            caps = dump(client.server_capabilities)
            assert caps["extensions"] == {UI: {}}, caps

        # MA-4-1, MA-4-4, MA-13-6: with the extension every window tool names its ui:// view
        # and the window it acts on; app-level tools have no view.
        listed = await tools(with_ui)
        window_tools = [t for t in listed if not t["name"].startswith("app__")]
        assert window_tools
        for t in window_tools:
            uri = view_uri(t)
            assert uri and uri.startswith("ui://order-editor/"), t
            assert t["_meta"]["bridge/windowId"] == t["name"].split("__")[0]
        assert all(view_uri(t) is None for t in listed if t["name"].startswith("app__"))

        # MA-12-2, MA-13-8: without it, the same tools without `_meta.ui`.
        plain = await tools(without)
        stripped = []
        for t in listed:
            t = json.loads(json.dumps(t))
            if "_meta" in t:
                t["_meta"].pop("ui", None)
            stripped.append(t)
        assert plain == stripped

        # MA-6-5, MA-6-6, MA-6-7: the view resource, read by the client with the extension.
        uri = view_uri(window_tools[0])
        read = await with_ui.read_resource(uri)
        assert len(read.contents) == 1
        content = dump(read.contents[0])
        assert content["uri"] == uri and content["mimeType"] == UI_MIME
        assert content["text"].lstrip().lower().startswith("<!doctype html")
        assert content["_meta"]["ui"] == {
            "csp": {"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []},
            "permissions": {},
        }
        # MA-9-5, MA-13-7: the view pins the host origin and guards every message's origin.
        assert "hostOrigin" in content["text"] and "event.origin" in content["text"]
        assert SECRET not in content["text"]

        # MA-12-4: without the extension the read is refused with -32021.
        with pytest.raises(MCPError) as refused:
            await without.read_resource(uri)
        assert refused.value.error.code == -32021

        # GB-12.1-1: the resource list stays exactly app://windows for both (the view is not listed).
        for client in (with_ui, without):
            assert [r.uri for r in (await client.list_resources()).resources] == ["app://windows"]

        # MA-5-1, MA-12-3, MA-13-4: a read-only call gives the same text and structured content
        # to both; the result names the server and the window.
        name = next(t["name"] for t in window_tools if t["annotations"]["readOnlyHint"])
        a = dump(await with_ui.call_tool(name, {}))
        b = dump(await without.call_tool(name, {}))
        assert a["content"] == b["content"] and a.get("structuredContent") == b.get("structuredContent")
        assert a["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "order-editor"
        assert a["_meta"]["bridge/windowId"] == name.split("__")[0]


@pytest.mark.parametrize("mode", MODES)
async def test_apps_over_stdio(mode):
    await check_negotiation(stdio_server(), mode)


@pytest.mark.parametrize("mode", MODES)
async def test_apps_over_http(mode, http_server):
    await check_negotiation(http_server, mode)
