"""The schema_zoo example (examples/schema_zoo/) driven by the official Python MCP SDK client over
stdio, in both protocol eras: `legacy` (initialize, 2025-11-25) and `auto` (server/discover,
2026-07-28).

The client validates the structuredContent of every successful result against the tool's
outputSchema (`ClientSession.validate_tool_result`: jsonschema, `$ref`s resolved within the schema
document only). It skips isError results, so this test checks those the same way itself: every
result, success or error, must match the outputSchema the tool declared.

Cases: tests/schema_zoo_cases.json, shared with tests/ts/schema_zoo.test.mjs.
"""

import json
from dataclasses import dataclass

import pytest
from jsonschema import SchemaError
from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from referencing import Registry
from referencing.exceptions import Unresolvable

from conftest import ROOT, zoo_bin
from schema_rules import schema_problems, without_optional_nulls

pytestmark = pytest.mark.anyio

CASES: dict = json.loads((ROOT / "tests" / "schema_zoo_cases.json").read_text())["tools"]
MODES = ["legacy", "auto"]
CALLS = [
    pytest.param(tool, kind, case, id=f"{tool}-{kind}-{i}")
    for tool, cases in CASES.items()
    for kind in ("success", "error")
    for i, case in enumerate(cases.get(kind, []))
]


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@dataclass
class Zoo:
    client: Client
    mode: str
    tools: dict  # name -> mcp Tool, from the client's own list_tools()
    listing_error: Exception | None


@pytest.fixture(scope="module", params=MODES)
async def zoo(request, anyio_backend):
    """One zoo process per era; the tests of that era run against it in order."""
    server = StdioServerParameters(command=zoo_bin(), args=[])
    async with Client(server, mode=request.param, cache=None) as client:
        tools, error = {}, None
        try:
            tools = {t.name: t for t in (await client.list_tools()).tools}
        except Exception as e:  # reported by test_listing_accepted
            error = e
        yield Zoo(client, request.param, tools, error)


def first_line(e: BaseException, limit: int = 300) -> str:
    """The exception's first line, cut short (jsonschema errors quote whole schemas)."""
    text = str(e).strip().splitlines()
    line = text[0] if text else ""
    return f"{type(e).__name__}: {line if len(line) <= limit else line[:limit] + ' …'}"


def schema_mismatch(schema: dict, instance) -> str | None:
    """What the client's own check (`validate_tool_result`) says about `instance`, or None."""
    try:
        cls = validator_for(schema)
        cls.check_schema(schema)
        error = best_match(cls(schema, registry=Registry()).iter_errors(instance))
    except (SchemaError, Unresolvable) as e:
        return f"invalid schema: {first_line(e)}"
    return None if error is None else f"{error.message} (at {error.json_path})"


def same(a, b) -> bool:
    """JSON equality: booleans are not numbers, 6 equals 6.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def check_outcome(body, case: dict) -> None:
    """`expect`: each named key of structuredContent equals the given value; `errorFields`: the
    `field`s of structuredContent.fields, in order."""
    for key, want in case.get("expect", {}).items():
        assert isinstance(body, dict) and key in body, f"structuredContent has no {key!r}: {body}"
        assert same(body[key], want), f"structuredContent.{key} is {body[key]!r}, expected {want!r}"
    if "errorFields" in case:
        got = [f.get("field") for f in (body or {}).get("fields", [])]
        assert got == case["errorFields"], f"fields of {body}"


async def test_listing_accepted(zoo):
    assert zoo.listing_error is None, f"list_tools() raised {first_line(zoo.listing_error)}"
    assert zoo.client.protocol_version == ("2025-11-25" if zoo.mode == "legacy" else "2026-07-28")


async def test_every_tool_has_cases(zoo):
    listed, covered = set(zoo.tools), set(CASES)
    assert sorted(listed - covered) == [], "listed tools without cases"
    assert sorted(covered - listed) == [], "cases for tools that are not listed"
    for name, cases in CASES.items():
        assert cases.get("success") and cases.get("error"), f"{name} needs a success and an error case"
        for case in cases["success"] + cases["error"]:
            assert case.get("expect"), f"{name}: case {case['about']!r} expects nothing"


@pytest.mark.parametrize("tool", list(CASES))
async def test_schemas_follow_the_rules(zoo, tool):
    t = zoo.tools.get(tool)
    assert t is not None, f"{tool} is not listed"
    assert t.output_schema is not None, f"{tool} has no outputSchema"
    problems = [f"inputSchema{p}" for p in schema_problems(t.input_schema)]
    problems += [f"outputSchema{p}" for p in schema_problems(t.output_schema)]
    assert problems == [], "\n".join(["schemas break the rules:", *problems])


@pytest.mark.parametrize("tool,kind,case", CALLS)
async def test_call(zoo, tool, kind, case):
    t = zoo.tools.get(tool)
    assert t is not None, f"{tool} is not listed"
    if kind == "success":
        # What Deserialize accepts must be valid under inputSchema (hosts build arguments from it).
        mismatch = schema_mismatch(t.input_schema, without_optional_nulls(case["args"], t.input_schema))
        assert mismatch is None, f"the arguments do not match inputSchema: {mismatch}"
    try:
        r = await zoo.client.call_tool(tool, case["args"])
    except Exception as e:
        pytest.fail(f"the Python client rejected the call: {first_line(e)}")
    body = r.structured_content
    assert r.is_error == (kind == "error"), f"isError {r.is_error}: {body}"
    if r.is_error:
        mismatch = schema_mismatch(t.output_schema, body)
        assert mismatch is None, f"the isError result does not match outputSchema: {mismatch}"
    check_outcome(body, case)


def outline(levels: int) -> dict:
    """A chain of `levels` outline nodes: valid under the tool's recursive inputSchema."""
    node = {"label": "leaf", "children": []}
    for i in range(1, levels):
        node = {"label": f"n{i}", "children": [node]}
    return node


async def test_a_deep_outline_is_answered_not_dropped(zoo):
    """A recursive argument the published schema accepts, nested past what the transport's
    parser reads (62 outline levels: 128 levels of JSON in the message), gets validation_failed
    naming the argument and the cap; it used to get no answer, and this call hung until the
    client's timeout. One level less is served."""
    import anyio

    with anyio.fail_after(60):
        r = await zoo.client.call_tool(
            "companion__outline_sort", {"params": {"title": "Sort", "outline": outline(62)}, "timeoutMs": 10000}
        )
    assert r.is_error
    body = r.structured_content
    assert body["code"] == "validation_failed", body
    assert [f["field"] for f in body["fields"]] == ["params"], body
    assert "124" in body["message"], body
    with anyio.fail_after(60):
        r = await zoo.client.call_tool(
            "companion__outline_sort", {"params": {"title": "Sort", "outline": outline(61)}, "timeoutMs": 10000}
        )
    assert not r.is_error, r.structured_content
