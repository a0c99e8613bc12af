#![no_main]
//! `cargo fuzz run baseline`: see `misaal_fuzz::baseline`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = misaal_fuzz::baseline(data);
});
