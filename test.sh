#!/usr/bin/env bash
# Runs every test of the project: Rust unit, integration, trybuild and doc tests, then the
# official Python MCP SDK client against the example over stdio and HTTP, then the OpenRPC
# reference validator on the generated OpenRPC documents.
# Installs the Python client into ./.venv on first use.
set -euo pipefail
cd "$(dirname "$0")"

if ! .venv/bin/python -c 'import mcp, pytest' 2>/dev/null; then
  echo "test.sh: installing the Python MCP client (mcp 2.3.0, pytest) into .venv" >&2
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check 'mcp==2.3.0' 'pytest>=8'
fi

# The example servers and the companion CLI are run as real processes by the end-to-end tests.
cargo build --workspace --bins --examples
cargo test --workspace --all-targets
cargo test --workspace --doc
.venv/bin/python -m pytest -q tests/python

# OpenRPC: the reference validator (@open-rpc/schema-utils-js 2.2.1, tests/openrpc/) on every
# example's exported openrpc.json and on the documents tests/openrpc.rs generates into
# <target>/tmp/openrpc/ (so it runs after `cargo test`). Installs it on first use.
if [ ! -d tests/openrpc/node_modules/@open-rpc/schema-utils-js ]; then
  echo "test.sh: installing the OpenRPC validator (npm ci in tests/openrpc)" >&2
  npm ci --prefix tests/openrpc --no-audit --no-fund --silent
fi
openrpc_target=$(cargo metadata --format-version 1 --no-deps |
  node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).target_directory))')
node --max-old-space-size=1024 tests/openrpc/validate.mjs examples/*/catalog/openrpc.json "$openrpc_target"/tmp/openrpc/*.json
