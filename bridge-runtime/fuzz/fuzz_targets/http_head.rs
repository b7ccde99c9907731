//! The HTTP transport's checks before a body is read: `Host`, `Origin`, the bearer token on one
//! request head (`bridge_runtime::__internals::http_head`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    bridge_runtime::__internals::http_head(data);
});
