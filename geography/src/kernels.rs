//! Batch kernels: a column of WKB geography values against one constant query geography,
//! prepared once. These are what an engine registers for `ST_Intersects(geog, <constant>)` and
//! friends; nulls in give nulls out.

use arrow_array::builder::{BooleanBuilder, Float64Builder};
use arrow_array::{
    Array, BinaryArray, BinaryViewArray, BooleanArray, Float64Array, LargeBinaryArray,
};

use geoberg_geostats::geography_bbox_of_wkb;

use crate::error::GeographyError;
use crate::geography::{Geography, boxes_meet};

/// A constant query geography, parsed and indexed once for a whole column.
///
/// ```
/// use arrow_array::{Array, BinaryArray};
/// use geoberg_geography::{PreparedGeography, intersects};
///
/// fn point(x: f64, y: f64) -> Vec<u8> {
///     let mut v = vec![1, 1, 0, 0, 0];
///     v.extend(x.to_le_bytes());
///     v.extend(y.to_le_bytes());
///     v
/// }
/// // LINESTRING (170 0, -170 0): the short way, across the antimeridian.
/// let mut line = vec![1, 2, 0, 0, 0, 2, 0, 0, 0];
/// for v in [170.0f64, 0.0, -170.0, 0.0] {
///     line.extend(v.to_le_bytes());
/// }
/// let query = PreparedGeography::from_wkb(&line).unwrap();
/// let rows = BinaryArray::from(vec![Some(&point(180.0, 0.0)[..]), Some(&point(0.0, 0.0)[..]), None]);
/// let hits = intersects(&rows, &query).unwrap();
/// assert_eq!((hits.value(0), hits.value(1), hits.is_null(2)), (true, false, true));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedGeography {
    geography: Geography,
}

impl PreparedGeography {
    /// Parses the query value (ISO WKB or EWKB).
    pub fn from_wkb(wkb: &[u8]) -> Result<Self, GeographyError> {
        Ok(PreparedGeography {
            geography: Geography::from_wkb(wkb)?,
        })
    }

    /// The parsed value.
    pub fn geography(&self) -> &Geography {
        &self.geography
    }
}

impl From<Geography> for PreparedGeography {
    fn from(geography: Geography) -> Self {
        PreparedGeography { geography }
    }
}

/// Calls `f(row, value)` for every row of a WKB column (`None` for nulls).
pub(crate) fn for_each(
    array: &dyn Array,
    mut f: impl FnMut(usize, Option<&[u8]>) -> Result<(), GeographyError>,
) -> Result<(), GeographyError> {
    let any = array.as_any();
    if let Some(a) = any.downcast_ref::<BinaryArray>() {
        a.iter().enumerate().try_for_each(|(i, v)| f(i, v))
    } else if let Some(a) = any.downcast_ref::<LargeBinaryArray>() {
        a.iter().enumerate().try_for_each(|(i, v)| f(i, v))
    } else if let Some(a) = any.downcast_ref::<BinaryViewArray>() {
        a.iter().enumerate().try_for_each(|(i, v)| f(i, v))
    } else {
        Err(GeographyError::UnsupportedArray {
            data_type: format!("{:?}", array.data_type()),
        })
    }
}

/// Runs `test` on every row. With `needs_contact` (every predicate but distance), a row whose
/// bounds on the sphere miss the query's is false without being parsed further: the bounds hold
/// every point of the value, so this never changes an answer.
fn boolean_kernel(
    array: &dyn Array,
    query: &PreparedGeography,
    needs_contact: bool,
    test: impl Fn(&Geography) -> bool,
) -> Result<BooleanArray, GeographyError> {
    let query_box = query.geography.bbox();
    let mut out = BooleanBuilder::with_capacity(array.len());
    for_each(array, |row, value| {
        match value {
            None => out.append_null(),
            Some(wkb) => {
                if needs_contact {
                    let row_box = geography_bbox_of_wkb(wkb)
                        .map_err(|e| GeographyError::from(e).at_row(row))?;
                    let meets = match (row_box, query_box) {
                        (Some(r), Some(q)) => boxes_meet(&r, &q),
                        _ => false, // an empty value touches nothing
                    };
                    if !meets {
                        // The bounds scan validated the value as the full parse would.
                        out.append_value(false);
                        return Ok(());
                    }
                }
                let g = Geography::from_wkb(wkb).map_err(|e| e.at_row(row))?;
                out.append_value(test(&g));
            }
        }
        Ok(())
    })?;
    Ok(out.finish())
}

/// `ST_Intersects(row, query)` for every row.
pub fn intersects(
    array: &dyn Array,
    query: &PreparedGeography,
) -> Result<BooleanArray, GeographyError> {
    boolean_kernel(array, query, true, |g| g.intersects(&query.geography))
}

/// `ST_Contains(row, query)`: the row contains the query.
pub fn contains(
    array: &dyn Array,
    query: &PreparedGeography,
) -> Result<BooleanArray, GeographyError> {
    boolean_kernel(array, query, true, |g| g.contains(&query.geography))
}

/// `ST_Within(row, query)`: the row lies within the query (the query contains the row).
pub fn within(
    array: &dyn Array,
    query: &PreparedGeography,
) -> Result<BooleanArray, GeographyError> {
    boolean_kernel(array, query, true, |g| query.geography.contains(g))
}

/// `ST_Covers(row, query)`: every point of the query lies in the row.
pub fn covers(
    array: &dyn Array,
    query: &PreparedGeography,
) -> Result<BooleanArray, GeographyError> {
    boolean_kernel(array, query, true, |g| g.covers(&query.geography))
}

/// `ST_CoveredBy(row, query)`: every point of the row lies in the query.
pub fn covered_by(
    array: &dyn Array,
    query: &PreparedGeography,
) -> Result<BooleanArray, GeographyError> {
    boolean_kernel(array, query, true, |g| query.geography.covers(g))
}

/// `ST_DWithin(row, query, metres)`: great-circle distance at most `metres` on the sphere of
/// radius [`crate::EARTH_RADIUS_METERS`].
pub fn dwithin(
    array: &dyn Array,
    query: &PreparedGeography,
    metres: f64,
) -> Result<BooleanArray, GeographyError> {
    if !(metres.is_finite() && metres >= 0.0) {
        return Err(GeographyError::InvalidDistance { distance: metres });
    }
    boolean_kernel(array, query, false, |g| g.dwithin(&query.geography, metres))
}

/// `ST_Distance(row, query)` in metres; null for null rows, infinity when either is empty.
pub fn distance(
    array: &dyn Array,
    query: &PreparedGeography,
) -> Result<Float64Array, GeographyError> {
    float_kernel(array, |g| g.distance(&query.geography))
}

/// One `Float64` of every row of a WKB column; null rows give null.
pub(crate) fn float_kernel(
    array: &dyn Array,
    of: impl Fn(&Geography) -> f64,
) -> Result<Float64Array, GeographyError> {
    let mut out = Float64Builder::with_capacity(array.len());
    for_each(array, |row, value| {
        match value {
            None => out.append_null(),
            Some(wkb) => {
                let g = Geography::from_wkb(wkb).map_err(|e| e.at_row(row))?;
                out.append_value(of(&g));
            }
        }
        Ok(())
    })?;
    Ok(out.finish())
}
