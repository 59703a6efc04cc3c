//! libFuzzer entry for `geoberg_fuzz::bound_bytes`; the checks live in the library (see its docs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| geoberg_fuzz::bound_bytes(data));
