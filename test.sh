#!/usr/bin/env bash
# Runs every test of the project: Rust unit, integration, trybuild and doc tests, then the
# official Python MCP SDK client against the example over stdio and HTTP.
# Installs the Python client into ./.venv on first use.
set -euo pipefail
cd "$(dirname "$0")"

if ! .venv/bin/python -c 'import mcp, pytest' 2>/dev/null; then
  echo "test.sh: installing the Python MCP client (mcp 2.3.0, pytest) into .venv" >&2
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check 'mcp==2.3.0' 'pytest>=8'
fi

cargo test --workspace --all-targets
cargo test --workspace --doc
cargo build --example order_editor
.venv/bin/python -m pytest -q tests/python
