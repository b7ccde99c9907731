"""Shared fixtures: the example server binary, free ports, a running HTTP server."""

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def example_bin() -> str:
    """The built `order_editor` example (./test.sh builds it before pytest runs)."""
    explicit = os.environ.get("BRIDGE_EXAMPLE_BIN")
    if explicit:
        return explicit
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    path = target / "debug" / "examples" / "order_editor"
    if not path.exists():
        pytest.fail(f"{path} is missing: run `cargo build --example order_editor` (./test.sh does)")
    return str(path)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stderr.read().decode(errors='replace')}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            time.sleep(0.05)
    else:
        proc.kill()
        raise RuntimeError("server did not start listening")
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
