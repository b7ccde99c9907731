#!/usr/bin/env bash
# What bridge adds to a Tauri app's build (BENCHMARKS.md, "A Tauri app on bridge"): the Tauri
# Order Editor (`-p tauri-order-editor`, as a user builds it from this workspace) against the
# same Tauri shell and page without bridge, each built clean into a fresh target dir of its own,
# one after the other in the same run.
#
# The plain shell is generated into a temp dir: the example's tauri.conf.json, dist/ and icons,
# its capabilities minus the bridge plugin's and the app's own permissions (only `core:default`
# remains), a build.rs that is `tauri_build::build()`, and a main.rs that is
# `tauri::Builder::default().run(tauri::generate_context!())`. Same `tauri` and `tauri-build`
# requirements and features as the example; the workspace's Cargo.lock is copied in and pruned
# to the shell's dependencies by `cargo fetch` (which keeps every remaining version), then both
# builds run `--locked`.
#
# Usage: examples/tauri_order_editor/bench/build_cost.sh [debug|release]... 
#   (default: debug release). Env: BENCH_TMP (scratch root, default: mktemp -d), KEEP_BINS (a
#   directory: the release binaries are copied there, e.g. for bench/tauri_costs.py).
# Release builds use `--features tauri/custom-protocol` (the page from the binary, no dev server),
# as the example's Cargo.toml says. Prints one line per build:
#   app profile seconds crates size_bytes stripped_bytes
# Each target dir is deleted as soon as its figures are taken.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../../.." && pwd)"
EXAMPLE="$ROOT/examples/tauri_order_editor"
PROFILES=("$@")
[ ${#PROFILES[@]} -gt 0 ] || PROFILES=(debug release)
TMP="${BENCH_TMP:-$(mktemp -d)}"
mkdir -p "$TMP"
unset RUSTC_WRAPPER CARGO_BUILD_RUSTC_WRAPPER

# The plain shell: same config, page and icons; no bridge.
PLAIN="$TMP/plain-shell"
rm -rf "$PLAIN"
mkdir -p "$PLAIN/src" "$PLAIN/capabilities"
cp -r "$EXAMPLE/dist" "$EXAMPLE/icons" "$EXAMPLE/tauri.conf.json" "$PLAIN/"
cat > "$PLAIN/capabilities/default.json" <<'JSON'
{
  "identifier": "default",
  "description": "The example's default capability minus the bridge plugin's permissions.",
  "windows": ["editor", "w-*"],
  "local": true,
  "permissions": ["core:default"]
}
JSON
cat > "$PLAIN/Cargo.toml" <<'TOML'
[package]
name = "tauri-plain-shell"
version = "0.1.0"
edition = "2021"
publish = false

[[bin]]
name = "tauri_plain_shell"
path = "src/main.rs"

[dependencies]
tauri = { version = "2" }

[build-dependencies]
tauri-build = { version = "2", features = [] }

[workspace]
TOML
cat > "$PLAIN/build.rs" <<'RS'
fn main() {
    tauri_build::build()
}
RS
cat > "$PLAIN/src/main.rs" <<'RS'
fn main() {
    tauri::Builder::default().run(tauri::generate_context!()).expect("tauri app");
}
RS
cp "$ROOT/Cargo.lock" "$PLAIN/Cargo.lock"
(cd "$PLAIN" && cargo fetch -q)
for crate in tauri tauri-build wry webkit2gtk; do
  a=$(grep -A1 "^name = \"$crate\"$" "$ROOT/Cargo.lock" | sed -n 's/^version = //p' | tr '\n' ' ')
  b=$(grep -A1 "^name = \"$crate\"$" "$PLAIN/Cargo.lock" | sed -n 's/^version = //p' | tr '\n' ' ')
  [ "$a" = "$b" ] || { echo "version mismatch for $crate: workspace $a, shell $b" >&2; exit 1; }
done
echo "# locked versions: tauri $(grep -A1 '^name = "tauri"$' "$PLAIN/Cargo.lock" | sed -n 's/^version = //p')" >&2

build() { # app profile -> one result line
  local app=$1 profile=$2 target="$TMP/target-$1-$2" flags=(--locked) bin
  rm -rf "$target"
  if [ "$profile" = release ]; then flags+=(--release --features tauri/custom-protocol); fi
  local start end log="$TMP/build-$app-$profile.log"
  start=$(date +%s.%N)
  if [ "$app" = example ]; then
    (cd "$ROOT" && CARGO_TARGET_DIR="$target" cargo build -p tauri-order-editor "${flags[@]}") > "$log" 2>&1
    bin="$target/$profile/tauri_order_editor"
  else
    (cd "$PLAIN" && CARGO_TARGET_DIR="$target" cargo build "${flags[@]}") > "$log" 2>&1
    bin="$target/$profile/tauri_plain_shell"
  fi
  end=$(date +%s.%N)
  local crates size stripped
  crates=$(grep -c '^ *Compiling ' "$log")
  size=$(stat -c %s "$bin")
  strip -o "$TMP/stripped" "$bin"
  stripped=$(stat -c %s "$TMP/stripped")
  rm -f "$TMP/stripped"
  if [ -n "${KEEP_BINS:-}" ] && [ "$profile" = release ]; then mkdir -p "$KEEP_BINS"; cp "$bin" "$KEEP_BINS/"; fi
  rm -rf "$target"
  printf '%s %s %.1f %s %s %s\n' "$app" "$profile" "$(echo "$end - $start" | bc)" "$crates" "$size" "$stripped"
}

echo "# app profile seconds crates size_bytes stripped_bytes ($(nproc) CPUs, $(date -u +%FT%TZ))"
for profile in "${PROFILES[@]}"; do
  build example "$profile"
  build plain "$profile"
done
