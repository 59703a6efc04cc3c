//! The reserved metadata columns a geoberg table answers to, in one place (as iceberg-rust's
//! `metadata_columns.rs`): `_file` and `_pos` on every table, and the v3 row-lineage columns
//! `_row_id` and `_last_updated_sequence_number`, whose names and field ids the rewrite crate
//! defines because it writes them.

pub use geoberg_rewrite::{
    LAST_UPDATED_SEQUENCE_NUMBER_COLUMN, LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID, ROW_ID_COLUMN,
    ROW_ID_FIELD_ID,
};

/// `_file`: the data file a row was read from (Iceberg metadata column, reserved id 2147483646).
pub const FILE_COLUMN: &str = "_file";
/// `_pos`: a row's position in its data file (Iceberg metadata column, reserved id 2147483645).
pub const POS_COLUMN: &str = "_pos";

/// Every metadata column a geoberg table answers to (the lineage ones on format-version 3).
pub const METADATA_COLUMNS: [&str; 4] = [
    FILE_COLUMN,
    POS_COLUMN,
    ROW_ID_COLUMN,
    LAST_UPDATED_SEQUENCE_NUMBER_COLUMN,
];

/// Whether `column` is `_file` or `_pos`.
pub(crate) fn is_position_column(column: &str) -> bool {
    column == FILE_COLUMN || column == POS_COLUMN
}

/// Whether `column` is one of the row-lineage columns.
pub(crate) fn is_lineage_column(column: &str) -> bool {
    column == ROW_ID_COLUMN || column == LAST_UPDATED_SEQUENCE_NUMBER_COLUMN
}
