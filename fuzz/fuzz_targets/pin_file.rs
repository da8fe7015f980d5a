#![no_main]
//! `cargo fuzz run pin_file`: see `pinaudit::fuzz_entry::pin_file`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| pinaudit::fuzz_entry::pin_file(data));
