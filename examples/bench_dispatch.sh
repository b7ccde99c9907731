#!/usr/bin/env bash
# The dispatch benchmark of BENCHMARKS.md ("Dispatch: bridge against a hand-written rmcp server",
# issue #10 items 1, 2 and 8), in one run on this machine:
#   - tools/call of w-A__edit_field (a real change every call: "Alice {n}") on the Order Editor
#     (examples/order_editor) against the hand-written rmcp reference (examples/rmcp_reference.rs)
#     and the Python SDK's low-level server (examples/python_reference.py), same fixture, same
#     driver (examples/stdio_driver.rs), interleaved rounds, medians, ratios, reply bytes compared;
#   - the same call with 2 and with 200 open windows (server CPU per call);
#   - the stdio pre-layer's cost: the same binary with `--stdio-without-prelayer` (rmcp's own
#     stdio transport: no call order, no answers for malformed input) as server "no pre-layer";
#   - instructions per call under callgrind (repeatable on a busy machine): the difference
#     between a run of N1 and one of N2 calls, divided by N2 - N1 (start-up cancels out).
# Usage: examples/bench_dispatch.sh [ROUNDS] [CALLS]   (defaults 5 and 20000)
# BASELINE_DIR=dir also measures an older build's order_editor there, as server "baseline".
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
calls=${2:-20000}
cargo build --release --quiet --example order_editor --example rmcp_reference --example stdio_driver
bin=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/examples
py=${PYTHON:-.venv/bin/python}
fixture=$(mktemp -t bridge-fixture.XXXXXX.json)
trap 'rm -f "$fixture"' EXIT
args='{"field":"recipient","value":"Alice {n}"}'

servers=(--server "$bin/order_editor" --server "$bin/rmcp_reference --fixture $fixture"
  --server "$bin/order_editor --stdio-without-prelayer")
if [ -n "${BASELINE_DIR:-}" ]; then
  servers+=(--server "$BASELINE_DIR/order_editor")
fi

echo "== tools/call edit_field: bridge, hand-written rmcp reference, bridge without the stdio pre-layer${BASELINE_DIR:+, baseline}; 32 in flight"
"$bin/stdio_driver" --capture "$fixture" "${servers[@]}" --tool w-A__edit_field --arguments "$args" \
  --calls "$calls" --window 32 --rounds "$rounds" | grep -v '^round'
echo "== the same, 1 in flight"
"$bin/stdio_driver" "${servers[@]}" --tool w-A__edit_field --arguments "$args" \
  --calls $((calls / 4)) --window 1 --rounds "$rounds" | grep -v '^round'
echo "== resources/read app://windows, 32 in flight"
"$bin/stdio_driver" "${servers[@]}" --read --calls "$calls" --window 32 --rounds "$rounds" | grep -v '^round'
echo "== read-only tool w-C__load_rows, 32 in flight"
"$bin/stdio_driver" --server "$bin/order_editor" ${BASELINE_DIR:+--server "$BASELINE_DIR/order_editor"} \
  --calls "$calls" --window 32 --rounds "$rounds" | grep -v '^round'
echo "== 2 windows against 200 (198 more Order Editors), edit_field, 32 in flight"
more=(--server "$bin/order_editor" --server "$bin/order_editor --extra-editors 198")
if [ -n "${BASELINE_DIR:-}" ]; then
  more+=(--server "$BASELINE_DIR/order_editor" --server "$BASELINE_DIR/order_editor --extra-editors 198")
fi
"$bin/stdio_driver" "${more[@]}" --tool w-A__edit_field --arguments "$args" \
  --calls $((calls / 2)) --window 32 --rounds "$rounds" | grep -v '^round'
if [ -x "$py" ]; then
  echo "== against the Python SDK's low-level server (fewer calls: it is slow), 32 in flight"
  "$bin/stdio_driver" --server "$bin/order_editor" --server "$py examples/python_reference.py --fixture $fixture" \
    --tool w-A__edit_field --arguments "$args" --calls 3000 --window 32 --rounds 3 | grep -v '^round'
fi
if command -v valgrind >/dev/null; then
  echo "== instructions per call (callgrind), 1 in flight"
  ir() { # server command, calls → total instructions
    local out
    out=$(mktemp -t callgrind.XXXXXX)
    "$bin/stdio_driver" --server "valgrind --tool=callgrind --callgrind-out-file=$out $1" \
      --tool w-A__edit_field --arguments "$args" --calls "$2" --window 1 --compare 0 >/dev/null 2>&1
    sed -n 's/^summary: //p; s/^totals: //p' "$out" | head -1
    rm -f "$out"
  }
  for name in order_editor "rmcp_reference --fixture $fixture" "order_editor --stdio-without-prelayer" \
    "order_editor --extra-editors 198"; do
    a=$(ir "$bin/$name" 500)
    b=$(ir "$bin/$name" 2500)
    echo "$name: $(( (b - a) / 2000 )) instructions/call"
  done
  if [ -n "${BASELINE_DIR:-}" ]; then
    # Fewer calls: the old build re-renders every window, ~10M instructions per call with 200.
    for name in order_editor "order_editor --extra-editors 198"; do
      a=$(ir "$BASELINE_DIR/$name" 100)
      b=$(ir "$BASELINE_DIR/$name" 300)
      echo "baseline $name: $(( (b - a) / 200 )) instructions/call"
    done
  fi
fi
