//! Inputs the fuzzers found, by name. Each is also in `corpus/<target>/`, so the replay test runs
//! it; naming it here documents what it exercises.

use std::path::Path;

fn corpus(target: &str, file: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target)
        .join(file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A column whose third row is an EWKB point with X = NaN and Y = 2.0000000075: the row has no
/// box (`bbox_of_wkb` gives `None`), but `BBoxAccumulator` skips NaN per dimension and keeps its
/// Y, so the file box is taller than the union of the row boxes. Found by `wkb_batch` in its
/// first minute; the target now accepts a covering (never a smaller) file box for such rows.
#[test]
fn accumulator_keeps_y_of_a_point_with_nan_x() {
    geoberg_fuzz::wkb_batch(&corpus("wkb_batch", "crash-point-nan-x-keeps-y"));
}

/// A WKB whose first coordinate is (subnormal, NaN): both reprojection calls fail with the same
/// `NonFiniteCoordinate` error, which compares unequal to itself because it carries the NaN. The
/// target compares error messages since; a harness bug, not a `crs` bug.
#[test]
fn reprojection_error_carrying_nan() {
    geoberg_fuzz::crs_reproject(&corpus("crs_reproject", "crash-nan-in-error"));
}

/// An empty WKB window matches no row, so even a file without bounds may be skipped; the brute
/// force had demanded the read. A harness bug, kept as a pruning case of its own.
#[test]
fn empty_window_skips_files_without_bounds() {
    geoberg_fuzz::pruning_plan(&corpus("pruning_plan", "crash-empty-window-unknown-bounds"));
}

/// A distance filter whose WKB window has a vertex (NaN, 50): no location, so it cannot put a
/// far-away file in reach; the brute force had measured a zero X gap through the NaN.
#[test]
fn nan_window_vertex_is_no_location() {
    geoberg_fuzz::pruning_plan(&corpus("pruning_plan", "crash-nan-vertex-distance"));
}

/// A distance filter with a NaN distance: both planners reject it with `InvalidDistance(NaN)`,
/// which is unequal to itself; the target compares error messages since.
#[test]
fn nan_distance_is_rejected_alike() {
    geoberg_fuzz::pruning_plan(&corpus("pruning_plan", "crash-nan-distance-error"));
}

/// A contains filter whose WKB window is the single vertex (179.99999999999997, NaN): the window
/// has no Y, so no box, and matches no row; the planner rightly skipped a file without bounds
/// that the brute force had demanded. A harness bug: the brute force now applies geostats' rule
/// (no box when every X or every Y is NaN).
#[test]
fn window_with_nan_in_every_y_has_no_box() {
    geoberg_fuzz::pruning_plan(&corpus("pruning_plan", "crash-nan-y-window-has-no-box"));
}

/// A manifest header whose metadata map is empty: the bridge wrote a block count of 0 and then
/// the terminating 0, so the sync marker moved by one byte and a second pass moved it again.
/// A `table` bug: an empty map is now written as the terminator alone.
#[test]
fn manifest_header_with_an_empty_metadata_map() {
    geoberg_fuzz::manifest_header(&corpus("manifest_header", "crash-empty-metadata-map"));
}

/// A manifest header whose `schema` entry is the number 4444444444444444.4444: the bridge
/// re-spelled it as 4444444444444444.5, which serde_json's default parser then read one ulp off
/// (…45.0). A `table` bug for double defaults in schemas: serde_json now parses with
/// `float_roundtrip`, and a schema the bridge does not change keeps its bytes.
#[test]
fn manifest_schema_numbers_survive_the_rewrite() {
    geoberg_fuzz::manifest_header(&corpus("manifest_header", "crash-float-schema-respelled"));
}

/// A geography file box wrapped from 180.00000000000003 to -180.00000000000003 (rows at a
/// longitude past the antimeridian, as a reprojection can leave them) and a window over every
/// longitude: the planner clamped the window to [-180, 180] and skipped the file, though the
/// window holds a vertex at 180.00000000000003. A `pruning` bug: a geography box outside
/// longitude [-180, 180] or latitude [-90, 90] now cannot be compared, and the file is read.
#[test]
fn geography_box_past_the_antimeridian_is_read() {
    geoberg_fuzz::pruning_plan(&corpus("pruning_plan", "crash-geography-box-past-180"));
}

/// A planar window box whose M range is [NaN, NaN]: the planner rejects it ("a coordinate is
/// NaN; give every bound a number"), which the target had counted as a valid window failing. A
/// harness bug: a valid window's Z and M, when given, are ordered numbers.
#[test]
fn window_with_nan_m_is_rejected() {
    geoberg_fuzz::pruning_plan(&corpus("pruning_plan", "crash-window-with-nan-m"));
}

/// Format-version 1 metadata with two schemas of one id, the first holding a geometry field
/// whose object repeats its `id` key: `iceberg` keeps the second (empty) schema, but the bridge
/// had reported the first one's geometry field, which then vanished in a round trip. A `table`
/// bug: the bridge now keeps only geo fields that the parsed metadata has as binary columns.
#[test]
fn metadata_geo_fields_follow_the_parsed_schemas() {
    geoberg_fuzz::table_metadata(&corpus("table_metadata", "crash-duplicate-field-id-key"));
}
