//! The companion socket's input path: framing, JSON-RPC parsing, routing, params decoding
//! (`bridge_runtime::__internals::jsonrpc`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    bridge_runtime::__internals::jsonrpc(data);
});
