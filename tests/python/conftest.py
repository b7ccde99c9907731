"""Shared fixtures: the example server binaries, free ports, a running HTTP server."""

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The access token the HTTP servers started here require (handed over in BRIDGE_MCP_TOKEN, as
# a launcher would); clients send it as `Authorization: Bearer`.
HTTP_TOKEN = "python-test-token-0123456789abcdef"


def mcp_server(server):
    """What `mcp.client.Client` connects to: an HTTP URL becomes a streamable HTTP transport that
    sends the token; anything else (stdio parameters) is passed through."""
    if isinstance(server, str):
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        client = create_mcp_http_client(headers={"Authorization": f"Bearer {HTTP_TOKEN}"})
        return streamable_http_client(server, http_client=client)
    return server


def built_example(name: str, override: str) -> str:
    """The built example `name` (./test.sh builds every example before pytest runs), or the
    binary named by the environment variable `override`."""
    explicit = os.environ.get(override)
    if explicit:
        return explicit
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    path = target / "debug" / "examples" / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run `cargo build --example {name}` (./test.sh does)")
    return str(path)


def example_bin() -> str:
    """The built `order_editor` example."""
    return built_example("order_editor", "BRIDGE_EXAMPLE_BIN")


def zoo_bin() -> str:
    """The built `schema_zoo` example."""
    return built_example("schema_zoo", "BRIDGE_ZOO_BIN")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(proc: subprocess.Popen, port: int) -> None:
    """Waits until `proc` (stderr piped) accepts connections on 127.0.0.1:`port`; raises when it
    exits first or does not listen within 20 s (then it is killed)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stderr.read().decode(errors='replace')}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("server did not start listening")


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def http_server():
    """Starts `order_editor --http 127.0.0.1:PORT` and yields its MCP URL."""
    port = free_port()
    proc = subprocess.Popen(
        [example_bin(), "--http", f"127.0.0.1:{port}", "--rows", "10000"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "BRIDGE_MCP_TOKEN": HTTP_TOKEN},
    )
    wait_listening(proc, port)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
