#![no_main]
//! `cargo fuzz run manifest`: see `misaal_fuzz::manifest`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = misaal_fuzz::manifest(data);
});
