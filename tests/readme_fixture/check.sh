#!/usr/bin/env bash
# Proves that the README's "Annotate your own window" section is enough to start an app: builds a
# standalone crate made of exactly that section's ```toml dependency block and its ```rust quick
# start, as a newcomer would paste them, with `bridge-runtime` pointed at this checkout; then adds
# the "Test your windows like an agent" section's dev-dependency and #[test] and runs it.
#
# The crate is its own workspace, generated under <target>/tmp/readme-fixture and built into the
# main target directory. It starts from a copy of the workspace's Cargo.lock so that dependencies
# keep the versions the project is tested with instead of being resolved anew. It then checks
# that the default features pull in no C build (cc) and no clap, axum or rusqlite (issue #7).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
readme="$root/README.md"
section='## Annotate your own window'

# The body of the first ```<lang>… fence inside $section.
block() {
  awk -v section="$section" -v lang="$1" '
    $0 == section { inside = 1; next }
    inside && /^## / { exit }
    inside && !fenced && index($0, "```" lang) == 1 { fenced = 1; next }
    fenced && /^```/ { exit }
    fenced { print }
  ' "$readme"
}

deps=$(block toml)
code=$(block rust)
# The test-kit section's dev-dependency and #[test], run against the quick start (issue #9).
kit_section='## Test your windows like an agent'
kit_deps=$(section="$kit_section" block toml)
kit_test=$(section="$kit_section" block rust)
[ -n "$deps" ] || { echo "readme_fixture: no \`\`\`toml block under '$section' in README.md" >&2; exit 1; }
[ -n "$code" ] || { echo "readme_fixture: no \`\`\`rust block under '$section' in README.md" >&2; exit 1; }
[ -n "$kit_deps" ] && [ -n "$kit_test" ] || { echo "readme_fixture: no toml and rust blocks under '$kit_section'" >&2; exit 1; }
grep -q '^bridge-runtime = { path = "[^"]*" }$' <<<"$deps" || {
  echo "readme_fixture: the README's dependencies do not name bridge-runtime by path" >&2
  exit 1
}

target=${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')}
crate="$target/tmp/readme-fixture"
rm -rf "$crate"
mkdir -p "$crate/src"
{
  printf '[package]\nname = "readme-fixture"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n'
  printf '# Its own workspace, not a member of the bridge workspace.\n[workspace]\n\n'
  sed "s|^bridge-runtime = { path = \"[^\"]*\" }\$|bridge-runtime = { path = \"$root/bridge-runtime\" }|" <<<"$deps"
  printf '\n'
  sed "s|^bridge-runtime = { path = \"[^\"]*\", features|bridge-runtime = { path = \"$root/bridge-runtime\", features|" <<<"$kit_deps"
} >"$crate/Cargo.toml"
{
  printf '%s\n\n' "$code"
  printf '%s\n' "$kit_test"
} >"$crate/src/main.rs"
cp "$root/Cargo.lock" "$crate/Cargo.lock"

echo "readme_fixture: building the README's quick start as a standalone crate ($crate)" >&2
CARGO_TARGET_DIR="$target" cargo build --quiet --manifest-path "$crate/Cargo.toml"
echo "readme_fixture: running the README's test-kit example against it" >&2
CARGO_TARGET_DIR="$target" cargo test --quiet --manifest-path "$crate/Cargo.toml"

# Issue #7: the quick start, on bridge-runtime's default features, pulls in no C build and none
# of the optional surfaces' heavy dependencies.
heavy=$(cargo tree --quiet --manifest-path "$crate/Cargo.toml" -e normal,build --prefix none |
  awk '{print $1}' | sort -u | grep -xE 'cc|clap|axum|rusqlite|libsqlite3-sys|yaml_serde' || true)
if [ -n "$heavy" ]; then
  echo "readme_fixture: the default features pull in: $(tr '\n' ' ' <<<"$heavy")" >&2
  exit 1
fi
echo "readme_fixture: default features: $(cargo tree --quiet --manifest-path "$crate/Cargo.toml" -e normal,build --prefix none | awk '{print $1}' | sort -u | grep -vx readme-fixture | wc -l) crates, no cc/clap/axum/rusqlite" >&2
