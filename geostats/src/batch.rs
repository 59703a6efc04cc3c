//! Bounding boxes of whole Arrow WKB columns: the per-row kernel a writer runs once per batch.
//!
//! Rows go 64 at a time (one validity word). A block of 64 back-to-back 21-byte little-endian XY
//! POINTs, the common case for point data, is decoded without per-row offsets, bounds checks or
//! branches; in any other block, such points are decoded row by row and every other value goes
//! through the out-of-line scanner of `wkb_scan`. Output is appended to plain `Vec`s (no zeroing
//! pass) that [`BBoxColumnsBuilder`] can reuse from batch to batch.

use arrow_array::{
    Array, BinaryArray, BinaryViewArray, Float64Array, GenericBinaryArray, Int32Array,
    LargeBinaryArray, OffsetSizeTrait,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, ScalarBuffer};

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
/// Fails on the first value that is not valid WKB, naming its row and byte offset. A writer that
/// computes columns batch after batch can keep a [`BBoxColumnsBuilder`] to reuse the buffers.
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
    BBoxColumnsBuilder::new().build(array)
}

/// [`bbox_columns`] with output buffers that are reused from batch to batch.
///
/// Keep one per geometry column, call [`build`](Self::build) per batch and, once the batch is
/// written, hand the columns back with [`recycle`](Self::recycle): their buffers (those no longer
/// shared elsewhere) then hold the next batch's output without a fresh allocation. Results are
/// identical to [`bbox_columns`].
///
/// ```
/// use arrow_array::BinaryArray;
/// use geoberg_geostats::{BBoxColumnsBuilder, bbox_columns};
/// let mut point = vec![1, 1, 0, 0, 0];
/// point.extend(3f64.to_le_bytes());
/// point.extend(4f64.to_le_bytes());
/// let batch = BinaryArray::from(vec![Some(&point[..]), None]);
///
/// let mut builder = BBoxColumnsBuilder::new();
/// for _ in 0..3 {
///     let cols = builder.build(&batch).unwrap();
///     assert_eq!(cols, bbox_columns(&batch).unwrap());
///     builder.recycle(cols);
/// }
/// ```
#[derive(Debug, Default)]
pub struct BBoxColumnsBuilder {
    min_x: Vec<f64>,
    min_y: Vec<f64>,
    max_x: Vec<f64>,
    max_y: Vec<f64>,
    valid: Vec<u64>,
}

impl BBoxColumnsBuilder {
    /// A builder without buffers; the first [`build`](Self::build) allocates them.
    pub fn new() -> Self {
        Self::default()
    }

    /// Computes [`BBoxColumns`] for a `Binary`, `LargeBinary` or `BinaryView` column of WKB, as
    /// [`bbox_columns`] does, into this builder's buffers. After an error the builder stays
    /// usable.
    pub fn build(&mut self, array: &dyn Array) -> Result<BBoxColumns, GeostatsError> {
        let n = array.len();
        let mut bufs = [
            std::mem::take(&mut self.min_x),
            std::mem::take(&mut self.min_y),
            std::mem::take(&mut self.max_x),
            std::mem::take(&mut self.max_y),
        ];
        // The kernel appends; reused buffers only need to be emptied.
        for b in &mut bufs {
            b.clear();
            b.reserve(n);
        }
        let mut valid = std::mem::take(&mut self.valid);
        valid.clear();
        valid.reserve(n.div_ceil(BLOCK));
        let [min_x, min_y, max_x, max_y] = &mut bufs;
        let out = Out {
            min_x,
            min_y,
            max_x,
            max_y,
            valid: &mut valid,
        };
        let srid = match fill(array, out) {
            Ok(srid) => srid,
            Err(e) => {
                self.put_back(bufs, valid);
                return Err(e);
            }
        };
        let set: usize = valid.iter().map(|w| w.count_ones() as usize).sum();
        let nulls = if set == n {
            self.valid = valid;
            None
        } else {
            let bits = BooleanBuffer::new(Buffer::from_vec(valid), 0, n);
            Some(NullBuffer::new(bits))
        };
        let [min_x, min_y, max_x, max_y] =
            bufs.map(|v| Float64Array::new(ScalarBuffer::from(v), nulls.clone()));
        Ok(BBoxColumns {
            min_x,
            min_y,
            max_x,
            max_y,
            srid: srid.map(|(values, bits)| {
                let bits = BooleanBuffer::new(Buffer::from_vec(bits), 0, n);
                Int32Array::new(ScalarBuffer::from(values), Some(NullBuffer::new(bits)))
            }),
        })
    }

    /// Takes back the buffers of columns returned by [`build`](Self::build) for the next batch.
    ///
    /// Buffers still referenced elsewhere (a clone of an array, a record batch not yet dropped)
    /// are left alone; the next `build` then allocates in their place.
    pub fn recycle(&mut self, columns: BBoxColumns) {
        let BBoxColumns {
            min_x,
            min_y,
            max_x,
            max_y,
            srid: _,
        } = columns;
        let mut nulls = None;
        let bufs = [min_x, min_y, max_x, max_y].map(|c| {
            let (_, values, n) = c.into_parts();
            nulls = n;
            values.into_inner().into_vec::<f64>().unwrap_or_default()
        });
        let valid = nulls
            .and_then(|n| n.into_inner().into_inner().into_vec::<u64>().ok())
            .unwrap_or_default();
        self.put_back(bufs, valid);
    }

    /// Keeps the given buffers unless the builder already holds larger ones.
    fn put_back(&mut self, bufs: [Vec<f64>; 4], valid: Vec<u64>) {
        let [a, b, c, d] = bufs;
        for (slot, v) in [
            (&mut self.min_x, a),
            (&mut self.min_y, b),
            (&mut self.max_x, c),
            (&mut self.max_y, d),
        ] {
            if v.capacity() > slot.capacity() {
                *slot = v;
            }
        }
        if valid.capacity() > self.valid.capacity() {
            self.valid = valid;
        }
    }
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

/// The kernel's output, appended to: one slot per row in each column, one validity bit per row.
struct Out<'a> {
    min_x: &'a mut Vec<f64>,
    min_y: &'a mut Vec<f64>,
    max_x: &'a mut Vec<f64>,
    max_y: &'a mut Vec<f64>,
    valid: &'a mut Vec<u64>,
}

/// SRID values and validity words, created at the first value that carries one.
type Srids = Option<(Vec<i32>, Vec<u64>)>;

/// Rows per block: one validity word.
const BLOCK: usize = 64;

/// Fills `out` (sized to the array) row for row and returns the SRID column, if any row had one.
fn fill(array: &dyn Array, out: Out<'_>) -> Result<Srids, GeostatsError> {
    let any = array.as_any();
    let nulls = array.nulls().filter(|n| n.null_count() > 0);
    if let Some(a) = any.downcast_ref::<BinaryArray>() {
        fill_rows(&Offsets::new(a), a.len(), nulls, out)
    } else if let Some(a) = any.downcast_ref::<LargeBinaryArray>() {
        fill_rows(&Offsets::new(a), a.len(), nulls, out)
    } else if let Some(a) = any.downcast_ref::<BinaryViewArray>() {
        fill_rows(a, a.len(), nulls, out)
    } else {
        Err(GeostatsError::UnsupportedArray {
            data_type: format!("{:?}", array.data_type()),
        })
    }
}

/// Row access for the kernel.
trait Values {
    /// The bytes of `row` (anything, possibly empty, for a null row).
    fn value(&self, row: usize) -> &[u8];

    /// Whether rows `base..base + 64` are all 21-byte little-endian XY POINTs without NaN, and
    /// then their x and y in `xs`/`ys`. `false` may leave anything in `xs`/`ys`.
    fn uniform_points(&self, base: usize, xs: &mut [f64; BLOCK], ys: &mut [f64; BLOCK]) -> bool;
}

/// `Binary` / `LargeBinary`: the offsets, trimmed to `len + 1`, and the value bytes.
struct Offsets<'a, O> {
    offsets: &'a [O],
    data: &'a [u8],
}

impl<'a, O: OffsetSizeTrait> Offsets<'a, O> {
    fn new(a: &'a GenericBinaryArray<O>) -> Self {
        Offsets {
            offsets: &a.value_offsets()[..a.len() + 1],
            data: a.value_data(),
        }
    }
}

impl<O: OffsetSizeTrait> Values for Offsets<'_, O> {
    #[inline(always)]
    fn value(&self, row: usize) -> &[u8] {
        // Offsets of a valid array are in bounds; fall back to an empty slice rather than panic.
        let (start, end) = (
            self.offsets[row].as_usize(),
            self.offsets[row + 1].as_usize(),
        );
        self.data.get(start..end).unwrap_or_default()
    }

    /// The common case of point data: when the 64 values are 21 bytes each, back to back, all
    /// headers and NaNs are checked at once, with no per-row offsets, bounds checks or branches.
    #[inline(always)]
    fn uniform_points(&self, base: usize, xs: &mut [f64; BLOCK], ys: &mut [f64; BLOCK]) -> bool {
        let Some(offsets) = self
            .offsets
            .get(base..base + BLOCK + 1)
            .and_then(|o| <&[O; BLOCK + 1]>::try_from(o).ok())
        else {
            return false;
        };
        let start = offsets[0].as_usize();
        // An OR of differences rather than `all(==)`: LLVM vectorizes it.
        let (mut off_stride, mut expected) = (0, start);
        for o in offsets {
            off_stride |= o.as_usize() ^ expected;
            expected = expected.wrapping_add(21);
        }
        if off_stride != 0 {
            return false;
        }
        let Some(run) = self.data.get(start..start.wrapping_add(21 * BLOCK)) else {
            return false;
        };
        let (records, _) = run.as_chunks::<21>();
        let mut headers = 0;
        for ((r, x), y) in records.iter().zip(xs.iter_mut()).zip(ys.iter_mut()) {
            headers |= (word(r, 0) & 0xff_ffff_ffff) ^ 0x00_0000_0101;
            (*x, *y) = (f64::from_bits(word(r, 5)), f64::from_bits(word(r, 13)));
        }
        let nan = xs
            .iter()
            .zip(ys.iter())
            .fold(false, |nan, (x, y)| nan | x.is_nan() | y.is_nan());
        headers == 0 && !nan && records.len() == BLOCK
    }
}

impl Values for BinaryViewArray {
    #[inline(always)]
    fn value(&self, row: usize) -> &[u8] {
        BinaryViewArray::value(self, row)
    }

    fn uniform_points(&self, _: usize, _: &mut [f64; BLOCK], _: &mut [f64; BLOCK]) -> bool {
        false
    }
}

/// The little-endian `u64` at byte `at` of a 21-byte record.
#[inline(always)]
fn word(b: &[u8; 21], at: usize) -> u64 {
    let mut a = [0; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// x and y of a 21-byte little-endian XY POINT without NaN.
#[inline(always)]
fn le_point(v: &[u8]) -> Option<(f64, f64)> {
    let b = <&[u8; 21]>::try_from(v).ok()?;
    let (x, y) = (f64::from_bits(word(b, 5)), f64::from_bits(word(b, 13)));
    (word(b, 0) & 0xff_ffff_ffff == 0x00_0000_0101 && !(x.is_nan() | y.is_nan())).then_some((x, y))
}

/// The row loop, 64 rows (one validity word) per block, through four scratch columns that are
/// then appended to the output. A block of clean points takes [`Values::uniform_points`]; any
/// other block goes row by row: null rows NaN, clean points inline, everything else (points with
/// a NaN axis included) through the out-of-line scanner.
fn fill_rows(
    values: &impl Values,
    n: usize,
    nulls: Option<&NullBuffer>,
    out: Out<'_>,
) -> Result<Srids, GeostatsError> {
    let Out {
        min_x,
        min_y,
        max_x,
        max_y,
        valid,
    } = out;
    let chunks = nulls.map(|n| n.inner().bit_chunks());
    let mut present = chunks.as_ref().map(|c| c.iter_padded());
    let mut srids: Srids = None;
    let mut scratch = [[0.0; BLOCK]; 4];
    let mut b = [0.0; 4];
    for base in (0..n).step_by(BLOCK) {
        let len = (n - base).min(BLOCK);
        let present = present.as_mut().and_then(Iterator::next).unwrap_or(!0);
        let [sx0, sy0, sx1, sy1] = &mut scratch;
        if len == BLOCK && present == !0 && values.uniform_points(base, sx0, sy0) {
            min_x.extend_from_slice(sx0);
            min_y.extend_from_slice(sy0);
            max_x.extend_from_slice(sx0);
            max_y.extend_from_slice(sy0);
            valid.push(!0);
            continue;
        }
        let mut bits = 0;
        for i in 0..len {
            let row = base + i;
            let v = values.value(row);
            let ok = if present >> i & 1 == 0 {
                b = [f64::NAN; 4];
                false
            } else if let Some((x, y)) = le_point(v) {
                b = [x, y, x, y];
                true
            } else {
                general(v, row, n, &mut srids, &mut b)?
            };
            [sx0[i], sy0[i], sx1[i], sy1[i]] = b;
            bits |= (ok as u64) << i;
        }
        min_x.extend_from_slice(&sx0[..len]);
        min_y.extend_from_slice(&sy0[..len]);
        max_x.extend_from_slice(&sx1[..len]);
        max_y.extend_from_slice(&sy1[..len]);
        valid.push(bits);
    }
    Ok(srids)
}

/// Any other value: the full scanner into `b` (`[min_x, min_y, max_x, max_y]`, NaN when there
/// is no box), plus the SRID column when the value carries one. Returns whether there is a box.
///
/// The box goes through `b` rather than the return value: a returned `([f64; 4], bool)` inside
/// a `Result` was read back with loads that straddle the callee's stores (a store-forwarding
/// stall per row, about a tenth of the polygon time).
#[inline(never)]
fn general(
    v: &[u8],
    row: usize,
    n: usize,
    srids: &mut Srids,
    b: &mut [f64; 4],
) -> Result<bool, GeostatsError> {
    let mut xy = PlanarXY::EMPTY;
    let mut zm = ZMExtent::EMPTY;
    let srid = scan_wkb(v, &mut xy, &mut zm).map_err(|e| e.at_row(row))?;
    if let Some(srid) = srid {
        let (values, bits) = srids.get_or_insert_with(|| (vec![0; n], vec![0; n.div_ceil(64)]));
        values[row] = srid;
        bits[row / 64] |= 1 << (row % 64);
    }
    let ok = xy.has_box();
    *b = if ok {
        [xy.min_x, xy.min_y, xy.max_x, xy.max_y]
    } else {
        [f64::NAN; 4]
    };
    Ok(ok)
}
