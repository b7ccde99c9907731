//! The schema pipeline on arbitrary schemas and instances (`bridge_fuzz::schema::run`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    bridge_fuzz::schema::run(data);
});
