"""The Python reference of the dispatch benchmark (issue #10, item 1; BENCHMARKS.md "Dispatch").

The same app as examples/rmcp_reference.rs, on the official Python MCP SDK's low-level server
(mcp 2.3, `mcp.server.lowlevel.Server`): the Order Editor's tools and `app://windows` snapshot
from the fixture that `stdio_driver --capture` writes, and per `tools/call` of `edit_field` the
same work: validate the arguments against the tool's input schema with `jsonschema` (compiled
once), check `expectedVersion`, apply the edit, bump the version, answer the same result.

    .venv/bin/python examples/python_reference.py --fixture /tmp/fixture.json
"""

from __future__ import annotations

import argparse
import json

import anyio
import jsonschema
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fixture", required=True)
    fixture = json.load(open(parser.parse_args().fixture))
    tools = [types.Tool.model_validate(t) for t in fixture["tools"]]
    validators = {}
    for raw in fixture["tools"]:
        window = (raw.get("_meta") or {}).get("bridge/windowId")
        if window:
            validators[raw["name"]] = (window, jsonschema.Draft202012Validator(raw["inputSchema"]))
    snapshot = fixture["snapshot"]
    state = {"json": None}
    meta = {"io.modelcontextprotocol/serverInfo": fixture["serverInfo"]}

    def result(value: dict, line: str, is_error: bool = False) -> types.CallToolResult:
        text = f"{line}\n{json.dumps(value, separators=(',', ':'))}"
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=value,
            is_error=is_error,
        )

    def error(code: str, message: str, **extra) -> types.CallToolResult:
        return result({"code": code, "message": message, **extra}, message, True)

    def edit_field(window: str, validator, args: dict) -> types.CallToolResult:
        problems = list(validator.iter_errors(args))
        if problems:
            fields = [{"field": "/".join(map(str, p.path)), "error": p.message} for p in problems]
            return error("validation_failed", "Some arguments are invalid", fields=fields)
        win = next((w for w in snapshot["windows"] if w["id"] == window), None)
        if win is None:
            return error("window_not_found", f"Window '{window}' does not exist")
        version = win["version"]
        expected = args.get("expectedVersion")
        if expected is not None and expected != version:
            return error("stale_state", f"The window changed (version {version}, not {expected})", currentVersion=version)
        field = args["field"]
        item = next(
            (
                i
                for b in win["blocks"]
                if b["type"] == "fields"
                for i in b["items"]
                if i.get("key") == field or str(i.get("label", "")).lower() == field.lower()
            ),
            None,
        )
        if item is None:
            return error("validation_failed", f"No field '{field}'", fields=[{"field": "field", "error": "No such field"}])
        if item.get("value") != args["value"]:
            item["value"] = args["value"]
            win["version"] = version + 1
            state["json"] = None
        message = f"Set {field}"
        return result({"message": message}, message)

    async def on_list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools, _meta=meta)

    async def on_read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        if str(params.uri) != "app://windows":
            raise ValueError(f"No resource '{params.uri}'")
        if state["json"] is None:
            state["json"] = json.dumps(snapshot, separators=(",", ":"))
        contents = types.TextResourceContents(uri="app://windows", mime_type="application/json", text=state["json"])
        return types.ReadResourceResult(contents=[contents], _meta=meta)

    async def on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        found = validators.get(params.name)
        if found is None or not params.name.endswith("__edit_field"):
            out = error("action_not_available", f"No tool '{params.name}' here")
            out.meta = meta
            return out
        window, validator = found
        out = edit_field(window, validator, dict(params.arguments or {}))
        out.meta = {**meta, "bridge/windowId": window}
        return out

    server = Server(
        "order-editor",
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_read_resource=on_read_resource,
    )

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main()
