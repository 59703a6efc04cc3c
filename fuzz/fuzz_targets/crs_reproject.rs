//! libFuzzer entry for `geoberg_fuzz::crs_reproject`; the checks live in the library (see its docs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| geoberg_fuzz::crs_reproject(data));
