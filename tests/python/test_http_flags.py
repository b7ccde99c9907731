"""The examples' `--http` flags as a user types them: `localhost:PORT` is accepted (it binds
127.0.0.1), the schema zoo refuses `--no-token` (it carries the companion's tools), and a
generated token's 0600 file is deleted when the server is stopped with Ctrl-C or SIGTERM.
"""

import json
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import HTTP_TOKEN, example_bin, free_port, wait_listening, zoo_bin


def start(argv: list[str], env: dict) -> subprocess.Popen:
    """Starts `argv` with stderr piped, stdout and stdin closed."""
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env)


def initialize(url: str, token: str) -> tuple[int, dict]:
    """POSTs a legacy `initialize` with the token; (status, headers)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "flags", "version": "1.0"}}}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers)


def stop(proc: subprocess.Popen, signum: int) -> int:
    proc.send_signal(signum)
    try:
        return proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise


@pytest.mark.parametrize("binary", ["order_editor", "schema_zoo"])
def test_http_localhost_port_is_accepted(binary):
    """`--http localhost:PORT` serves on 127.0.0.1:PORT, and a client that calls the server
    `http://localhost:PORT/mcp` initializes (before: clap refused the flag, "invalid socket
    address syntax")."""
    port = free_port()
    path = example_bin() if binary == "order_editor" else zoo_bin()
    proc = start([path, "--http", f"localhost:{port}"], {**os.environ, "BRIDGE_MCP_TOKEN": HTTP_TOKEN})
    try:
        wait_listening(proc, port)
        status, headers = initialize(f"http://localhost:{port}/mcp", HTTP_TOKEN)
        assert status == 200, (status, headers)
        assert {k.lower(): v for k, v in headers.items()}.get("mcp-session-id")
    finally:
        stop(proc, signal.SIGTERM)


def test_schema_zoo_refuses_no_token():
    """The zoo carries the companion's tools, whose HTTP profile needs the token: `--no-token`
    stops the start with the library's refusal (exit 1), as the README says."""
    port = free_port()
    proc = subprocess.run([zoo_bin(), "--http", f"127.0.0.1:{port}", "--no-token"], stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=30, env={**os.environ, "BRIDGE_MCP_TOKEN": HTTP_TOKEN})
    assert proc.returncode == 1, proc
    assert "without an access token" in proc.stderr.decode(), proc.stderr


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_generated_token_file_is_deleted_when_the_server_stops(signum):
    """Without BRIDGE_MCP_TOKEN the token is generated and written to a 0600 file whose path is
    printed; it admits a client; Ctrl-C (SIGINT) or SIGTERM stops the example, which exits 0 and
    leaves no token file behind (before: the file stayed forever)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "BRIDGE_MCP_TOKEN"}
    proc = start([example_bin(), "--http", f"127.0.0.1:{port}"], env)
    try:
        line = b""
        deadline = time.monotonic() + 20
        while b"token also in" not in line and time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line, "the server printed no token"
        match = re.search(r"Bearer ([0-9a-f]{64})`.*token also in (\S+?),", line.decode())
        assert match, line
        token, path = match.group(1), Path(match.group(2))
        assert path.read_text().strip() == token
        assert path.stat().st_mode & 0o777 == 0o600
        wait_listening(proc, port)
        assert initialize(f"http://127.0.0.1:{port}/mcp", token)[0] == 200
    except BaseException:
        proc.kill()
        raise
    assert stop(proc, signum) == 0
    assert not path.exists(), f"{path} outlived its server"
