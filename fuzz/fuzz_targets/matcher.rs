#![no_main]
//! `cargo fuzz run matcher`: see `pinaudit::fuzz_entry::matcher`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| pinaudit::fuzz_entry::matcher(data));
