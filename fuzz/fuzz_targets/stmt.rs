#![no_main]
//! `cargo fuzz run stmt`: see `misaal_fuzz::stmt`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = misaal_fuzz::stmt(data);
});
