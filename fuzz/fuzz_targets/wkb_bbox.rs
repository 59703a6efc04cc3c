//! libFuzzer entry for `geoberg_fuzz::wkb_bbox`; the checks live in the library (see its docs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| geoberg_fuzz::wkb_bbox(data));
