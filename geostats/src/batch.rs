//! Bounding boxes of whole Arrow WKB columns: the per-row kernel a writer runs once per batch.

use arrow_array::{
    Array, BinaryArray, BinaryViewArray, Float64Array, GenericBinaryArray, Int32Array,
    LargeBinaryArray, OffsetSizeTrait,
};
use arrow_buffer::{BooleanBuffer, BooleanBufferBuilder, Buffer, NullBuffer, ScalarBuffer};

use crate::error::GeostatsError;
use crate::extent::{PlanarXY, XYSink, ZMExtent};
use crate::wkb_scan::scan_wkb;

/// Four bbox columns for a WKB column, row for row, plus the EWKB SRIDs.
///
/// A row is null in all four columns when the geometry is null or empty (the policy: never zeros
/// for "no location"); a point gives `min == max`. Z and M are not materialized.
#[derive(Debug, Clone, PartialEq)]
pub struct BBoxColumns {
    /// Smallest X per row.
    pub min_x: Float64Array,
    /// Smallest Y per row.
    pub min_y: Float64Array,
    /// Largest X per row.
    pub max_x: Float64Array,
    /// Largest Y per row.
    pub max_y: Float64Array,
    /// The EWKB SRID per row (null for ISO WKB and null rows); `None` when no row carried one.
    pub srid: Option<Int32Array>,
}

/// Computes [`BBoxColumns`] for a `Binary`, `LargeBinary` or `BinaryView` column of WKB.
///
/// Fails on the first value that is not valid WKB, naming its row and byte offset.
///
/// ```
/// use arrow_array::{Array, BinaryArray};
/// use geoberg_geostats::bbox_columns;
/// let mut point = vec![1, 1, 0, 0, 0];
/// point.extend(3f64.to_le_bytes());
/// point.extend(4f64.to_le_bytes());
/// let empty_line = [1u8, 2, 0, 0, 0, 0, 0, 0, 0];
/// let wkb = BinaryArray::from(vec![Some(&point[..]), None, Some(&empty_line[..])]);
/// let cols = bbox_columns(&wkb).unwrap();
/// assert_eq!(cols.min_x.value(0), 3.0);
/// assert_eq!(cols.max_y.value(0), 4.0);
/// assert!(cols.min_x.is_null(1) && cols.min_x.is_null(2));
/// assert!(cols.srid.is_none());
/// ```
pub fn bbox_columns(array: &dyn Array) -> Result<BBoxColumns, GeostatsError> {
    let mut out = ColumnsBuilder::new(array.len());
    for_each_value(array, |row, value| out.push(row, value))?;
    Ok(out.finish())
}

/// Calls `f(row, wkb)` for every non-null value of a WKB column.
pub(crate) fn for_each_wkb(
    array: &dyn Array,
    mut f: impl FnMut(usize, &[u8]) -> Result<(), GeostatsError>,
) -> Result<(), GeostatsError> {
    for_each_value(array, |row, value| match value {
        Some(v) => f(row, v),
        None => Ok(()),
    })
}

/// Calls `f(row, value)` for every row, `None` for nulls, dispatching on the array type once.
#[inline]
fn for_each_value(
    array: &dyn Array,
    f: impl FnMut(usize, Option<&[u8]>) -> Result<(), GeostatsError>,
) -> Result<(), GeostatsError> {
    let any = array.as_any();
    if let Some(a) = any.downcast_ref::<BinaryArray>() {
        generic_values(a, f)
    } else if let Some(a) = any.downcast_ref::<LargeBinaryArray>() {
        generic_values(a, f)
    } else if let Some(a) = any.downcast_ref::<BinaryViewArray>() {
        let mut f = f;
        a.iter()
            .enumerate()
            .try_for_each(|(row, value)| f(row, value))
    } else {
        Err(GeostatsError::UnsupportedArray {
            data_type: format!("{:?}", array.data_type()),
        })
    }
}

/// Walks the offsets directly: cheaper than `value(i)` per row.
#[inline]
fn generic_values<O: OffsetSizeTrait>(
    a: &GenericBinaryArray<O>,
    mut f: impl FnMut(usize, Option<&[u8]>) -> Result<(), GeostatsError>,
) -> Result<(), GeostatsError> {
    let data = a.value_data();
    let offsets = a.value_offsets();
    // Offsets of a valid array are in bounds; fall back to an empty slice rather than panic.
    let value = |w: &[O]| {
        data.get(w[0].as_usize()..w[1].as_usize())
            .unwrap_or_default()
    };
    match a.nulls().filter(|n| n.null_count() > 0) {
        None => {
            for (row, w) in offsets.windows(2).enumerate() {
                f(row, Some(value(w)))?;
            }
        }
        Some(nulls) => {
            for ((row, w), valid) in offsets.windows(2).enumerate().zip(nulls.iter()) {
                f(row, valid.then(|| value(w)))?;
            }
        }
    }
    Ok(())
}

/// Per-row output. Validity is packed into u64 words by hand, the cheapest per-row form.
struct ColumnsBuilder {
    min_x: Vec<f64>,
    min_y: Vec<f64>,
    max_x: Vec<f64>,
    max_y: Vec<f64>,
    valid_words: Vec<u64>,
    word: u64,
    null_count: usize,
    srid: Option<(Vec<i32>, BooleanBufferBuilder)>,
}

impl ColumnsBuilder {
    fn new(len: usize) -> Self {
        ColumnsBuilder {
            min_x: Vec::with_capacity(len),
            min_y: Vec::with_capacity(len),
            max_x: Vec::with_capacity(len),
            max_y: Vec::with_capacity(len),
            valid_words: Vec::with_capacity(len.div_ceil(64)),
            word: 0,
            null_count: 0,
            srid: None,
        }
    }

    #[inline(always)]
    fn push(&mut self, row: usize, value: Option<&[u8]>) -> Result<(), GeostatsError> {
        let mut xy = PlanarXY::EMPTY;
        let mut zm = ZMExtent::EMPTY;
        let srid = match value {
            Some(v) => scan_wkb(v, &mut xy, &mut zm).map_err(|e| e.at_row(row))?,
            None => None,
        };
        let has_box = xy.has_box();
        if !has_box {
            // Null slots hold NaN so that a reader ignoring validity still sees "no value".
            xy = PlanarXY {
                min_x: f64::NAN,
                min_y: f64::NAN,
                max_x: f64::NAN,
                max_y: f64::NAN,
            };
            self.null_count += 1;
        }
        self.min_x.push(xy.min_x);
        self.min_y.push(xy.min_y);
        self.max_x.push(xy.max_x);
        self.max_y.push(xy.max_y);
        self.word |= (has_box as u64) << (row & 63);
        if row & 63 == 63 {
            self.valid_words.push(self.word);
            self.word = 0;
        }
        if srid.is_some() || self.srid.is_some() {
            self.push_srid(row, srid);
        }
        Ok(())
    }

    fn push_srid(&mut self, row: usize, srid: Option<i32>) {
        let (values, valid) = self.srid.get_or_insert_with(|| {
            let cap = self.min_x.capacity();
            let mut values = Vec::with_capacity(cap);
            values.resize(row, 0);
            let mut valid = BooleanBufferBuilder::new(cap);
            valid.append_n(row, false);
            (values, valid)
        });
        values.push(srid.unwrap_or(0));
        valid.append(srid.is_some());
    }

    fn finish(mut self) -> BBoxColumns {
        let len = self.min_x.len();
        if !len.is_multiple_of(64) {
            self.valid_words.push(self.word);
        }
        let nulls = (self.null_count > 0).then(|| {
            let bits = BooleanBuffer::new(Buffer::from_vec(self.valid_words), 0, len);
            NullBuffer::new(bits)
        });
        let col = |v: Vec<f64>| Float64Array::new(ScalarBuffer::from(v), nulls.clone());
        BBoxColumns {
            min_x: col(self.min_x),
            min_y: col(self.min_y),
            max_x: col(self.max_x),
            max_y: col(self.max_y),
            srid: self.srid.map(|(values, mut valid)| {
                Int32Array::new(
                    ScalarBuffer::from(values),
                    Some(NullBuffer::new(valid.finish())),
                )
            }),
        }
    }
}
