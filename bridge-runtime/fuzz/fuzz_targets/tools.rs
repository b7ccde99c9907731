//! MCP `tools/call` argument validation through the registry (`bridge_fuzz::tools::run`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    bridge_fuzz::tools::run(data);
});
