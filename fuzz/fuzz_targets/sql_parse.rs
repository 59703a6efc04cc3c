//! libFuzzer entry for `geoberg_fuzz::sql_parse`; the checks live in the library (see its docs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| geoberg_fuzz::sql_parse(data));
