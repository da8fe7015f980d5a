#![no_main]
//! `cargo fuzz run url`: see `pinaudit::fuzz_entry::url`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| pinaudit::fuzz_entry::url(data));
