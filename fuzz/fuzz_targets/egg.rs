#![no_main]
//! `cargo fuzz run egg`: see `misaal_fuzz::egg`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = misaal_fuzz::egg(data);
});
