#![no_main]
//! `cargo fuzz run sema`: see `misaal_fuzz::sema`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = misaal_fuzz::sema(data);
});
