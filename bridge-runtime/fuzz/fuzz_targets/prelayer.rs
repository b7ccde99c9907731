//! The stdio pre-layer's classifier: lines of bytes as an MCP client writes them to the
//! server's stdin (`bridge_runtime::__internals::prelayer`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    bridge_runtime::__internals::prelayer(data);
});
