//! A zero-copy WKB walker that feeds coordinates to an extent and returns the EWKB SRID.
//!
//! Hand-written because it is several times faster than parsing with the `wkb` crate (see the
//! geostats section of `BENCHMARKS.md`): no allocation, every coordinate read is an unaligned
//! load from a fixed-size chunk, the byte order is resolved once per coordinate run, and the XY
//! loop keeps two accumulators so that LLVM packs x and y into one SIMD min and one SIMD max.
//!
//! Untrusted input: every field is read through a checked slice, counts are checked against the
//! bytes that remain before anything is walked, nesting is limited, and trailing bytes are an
//! error. Nothing here panics or allocates.

use crate::error::GeostatsError;
use crate::extent::{XYSink, ZMExtent};

/// Deepest nesting of collections accepted (a Point inside a MultiPoint is depth 1).
pub const MAX_NESTING_DEPTH: usize = 32;

const POINT: u32 = 1;
const LINE_STRING: u32 = 2;
const POLYGON: u32 = 3;
const MULTI_POINT: u32 = 4;
const MULTI_LINE_STRING: u32 = 5;
const MULTI_POLYGON: u32 = 6;
const GEOMETRY_COLLECTION: u32 = 7;

const EWKB_Z: u32 = 0x8000_0000;
const EWKB_M: u32 = 0x4000_0000;
const EWKB_SRID: u32 = 0x2000_0000;
const EWKB_FLAGS: u32 = EWKB_Z | EWKB_M | EWKB_SRID;

/// Smallest encoding of any geometry: a header plus a zero count.
const MIN_GEOMETRY_BYTES: u64 = 9;

/// ISO/OGC names of the curve and surface types (codes 8..=17), which Iceberg and Parquet WKB do
/// not allow.
fn curve_type_name(kind: u32) -> Option<&'static str> {
    Some(match kind {
        8 => "CircularString",
        9 => "CompoundCurve",
        10 => "CurvePolygon",
        11 => "MultiCurve",
        12 => "MultiSurface",
        13 => "Curve",
        14 => "Surface",
        15 => "PolyhedralSurface",
        16 => "TIN",
        17 => "Triangle",
        _ => return None,
    })
}

fn type_name(kind: u32) -> &'static str {
    match kind {
        POINT => "Point",
        LINE_STRING => "LineString",
        POLYGON => "Polygon",
        MULTI_POINT => "MultiPoint",
        MULTI_LINE_STRING => "MultiLineString",
        MULTI_POLYGON => "MultiPolygon",
        _ => "GeometryCollection",
    }
}

/// Which optional dimensions a geometry has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dims {
    pub(crate) z: bool,
    pub(crate) m: bool,
}

/// What a run of coordinates is part of: the spherical bounder joins the vertices of a line or
/// ring by edges, and closes rings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// One point (of a Point or MultiPoint).
    Point,
    /// The vertices of a LineString.
    Line,
    /// The vertices of one polygon ring.
    Ring,
}

impl Dims {
    pub(crate) fn coord_bytes(self) -> usize {
        8 * (2 + self.z as usize + self.m as usize)
    }

    fn name(self) -> &'static str {
        match (self.z, self.m) {
            (false, false) => "XY",
            (true, false) => "XYZ",
            (false, true) => "XYM",
            (true, true) => "XYZM",
        }
    }
}

struct Header {
    big_endian: bool,
    kind: u32,
    dims: Dims,
    srid: Option<i32>,
}

/// Where the scanner sends coordinates: a planar extent takes them in any order; the spherical
/// bounder needs to know which vertices are joined by edges and which rings form a polygon.
pub(crate) trait CoordSink {
    /// One XY point of a fast path (21- or 25-byte point).
    fn add_point(&mut self, x: f64, y: f64);
    /// A run of coordinates (`s.len()` a multiple of the coordinate size) of one part.
    fn run(&mut self, s: &[u8], be: bool, dims: Dims, part: Part, zm: &mut ZMExtent);
    /// The rings that follow form one polygon.
    fn begin_polygon(&mut self) {}
    /// The polygon's rings are done.
    fn end_polygon(&mut self) {}
}

impl<S: XYSink> CoordSink for S {
    #[inline(always)]
    fn add_point(&mut self, x: f64, y: f64) {
        self.add_xy(x, y);
    }

    #[inline(always)]
    fn run(&mut self, s: &[u8], be: bool, dims: Dims, _: Part, zm: &mut ZMExtent) {
        coords(s, be, dims, self, zm);
    }
}

/// Computes the extent of one WKB value into `xy`/`zm` and returns its EWKB SRID.
///
/// The caller passes fresh or running extents; on error they may hold part of the value.
#[inline(always)]
pub(crate) fn scan_wkb<S: CoordSink>(
    buf: &[u8],
    xy: &mut S,
    zm: &mut ZMExtent,
) -> Result<Option<i32>, GeostatsError> {
    // Points are the common case: exact headers skip the general walk (1.7x on points).
    if let Ok(b) = <&[u8; 21]>::try_from(buf) {
        if b[..5] == [1, 1, 0, 0, 0] {
            xy.add_point(f64_at::<false>(b, 5), f64_at::<false>(b, 13));
            return Ok(None);
        }
        if b[..5] == [0, 0, 0, 0, 1] {
            xy.add_point(f64_at::<true>(b, 5), f64_at::<true>(b, 13));
            return Ok(None);
        }
    } else if let Ok(b) = <&[u8; 25]>::try_from(buf)
        && b[..5] == [1, 1, 0, 0, 0x20]
    {
        // Little-endian EWKB POINT with SRID, as PostGIS writes it.
        let srid = i32::from_le_bytes([b[5], b[6], b[7], b[8]]);
        xy.add_point(f64_at::<false>(b, 9), f64_at::<false>(b, 17));
        return Ok(Some(srid));
    }
    scan_general(buf, xy, zm)
}

/// Everything but the point fast paths; kept out of line so the fast paths inline into loops.
#[inline(never)]
fn scan_general<S: CoordSink>(
    buf: &[u8],
    xy: &mut S,
    zm: &mut ZMExtent,
) -> Result<Option<i32>, GeostatsError> {
    let mut pos = 0;
    let header = geometry(buf, &mut pos, 0, None, xy, zm)?;
    if pos != buf.len() {
        return Err(GeostatsError::TrailingBytes {
            offset: pos,
            trailing: buf.len() - pos,
        });
    }
    Ok(header.srid)
}

#[inline(always)]
fn take<'a>(buf: &'a [u8], pos: &mut usize, n: usize) -> Result<&'a [u8], GeostatsError> {
    let start = *pos;
    match buf.get(start..).and_then(|rest| rest.get(..n)) {
        Some(s) => {
            *pos = start + n;
            Ok(s)
        }
        None => Err(GeostatsError::Truncated {
            offset: start,
            needed: n,
            available: buf.len().saturating_sub(start),
        }),
    }
}

#[inline(always)]
fn read_u32(buf: &[u8], pos: &mut usize, big_endian: bool) -> Result<u32, GeostatsError> {
    let b: [u8; 4] = take(buf, pos, 4)?.try_into().unwrap();
    Ok(if big_endian {
        u32::from_be_bytes(b)
    } else {
        u32::from_le_bytes(b)
    })
}

/// Reads a count and checks that `count * min_element_bytes` bytes remain after it.
#[inline(always)]
fn read_count(
    buf: &[u8],
    pos: &mut usize,
    big_endian: bool,
    min_element_bytes: u64,
) -> Result<usize, GeostatsError> {
    let offset = *pos;
    let count = read_u32(buf, pos, big_endian)?;
    let needed = u64::from(count) * min_element_bytes;
    let available = buf.len() - *pos;
    if needed > available as u64 {
        return Err(GeostatsError::CountTooLarge {
            offset,
            count,
            needed,
            available,
        });
    }
    // Fits in usize: it is at most the buffer length.
    Ok(count as usize)
}

/// The ISO WKB type code of a value's outermost geometry (`kind + 1000` for Z, `+ 2000` for M,
/// `+ 3000` for ZM), whatever its encoding (ISO or EWKB flags): what Parquet's
/// `geospatial_types` statistic lists.
pub(crate) fn iso_type_code(buf: &[u8]) -> Result<i32, GeostatsError> {
    let h = header(buf, &mut 0)?;
    let dims = u32::from(h.dims.z) + 2 * u32::from(h.dims.m);
    Ok((h.kind + 1000 * dims) as i32)
}

fn header(buf: &[u8], pos: &mut usize) -> Result<Header, GeostatsError> {
    let start = *pos;
    let big_endian = match take(buf, pos, 1)?[0] {
        0 => true,
        1 => false,
        value => {
            return Err(GeostatsError::InvalidByteOrder {
                offset: start,
                value,
            });
        }
    };
    let code = read_u32(buf, pos, big_endian)?;
    let unknown = || GeostatsError::UnknownGeometryType {
        offset: start + 1,
        code,
    };
    let base = code & !EWKB_FLAGS;
    let (kind, dims) = if base >= 1000 {
        // ISO dimension codes; mixing them with EWKB Z/M flags is ambiguous.
        if code & (EWKB_Z | EWKB_M) != 0 || base >= 4000 {
            return Err(unknown());
        }
        let iso = base / 1000;
        let dims = Dims {
            z: iso == 1 || iso == 3,
            m: iso == 2 || iso == 3,
        };
        (base % 1000, dims)
    } else {
        let dims = Dims {
            z: code & EWKB_Z != 0,
            m: code & EWKB_M != 0,
        };
        (base, dims)
    };
    if let Some(name) = curve_type_name(kind) {
        return Err(GeostatsError::CurveType {
            offset: start + 1,
            code,
            name,
        });
    }
    if !(POINT..=GEOMETRY_COLLECTION).contains(&kind) {
        return Err(unknown());
    }
    let srid = if code & EWKB_SRID != 0 {
        Some(read_u32(buf, pos, big_endian)? as i32)
    } else {
        None
    };
    Ok(Header {
        big_endian,
        kind,
        dims,
        srid,
    })
}

/// What a nested geometry must agree with: its parent's required member kind (0 for any), the
/// parent's dimensions and kind, and the outermost geometry's EWKB SRID.
#[derive(Clone, Copy)]
struct Parent {
    member_kind: u32,
    dims: Dims,
    kind: u32,
    srid: Option<i32>,
}

/// Walks one geometry starting at `*pos`; `parent` is `None` for the outermost geometry.
fn geometry<S: CoordSink>(
    buf: &[u8],
    pos: &mut usize,
    depth: usize,
    parent: Option<Parent>,
    xy: &mut S,
    zm: &mut ZMExtent,
) -> Result<Header, GeostatsError> {
    let start = *pos;
    if depth > MAX_NESTING_DEPTH {
        return Err(GeostatsError::NestingTooDeep {
            offset: start,
            limit: MAX_NESTING_DEPTH,
        });
    }
    let h = header(buf, pos)?;
    if let Some(Parent {
        member_kind,
        dims,
        kind: parent_kind,
        srid: outer_srid,
    }) = parent
    {
        // JTS's WKBWriter (what Sedona's ST_AsEWKB uses) repeats the SRID on every member of a
        // collection; the same SRID, or 0, says nothing new.
        if let Some(nested) = h.srid
            && nested != 0
            && Some(nested) != outer_srid
        {
            return Err(GeostatsError::NestedSridMismatch {
                offset: start,
                outer: outer_srid,
                nested,
            });
        }
        if member_kind != 0 && h.kind != member_kind {
            return Err(GeostatsError::UnexpectedMemberType {
                offset: start,
                parent: type_name(parent_kind),
                expected: member_kind,
                found: h.kind,
            });
        }
        if h.dims != dims {
            return Err(GeostatsError::MixedDimensions {
                offset: start,
                expected: dims.name(),
                found: h.dims.name(),
            });
        }
    }
    let be = h.big_endian;
    let cb = h.dims.coord_bytes();
    let outer_srid = match parent {
        Some(p) => p.srid,
        None => h.srid,
    };
    match h.kind {
        POINT => {
            let s = take(buf, pos, cb)?;
            xy.run(s, be, h.dims, Part::Point, zm);
        }
        LINE_STRING => line(buf, pos, be, h.dims, Part::Line, xy, zm)?,
        POLYGON => {
            let rings = read_count(buf, pos, be, 4)?;
            xy.begin_polygon();
            for _ in 0..rings {
                line(buf, pos, be, h.dims, Part::Ring, xy, zm)?;
            }
            xy.end_polygon();
        }
        kind => {
            let (member_kind, min_member) = match kind {
                MULTI_POINT => (POINT, 5 + cb as u64),
                MULTI_LINE_STRING => (LINE_STRING, MIN_GEOMETRY_BYTES),
                MULTI_POLYGON => (POLYGON, MIN_GEOMETRY_BYTES),
                _ => (0, MIN_GEOMETRY_BYTES),
            };
            let n = read_count(buf, pos, be, min_member)?;
            for _ in 0..n {
                let parent = Parent {
                    member_kind,
                    dims: h.dims,
                    kind,
                    srid: outer_srid,
                };
                geometry(buf, pos, depth + 1, Some(parent), xy, zm)?;
            }
        }
    }
    Ok(h)
}

#[inline(always)]
fn line<S: CoordSink>(
    buf: &[u8],
    pos: &mut usize,
    be: bool,
    dims: Dims,
    part: Part,
    xy: &mut S,
    zm: &mut ZMExtent,
) -> Result<(), GeostatsError> {
    let cb = dims.coord_bytes();
    let n = read_count(buf, pos, be, cb as u64)?;
    // read_count checked that n * cb bytes remain.
    let s = take(buf, pos, n * cb)?;
    xy.run(s, be, dims, part, zm);
    Ok(())
}

/// Feeds a run of coordinates (`s.len()` is a multiple of the coordinate size) to a planar sink,
/// in any order.
#[inline(always)]
pub(crate) fn coords<S: XYSink>(s: &[u8], be: bool, dims: Dims, xy: &mut S, zm: &mut ZMExtent) {
    match (be, dims.z, dims.m) {
        (false, false, false) => xy_run::<false, S>(s, xy),
        (true, false, false) => xy_run::<true, S>(s, xy),
        (false, true, false) => zm_run::<false, true, false, S>(s, xy, zm),
        (true, true, false) => zm_run::<true, true, false, S>(s, xy, zm),
        (false, false, true) => zm_run::<false, false, true, S>(s, xy, zm),
        (true, false, true) => zm_run::<true, false, true, S>(s, xy, zm),
        (false, true, true) => zm_run::<false, true, true, S>(s, xy, zm),
        (true, true, true) => zm_run::<true, true, true, S>(s, xy, zm),
    }
}

#[inline(always)]
pub(crate) fn f64_at<const BE: bool>(b: &[u8], at: usize) -> f64 {
    let a: [u8; 8] = b[at..at + 8].try_into().unwrap();
    if BE {
        f64::from_be_bytes(a)
    } else {
        f64::from_le_bytes(a)
    }
}

/// XY coordinates, two per step into two accumulators (independent dependency chains).
#[inline(always)]
fn xy_run<const BE: bool, S: XYSink>(s: &[u8], xy: &mut S) {
    let (pairs, rest) = s.as_chunks::<32>();
    let mut a = *xy;
    let mut b = S::EMPTY;
    for c in pairs {
        a.add_xy(f64_at::<BE>(c, 0), f64_at::<BE>(c, 8));
        b.add_xy(f64_at::<BE>(c, 16), f64_at::<BE>(c, 24));
    }
    if let Some(c) = rest.first_chunk::<16>() {
        a.add_xy(f64_at::<BE>(c, 0), f64_at::<BE>(c, 8));
    }
    a.merge(&b);
    *xy = a;
}

/// Coordinates with Z and/or M.
#[inline(always)]
fn zm_run<const BE: bool, const Z: bool, const M: bool, S: XYSink>(
    s: &[u8],
    xy: &mut S,
    zm: &mut ZMExtent,
) {
    let step = 8 * (2 + Z as usize + M as usize);
    let mut a = *xy;
    let mut e = *zm;
    for c in s.chunks_exact(step) {
        a.add_xy(f64_at::<BE>(c, 0), f64_at::<BE>(c, 8));
        if Z {
            e.add_z(f64_at::<BE>(c, 16));
        }
        if M {
            e.add_m(f64_at::<BE>(c, step - 8));
        }
    }
    *xy = a;
    *zm = e;
}
