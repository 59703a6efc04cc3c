//! The order a rewrite writes rows in: the Hilbert key of a geometry column (the default),
//! columns with directions and null orders, Iceberg's z-order, or the input order (bin-pack).
//!
//! The planner and the router work on one `u64` per row, so every order maps rows to a
//! **prefix key** that never decreases along the order: its first 8 order-preserving bytes,
//! big-endian. Cut points fall between prefix keys, so the output files of a partition cover
//! ordered, disjoint ranges of the full order; rows that share a prefix key land in the same
//! sort chunk, which is then sorted by the full order ([`refine`]). For a column sort the prefix
//! is the first column's 8 bytes (the whole value for numbers; a string's first 8 bytes), so
//! file and chunk boundaries follow the first column; for z-order it is the first 64 bits of the
//! interleaved key.
//!
//! The byte encodings are Iceberg Java's `ZOrderByteUtils` (core/src/main/java/org/apache/
//! iceberg/util/ZOrderByteUtils.java) as `SparkZOrderUDF` applies them: every primitive widened
//! to 8 bytes (whole numbers as `i64` with the sign bit flipped, floating point as `f64` with
//! the IEEE trick: negative values have every bit flipped, others the sign bit), booleans as
//! `0x81` / `0x00` in the first byte, strings and binary truncated or zero-padded to 8 bytes
//! (`var-length-contribution`'s default), nulls as 8 zero bytes; then the columns' bits are
//! interleaved most significant first, one bit of each column in turn ([`interleave_bits`]).
//! A geometry column in `zorder(...)` contributes two dimensions, the x and y of each value's
//! bbox centre (on the sphere: the centre of its longitude arc), null or empty values zeros.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Float16Type, Float32Type, Float64Type, Int8Type,
    Int16Type, Int32Type, Int64Type, Time32MillisecondType, Time32SecondType,
    Time64MicrosecondType, Time64NanosecondType, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type,
    UInt32Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch, UInt32Array};
use arrow_ord::sort::{SortColumn as ArrowSortColumn, SortOptions, lexsort_to_indices};
use arrow_schema::{DataType, TimeUnit};
use geoberg_geostats::{bbox_columns, geography_bbox_columns};
use serde::{Deserialize, Serialize};

use crate::RewriteError;
use crate::keys::lon_centre;

/// Bytes every column contributes to a z-order key (`ZOrderByteUtils.PRIMITIVE_BUFFER_SIZE`,
/// and the default `var-length-contribution` of strings and binary).
pub const ZORDER_BYTES_PER_COLUMN: usize = 8;

/// One column of a column sort.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SortColumn {
    /// Column name in the input files.
    pub column: String,
    /// `DESC`.
    pub descending: bool,
    /// `NULLS FIRST`.
    pub nulls_first: bool,
}

/// One term of a z-order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZOrderTerm {
    /// Column name in the input files.
    pub column: String,
    /// A WKB geometry or geography column: two dimensions, its bbox centre's x and y.
    pub geometry: bool,
}

/// How a rewrite orders the rows of each partition.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum RowOrder {
    /// The Hilbert key of the plan's geometry column (`CREATE SPATIAL INDEX`).
    #[default]
    Hilbert,
    /// Columns with directions and null orders (`sort_order => 'c1 DESC, c2'`).
    Columns {
        /// At least one column.
        columns: Vec<SortColumn>,
    },
    /// Iceberg's z-order of the columns (`sort_order => 'zorder(c1, c2)'`).
    ZOrder {
        /// At least one term.
        terms: Vec<ZOrderTerm>,
    },
    /// No sorting: rows keep their input order (files in plan order, rows in file order), as
    /// `strategy => 'binpack'` writes them.
    InputOrder,
}

impl RowOrder {
    /// Whether this is the Hilbert order.
    pub fn is_hilbert(&self) -> bool {
        matches!(self, RowOrder::Hilbert)
    }

    /// The input columns the order reads besides the geometry column (none for Hilbert and
    /// input order).
    pub fn columns(&self) -> Vec<&str> {
        match self {
            RowOrder::Columns { columns } => columns.iter().map(|c| c.column.as_str()).collect(),
            RowOrder::ZOrder { terms } => terms.iter().map(|t| t.column.as_str()).collect(),
            RowOrder::Hilbert | RowOrder::InputOrder => Vec::new(),
        }
    }

    /// Checks the order has terms and no column twice.
    pub(crate) fn validate(&self) -> Result<(), RewriteError> {
        let columns = self.columns();
        let empty = matches!(self, RowOrder::Columns { .. } | RowOrder::ZOrder { .. })
            && columns.is_empty();
        let twice = columns
            .iter()
            .enumerate()
            .find(|(i, c)| columns[..*i].contains(c));
        if empty {
            return Err(RewriteError::InvalidPlan(
                "the sort order has no columns".into(),
            ));
        }
        if let Some((_, c)) = twice {
            return Err(RewriteError::InvalidPlan(format!(
                "the sort order lists column {c} twice"
            )));
        }
        Ok(())
    }
}

/// Bits of the row ordinal in the tie-break sequence (input ordinal in the bits above).
pub(crate) const ROW_BITS: u32 = 40;

/// The key of a row in input order: its input ordinal, then its position in the file.
#[inline]
pub(crate) fn input_order_key(input: u64, row: u64) -> u64 {
    (input << ROW_BITS) | row
}

/// The order-preserving bytes of every value of `array`, `width` bytes each (row `i` at
/// `i * width..`), as Iceberg's `ZOrderByteUtils` encodes them; nulls are zeros. `width` is 8
/// for every type but strings and binary, which are truncated or zero-padded to it.
///
/// ```
/// use arrow_array::Int32Array;
/// use geoberg_rewrite::ordered_bytes;
///
/// let bytes = ordered_bytes(&Int32Array::from(vec![Some(-1), None, Some(1)]), 8, "c")?;
/// assert_eq!(&bytes[..8], &[0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
/// assert_eq!(&bytes[8..16], &[0; 8]);
/// assert_eq!(&bytes[16..], &[0x80, 0, 0, 0, 0, 0, 0, 1]);
/// # Ok::<(), geoberg_rewrite::RewriteError>(())
/// ```
pub fn ordered_bytes(
    array: &dyn Array,
    width: usize,
    column: &str,
) -> Result<Vec<u8>, RewriteError> {
    let n = array.len();
    let mut out = vec![0u8; n * width];
    fn put(out: &mut [u8], width: usize, i: usize, bytes: [u8; 8]) {
        let w = width.min(8);
        out[i * width..i * width + w].copy_from_slice(&bytes[..w]);
    }
    macro_rules! whole {
        ($t:ty) => {{
            let a = array.as_primitive::<$t>();
            for i in (0..n).filter(|&i| a.is_valid(i)) {
                put(&mut out, width, i, whole_number_bytes(a.value(i) as i64));
            }
        }};
    }
    macro_rules! float {
        ($t:ty) => {{
            let a = array.as_primitive::<$t>();
            for i in (0..n).filter(|&i| a.is_valid(i)) {
                put(
                    &mut out,
                    width,
                    i,
                    floating_point_bytes(f64::from(a.value(i))),
                );
            }
        }};
    }
    macro_rules! bytes {
        ($a:expr) => {{
            let a = $a;
            for i in (0..n).filter(|&i| a.is_valid(i)) {
                let v: &[u8] = a.value(i).as_ref();
                let w = v.len().min(width);
                out[i * width..i * width + w].copy_from_slice(&v[..w]);
            }
        }};
    }
    match array.data_type() {
        DataType::Int8 => whole!(Int8Type),
        DataType::Int16 => whole!(Int16Type),
        DataType::Int32 => whole!(Int32Type),
        DataType::Int64 => whole!(Int64Type),
        DataType::UInt8 => whole!(UInt8Type),
        DataType::UInt16 => whole!(UInt16Type),
        DataType::UInt32 => whole!(UInt32Type),
        DataType::Date32 => whole!(Date32Type),
        DataType::Date64 => whole!(Date64Type),
        DataType::Time32(TimeUnit::Second) => whole!(Time32SecondType),
        DataType::Time32(TimeUnit::Millisecond) => whole!(Time32MillisecondType),
        DataType::Time64(TimeUnit::Microsecond) => whole!(Time64MicrosecondType),
        DataType::Time64(TimeUnit::Nanosecond) => whole!(Time64NanosecondType),
        DataType::Timestamp(TimeUnit::Second, _) => whole!(TimestampSecondType),
        DataType::Timestamp(TimeUnit::Millisecond, _) => whole!(TimestampMillisecondType),
        DataType::Timestamp(TimeUnit::Microsecond, _) => whole!(TimestampMicrosecondType),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => whole!(TimestampNanosecondType),
        DataType::Float16 => {
            let a = array.as_primitive::<Float16Type>();
            for i in (0..n).filter(|&i| a.is_valid(i)) {
                put(
                    &mut out,
                    width,
                    i,
                    floating_point_bytes(a.value(i).to_f64()),
                );
            }
        }
        DataType::Float32 => float!(Float32Type),
        DataType::Float64 => float!(Float64Type),
        DataType::Decimal128(..) => {
            // Not in Iceberg's z-order; the top 64 bits of the sign-flipped unscaled value keep
            // the order of decimals of one scale.
            let a = array.as_primitive::<Decimal128Type>();
            for i in (0..n).filter(|&i| a.is_valid(i)) {
                let v = (a.value(i) as u128) ^ (1u128 << 127);
                put(&mut out, width, i, ((v >> 64) as u64).to_be_bytes());
            }
        }
        DataType::Boolean => {
            let a = array.as_boolean();
            for i in (0..n).filter(|&i| a.is_valid(i) && a.value(i)) {
                // SparkZOrderUDF's BOOLEAN-LEXICAL-BYTES: (byte) -127 for true.
                out[i * width] = 0x81;
            }
        }
        DataType::Utf8 => bytes!(array.as_string::<i32>()),
        DataType::LargeUtf8 => bytes!(array.as_string::<i64>()),
        DataType::Utf8View => bytes!(array.as_string_view()),
        DataType::Binary => bytes!(array.as_binary::<i32>()),
        DataType::LargeBinary => bytes!(array.as_binary::<i64>()),
        DataType::BinaryView => bytes!(array.as_binary_view()),
        DataType::FixedSizeBinary(_) => bytes!(array.as_fixed_size_binary()),
        other => {
            return Err(RewriteError::UnsortableColumn {
                column: column.to_string(),
                data_type: other.to_string(),
            });
        }
    }
    Ok(out)
}

/// `ZOrderByteUtils.wholeNumberOrderedBytes`: the sign bit flipped, big-endian.
#[inline]
fn whole_number_bytes(v: i64) -> [u8; 8] {
    ((v as u64) ^ (1u64 << 63)).to_be_bytes()
}

/// `ZOrderByteUtils.floatingPointOrderedBytes`: IEEE 754 doubles ordered as sign-magnitude
/// integers (`lval ^= (lval >> 63) | Long.MIN_VALUE`), big-endian. This is `f64::total_cmp`'s
/// order, which is also how Arrow sorts floats.
#[inline]
fn floating_point_bytes(v: f64) -> [u8; 8] {
    let bits = v.to_bits() as i64;
    ((bits ^ ((bits >> 63) | i64::MIN)) as u64).to_be_bytes()
}

/// `ZOrderByteUtils.interleaveBits`: `size` bytes of the columns' bits, most significant
/// first, one bit of each column in turn; a column with no bits left at a position is
/// skipped. Every row must give each column the same number of bytes for keys to compare.
///
/// ```
/// use geoberg_rewrite::interleave_bits;
/// assert_eq!(interleave_bits(&[&[0xff], &[0x00]], 2), vec![0xaa, 0xaa]);
/// ```
pub fn interleave_bits(columns: &[&[u8]], size: usize) -> Vec<u8> {
    let mut out = vec![0u8; size];
    let longest = columns.iter().map(|c| c.len()).max().unwrap_or(0);
    let mut bit_out = 0usize;
    'outer: for byte in 0..longest {
        for bit in (0..8).rev() {
            for c in columns.iter().filter(|c| c.len() > byte) {
                if bit_out == size * 8 {
                    break 'outer;
                }
                if c[byte] >> bit & 1 == 1 {
                    out[bit_out / 8] |= 0x80 >> (bit_out % 8);
                }
                bit_out += 1;
            }
        }
    }
    out
}

/// The z-order keys of a batch: per row, the interleaved ordered bytes of the terms (a
/// geometry term as its bbox centre's x and y), `key_bytes` bytes each (row `i` at
/// `i * key_bytes..`).
pub(crate) fn zorder_keys(
    terms: &[(&ZOrderTerm, &dyn Array, bool)],
) -> Result<(Vec<u8>, usize), RewriteError> {
    let w = ZORDER_BYTES_PER_COLUMN;
    let n = terms.first().map_or(0, |t| t.1.len());
    let mut dims: Vec<Vec<u8>> = Vec::new();
    for (term, array, sphere) in terms {
        if term.geometry {
            let (xs, ys) = bbox_centres(*array, &term.column, *sphere)?;
            for v in [xs, ys] {
                let mut d = vec![0u8; n * w];
                for (i, c) in v.iter().enumerate() {
                    if let Some(c) = c {
                        d[i * w..(i + 1) * w].copy_from_slice(&floating_point_bytes(*c));
                    }
                }
                dims.push(d);
            }
        } else {
            dims.push(ordered_bytes(*array, w, &term.column)?);
        }
    }
    let key_bytes = dims.len() * w;
    let mut keys = Vec::with_capacity(n * key_bytes);
    let mut row: Vec<&[u8]> = Vec::with_capacity(dims.len());
    for i in 0..n {
        row.clear();
        row.extend(dims.iter().map(|d| &d[i * w..(i + 1) * w]));
        keys.extend(interleave_bits(&row, key_bytes));
    }
    Ok((keys, key_bytes))
}

/// Per row, an x or a y (None for null and empty geometries).
type Coordinates = Vec<Option<f64>>;

/// The bbox centre of each WKB value (None for null and empty ones).
fn bbox_centres(
    array: &dyn Array,
    column: &str,
    sphere: bool,
) -> Result<(Coordinates, Coordinates), RewriteError> {
    let boxes = if sphere {
        geography_bbox_columns(array)
    } else {
        bbox_columns(array)
    }
    .map_err(|source| RewriteError::Geometry {
        column: column.to_string(),
        path: String::new(),
        source,
    })?;
    let (mut xs, mut ys) = (
        Vec::with_capacity(array.len()),
        Vec::with_capacity(array.len()),
    );
    for i in 0..array.len() {
        if boxes.min_x.is_valid(i) {
            xs.push(Some(lon_centre(
                boxes.min_x.value(i),
                boxes.max_x.value(i),
                sphere,
            )));
            ys.push(Some(
                boxes.min_y.value(i) * 0.5 + boxes.max_y.value(i) * 0.5,
            ));
        } else {
            xs.push(None);
            ys.push(None);
        }
    }
    Ok((xs, ys))
}

/// Where the columns an order reads sit in a batch, with whether each geometry term is on the
/// sphere.
pub(crate) struct BoundOrder<'a> {
    order: &'a RowOrder,
    /// Batch column index of each column of [`RowOrder::columns`].
    indices: Vec<usize>,
    /// Per column: a geography column (keyed on the sphere).
    sphere: Vec<bool>,
}

impl<'a> BoundOrder<'a> {
    /// Finds the order's columns in `schema` by name.
    pub fn bind(
        order: &'a RowOrder,
        schema: &arrow_schema::Schema,
        geography: &[String],
        path: &str,
    ) -> Result<Self, RewriteError> {
        let mut indices = Vec::new();
        let mut sphere = Vec::new();
        for c in order.columns() {
            let i = schema
                .index_of(c)
                .map_err(|_| RewriteError::MissingSortColumn {
                    path: path.to_string(),
                    column: c.to_string(),
                })?;
            indices.push(i);
            sphere.push(geography.iter().any(|g| g == c));
        }
        Ok(BoundOrder {
            order,
            indices,
            sphere,
        })
    }

    /// Root column indices of the batch the order reads.
    pub fn indices(&self) -> &[usize] {
        &self.indices
    }

    /// Prefix keys (see the module docs) of the rows of `batch`: a whole input batch, or with
    /// `projected` one read with only [`BoundOrder::indices`] (which holds them in file order).
    /// `input` and `row0` place the rows for the input order.
    pub fn prefix_keys(
        &self,
        batch: &RecordBatch,
        projected: bool,
        input: u64,
        row0: u64,
    ) -> Result<Vec<u64>, RewriteError> {
        let n = batch.num_rows();
        let column = |k: usize| -> &ArrayRef {
            let i = self.indices[k];
            batch.column(if projected {
                self.indices.iter().filter(|&&j| j < i).count()
            } else {
                i
            })
        };
        match self.order {
            RowOrder::Hilbert => Err(RewriteError::InvalidPlan(
                "Hilbert keys come from the geometry column".into(),
            )),
            RowOrder::InputOrder => Ok((0..n as u64)
                .map(|i| input_order_key(input, row0 + i))
                .collect()),
            RowOrder::Columns { columns } => {
                let first = &columns[0];
                let array = column(0);
                let bytes = ordered_bytes(array.as_ref(), 8, &first.column)?;
                Ok((0..n)
                    .map(|i| {
                        if array.is_null(i) {
                            return if first.nulls_first { 0 } else { u64::MAX };
                        }
                        let mut b = [0u8; 8];
                        b.copy_from_slice(&bytes[i * 8..(i + 1) * 8]);
                        let k = u64::from_be_bytes(b);
                        if first.descending { !k } else { k }
                    })
                    .collect())
            }
            RowOrder::ZOrder { terms } => {
                let bound: Vec<(&ZOrderTerm, &dyn Array, bool)> = terms
                    .iter()
                    .enumerate()
                    .map(|(k, t)| (t, column(k).as_ref(), self.sphere[k]))
                    .collect();
                let (keys, width) = zorder_keys(&bound)?;
                Ok((0..n)
                    .map(|i| {
                        let mut b = [0u8; 8];
                        let take = width.min(8);
                        b[..take].copy_from_slice(&keys[i * width..i * width + take]);
                        u64::from_be_bytes(b)
                    })
                    .collect())
            }
        }
    }

    /// Whether rows sharing a prefix key still need ordering by [`BoundOrder::refine`].
    pub fn needs_refine(&self) -> bool {
        matches!(
            self.order,
            RowOrder::Columns { .. } | RowOrder::ZOrder { .. }
        )
    }

    /// The permutation that sorts `batch` (rows already in prefix-key order, ties in input
    /// order) by the full order; ties keep their position, so the sort is stable.
    pub fn refine(&self, batch: &RecordBatch) -> Result<UInt32Array, RewriteError> {
        let n = batch.num_rows();
        let positions: ArrayRef = Arc::new(UInt32Array::from_iter_values(0..n as u32));
        match self.order {
            RowOrder::Columns { columns } => {
                let mut sort: Vec<ArrowSortColumn> = columns
                    .iter()
                    .zip(&self.indices)
                    .map(|(c, &i)| ArrowSortColumn {
                        values: batch.column(i).clone(),
                        options: Some(SortOptions {
                            descending: c.descending,
                            nulls_first: c.nulls_first,
                        }),
                    })
                    .collect();
                // The position makes every row distinct: the unstable lexsort is then stable.
                sort.push(ArrowSortColumn {
                    values: positions,
                    options: None,
                });
                lexsort_to_indices(&sort, None)
                    .map_err(|e| RewriteError::arrow("sorting rows by the sort order", e))
            }
            RowOrder::ZOrder { terms } => {
                let bound: Vec<(&ZOrderTerm, &dyn Array, bool)> = terms
                    .iter()
                    .enumerate()
                    .map(|(k, t)| (t, batch.column(self.indices[k]).as_ref(), self.sphere[k]))
                    .collect();
                let (keys, width) = zorder_keys(&bound)?;
                let mut order: Vec<u32> = (0..n as u32).collect();
                // Stable: equal z-values keep their input order.
                order.sort_by(|&a, &b| {
                    let (a, b) = (a as usize, b as usize);
                    keys[a * width..(a + 1) * width].cmp(&keys[b * width..(b + 1) * width])
                });
                Ok(UInt32Array::from(order))
            }
            RowOrder::Hilbert | RowOrder::InputOrder => {
                Ok(UInt32Array::from_iter_values(0..n as u32))
            }
        }
    }
}

/// The permutation that orders `batch` by `order` (stable: ties keep their position), for
/// writers that sort each file they write (an append under `write.sort-order`, Spark's
/// `sortWithinPartitions`). `geography` names the columns whose z-order terms are centred on
/// the sphere. Input order and Hilbert give the identity (a Hilbert order needs a curve: the
/// rewrite's path).
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{Int64Array, RecordBatch};
/// use arrow_schema::{DataType, Field, Schema};
/// use geoberg_rewrite::{RowOrder, SortColumn, sort_indices};
///
/// let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Int64, true)]));
/// let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![
///     Some(3), None, Some(1),
/// ]))])?;
/// let order = RowOrder::Columns {
///     columns: vec![SortColumn { column: "v".into(), descending: false, nulls_first: true }],
/// };
/// assert_eq!(sort_indices(&batch, &order, &[])?.values(), &[1, 2, 0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn sort_indices(
    batch: &RecordBatch,
    order: &RowOrder,
    geography: &[String],
) -> Result<UInt32Array, RewriteError> {
    order.validate()?;
    BoundOrder::bind(order, &batch.schema(), geography, "the batch")?.refine(batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_bytes_follow_total_cmp() {
        let values = [
            f64::NEG_INFINITY,
            -1e300,
            -1.0,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            1.0,
            f64::INFINITY,
            f64::NAN,
        ];
        for w in values.windows(2) {
            assert_eq!(
                floating_point_bytes(w[0]).cmp(&floating_point_bytes(w[1])),
                w[0].total_cmp(&w[1]),
                "{} vs {}",
                w[0],
                w[1]
            );
        }
    }
}
