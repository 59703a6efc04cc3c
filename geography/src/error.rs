//! The crate's one error type.

use geoberg_geostats::GeostatsError;
use thiserror::Error;

/// Everything the predicates and kernels can reject. Messages name the problem, the value and
/// the fix.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum GeographyError {
    /// A value is not valid WKB (truncated, an unknown or curve type, a nested SRID that differs
    /// from the outer one, ...); the inner error says which and where.
    #[error("geography value: {0}")]
    Wkb(#[from] GeostatsError),
    /// A value in a batch failed; wraps the value's error.
    #[error("row {row}: {source}")]
    Row {
        /// Row index in the array.
        row: usize,
        /// What was wrong with the value.
        source: Box<GeographyError>,
    },
    /// The Arrow array is not one of the binary types that hold WKB.
    #[error(
        "geography column has Arrow type {data_type}, expected Binary, LargeBinary or \
         BinaryView holding WKB; cast the column or decode it from WKT first"
    )]
    UnsupportedArray {
        /// The array's data type, formatted.
        data_type: String,
    },
    /// A distance that is negative, NaN or infinite.
    #[error(
        "ST_DWithin on geography needs a finite distance in metres of at least 0, got \
         {distance}; pass metres, e.g. 1000.0 for a kilometre"
    )]
    InvalidDistance {
        /// The distance given.
        distance: f64,
    },
    /// An S2 level outside 0..=30.
    #[error(
        "ST_S2CellIds needs an S2 level from 0 to 30, got {level}; level 30 cells are about a \
         centimetre across, level 4 cells about 500 km (each level halves the cell size)"
    )]
    S2Level {
        /// The level given.
        level: i64,
    },
    /// A covering that needs more cells than allowed.
    #[error(
        "covering the value with S2 cells of level {level} needs more than {max_cells} cells; \
         pass a lower level (each level lower needs about a quarter as many cells)"
    )]
    TooManyS2Cells {
        /// The level asked for.
        level: i64,
        /// The most cells one value may give.
        max_cells: usize,
    },
}

impl GeographyError {
    pub(crate) fn at_row(self, row: usize) -> Self {
        GeographyError::Row {
            row,
            source: Box::new(self),
        }
    }
}
