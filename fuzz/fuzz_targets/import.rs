#![no_main]
//! `cargo fuzz run import`: see `pinaudit::fuzz_entry::import`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| pinaudit::fuzz_entry::import(data));
