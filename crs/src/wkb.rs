//! Reprojecting WKB geometries in place: ISO WKB (Iceberg Appendix G) and PostGIS EWKB, all
//! seven OGC types, 2D/Z/M/ZM, either byte order.
//!
//! A small walker of our own rather than a parser into geometry objects: reprojection changes
//! only the x/y doubles, so we overwrite them where they lie and keep every other byte (byte
//! order, type codes, counts, Z, M). Every count is checked against the bytes left before it is
//! used, nesting is bounded, and nothing indexes past the end, so hostile bytes give a typed
//! error and never a panic.

use arrow_array::{Array, GenericBinaryArray, OffsetSizeTrait};
use arrow_buffer::Buffer;

use crate::crs::Crs;
use crate::error::CrsError;
use crate::reproject::Reprojection;

/// Deepest nesting of collections we follow (PostGIS allows far less in practice).
pub const MAX_WKB_DEPTH: usize = 64;

/// EWKB's Z, M and SRID flags on a type code (PostGIS).
pub(crate) const EWKB_Z: u32 = 0x8000_0000;
pub(crate) const EWKB_M: u32 = 0x4000_0000;
pub(crate) const EWKB_SRID: u32 = 0x2000_0000;

const TYPE_NAMES: [&str; 8] = [
    "",
    "Point",
    "LineString",
    "Polygon",
    "MultiPoint",
    "MultiLineString",
    "MultiPolygon",
    "GeometryCollection",
];

impl Reprojection {
    /// Reprojects every coordinate of a WKB or EWKB value and returns the new value; the input
    /// is left alone. `from` is the CRS the value is in: an EWKB SRID that contradicts it is an
    /// error (`ST_WKB_SRID_MISMATCH`), and on success the EWKB SRID is rewritten to the target.
    ///
    /// Z and M are kept, as are the byte order and the layout, so the output has the input's
    /// length. An empty point (all coordinates NaN) stays empty.
    ///
    /// ```
    /// use geoberg_crs::{Crs, Reprojection};
    ///
    /// // POINT Z (180 0 7), little endian ISO WKB.
    /// let mut wkb = vec![1u8];
    /// wkb.extend_from_slice(&1001u32.to_le_bytes());
    /// for v in [180.0f64, 0.0, 7.0] {
    ///     wkb.extend_from_slice(&v.to_le_bytes());
    /// }
    /// let from = Crs::Epsg(4326);
    /// let r = Reprojection::between(&from, &Crs::Epsg(3857))?;
    /// let out = r.transform_wkb(&wkb, &from)?;
    /// assert_eq!(out.len(), wkb.len());
    /// assert_eq!(f64::from_le_bytes(out[5..13].try_into().unwrap()), 20037508.342789244);
    /// assert_eq!(f64::from_le_bytes(out[21..29].try_into().unwrap()), 7.0);
    /// # Ok::<(), geoberg_crs::CrsError>(())
    /// ```
    pub fn transform_wkb(self, wkb: &[u8], from: &Crs) -> Result<Vec<u8>, CrsError> {
        let mut out = wkb.to_vec();
        Walker::new(&mut out, self, from, true).run()?;
        Ok(out)
    }

    /// [`Reprojection::transform_wkb`] in place. The value is checked completely before any byte
    /// changes, so on error it is untouched.
    pub fn transform_wkb_in_place(self, wkb: &mut [u8], from: &Crs) -> Result<(), CrsError> {
        Walker::new(wkb, self, from, false).run()?;
        Walker::new(wkb, self, from, true).run()
    }

    /// Reprojects an Arrow binary array of WKB values (nulls stay null). Errors name the row.
    ///
    /// ```
    /// use arrow_array::{Array, BinaryArray};
    /// use geoberg_crs::{Crs, Reprojection};
    ///
    /// let point = |x: f64, y: f64| {
    ///     let mut v = vec![0u8, 0, 0, 0, 1]; // big endian, Point
    ///     v.extend_from_slice(&x.to_be_bytes());
    ///     v.extend_from_slice(&y.to_be_bytes());
    ///     v
    /// };
    /// let wkb = BinaryArray::from(vec![Some(point(0.0, 0.0).as_slice()), None]);
    /// let out = Reprojection::LonLatToWebMercator.transform_wkb_array(&wkb, &Crs::Epsg(4326))?;
    /// assert_eq!(out.value(0), point(0.0, 0.0).as_slice());
    /// assert!(out.is_null(1));
    ///
    /// let bad = BinaryArray::from(vec![point(0.0, 0.0).as_slice(), point(0.0, 90.0).as_slice()]);
    /// let err = Reprojection::LonLatToWebMercator.transform_wkb_array(&bad, &Crs::Epsg(4326)).unwrap_err();
    /// assert!(err.to_string().starts_with("row 1:"));
    /// # Ok::<(), geoberg_crs::CrsError>(())
    /// ```
    pub fn transform_wkb_array<O: OffsetSizeTrait>(
        self,
        wkb: &GenericBinaryArray<O>,
        from: &Crs,
    ) -> Result<GenericBinaryArray<O>, CrsError> {
        // Lengths never change, so copy the value bytes once and rewrite each value where it lies.
        let offsets = wkb.offsets();
        let first = offsets[0].as_usize();
        let last = offsets[offsets.len() - 1].as_usize();
        let mut values = wkb.values()[first..last].to_vec();
        for row in 0..wkb.len() {
            if wkb.is_null(row) {
                continue;
            }
            let start = offsets[row].as_usize() - first;
            let end = offsets[row + 1].as_usize() - first;
            Walker::new(&mut values[start..end], self, from, true)
                .run()
                .map_err(|source| CrsError::AtRow {
                    row,
                    source: Box::new(source),
                })?;
        }
        let shifted = offsets
            .iter()
            .map(|o| O::usize_as(o.as_usize() - first))
            .collect::<Vec<_>>();
        Ok(GenericBinaryArray::<O>::new(
            arrow_buffer::OffsetBuffer::new(shifted.into()),
            Buffer::from_vec(values),
            wkb.nulls().cloned(),
        ))
    }
}

struct Walker<'a> {
    buf: &'a mut [u8],
    pos: usize,
    write: bool,
    coordinate: usize,
    reprojection: Reprojection,
    from: &'a Crs,
}

#[derive(Clone, Copy)]
struct Header {
    little_endian: bool,
    base: u32,
    dims: usize,
}

impl<'a> Walker<'a> {
    fn new(buf: &'a mut [u8], reprojection: Reprojection, from: &'a Crs, write: bool) -> Self {
        Walker {
            buf,
            pos: 0,
            write,
            coordinate: 0,
            reprojection,
            from,
        }
    }

    fn run(mut self) -> Result<(), CrsError> {
        self.geometry(0)?;
        if self.pos != self.buf.len() {
            return Err(CrsError::WkbTrailingBytes {
                end: self.pos,
                len: self.buf.len(),
            });
        }
        Ok(())
    }

    /// Reserves `n` bytes at the cursor and returns where they start.
    fn take(&mut self, n: u64, what: &'static str) -> Result<usize, CrsError> {
        let available = self.buf.len() - self.pos;
        if n > available as u64 {
            return Err(CrsError::WkbTruncated {
                offset: self.pos,
                what,
                needed: n,
                available,
            });
        }
        let at = self.pos;
        self.pos += n as usize;
        Ok(at)
    }

    fn u32(&mut self, little_endian: bool, what: &'static str) -> Result<u32, CrsError> {
        let at = self.take(4, what)?;
        let bytes = [
            self.buf[at],
            self.buf[at + 1],
            self.buf[at + 2],
            self.buf[at + 3],
        ];
        Ok(if little_endian {
            u32::from_le_bytes(bytes)
        } else {
            u32::from_be_bytes(bytes)
        })
    }

    /// Reads a geometry header; `nested` for members of a multi geometry or collection.
    fn header(&mut self, nested: bool) -> Result<Header, CrsError> {
        let at = self.take(1, "the byte-order marker")?;
        let little_endian = match self.buf[at] {
            0 => false,
            1 => true,
            found => return Err(CrsError::WkbByteOrder { offset: at, found }),
        };
        let code_at = self.pos;
        let code = self.u32(little_endian, "the geometry type")?;
        let invalid = CrsError::WkbGeometryType {
            offset: code_at,
            code,
        };
        let plain = code & !(EWKB_Z | EWKB_M | EWKB_SRID);
        let (base, iso) = (plain % 1000, plain / 1000);
        let ewkb_dims = code & (EWKB_Z | EWKB_M) != 0;
        if !(1..=7).contains(&base) || iso > 3 || (ewkb_dims && iso != 0) {
            return Err(invalid);
        }
        let has_z = code & EWKB_Z != 0 || iso == 1 || iso == 3;
        let has_m = code & EWKB_M != 0 || iso == 2 || iso == 3;
        if code & EWKB_SRID != 0 {
            self.srid(little_endian, nested)?;
        }
        Ok(Header {
            little_endian,
            base,
            dims: 2 + usize::from(has_z) + usize::from(has_m),
        })
    }

    /// Checks an EWKB SRID against the source CRS and relabels it with the target's.
    ///
    /// JTS's `WKBWriter` (Sedona's `ST_AsEWKB`) repeats the SRID on every member of a collection;
    /// a member's SRID 0 says nothing and is left as it is, as `geoberg-geostats` accepts it.
    fn srid(&mut self, little_endian: bool, nested: bool) -> Result<(), CrsError> {
        let at = self.pos;
        let wkb_srid = self.u32(little_endian, "the EWKB SRID")? as i32;
        if nested && wkb_srid == 0 {
            return Ok(());
        }
        if self.from.srid().is_some_and(|s| s != wkb_srid) {
            return Err(CrsError::WkbSridMismatch {
                wkb_srid,
                from: self.from.clone(),
            });
        }
        if let (true, Some(target)) = (self.write, self.reprojection.target_srid()) {
            let bytes = if little_endian {
                (target as u32).to_le_bytes()
            } else {
                (target as u32).to_be_bytes()
            };
            self.buf[at..at + 4].copy_from_slice(&bytes);
        }
        Ok(())
    }

    fn geometry(&mut self, depth: usize) -> Result<u32, CrsError> {
        let header = self.header(depth > 0)?;
        let le = header.little_endian;
        match header.base {
            1 => self.coordinates(1, header)?,
            2 => {
                let n = self.u32(le, "the point count")?;
                self.coordinates(n, header)?;
            }
            3 => {
                let rings = self.u32(le, "the ring count")?;
                for _ in 0..rings {
                    let n = self.u32(le, "the point count of a ring")?;
                    self.coordinates(n, header)?;
                }
            }
            container => {
                if depth >= MAX_WKB_DEPTH {
                    return Err(CrsError::WkbTooDeep {
                        offset: self.pos,
                        max_depth: MAX_WKB_DEPTH,
                    });
                }
                let members = self.u32(le, "the member count")?;
                for _ in 0..members {
                    let offset = self.pos;
                    let member = self.geometry(depth + 1)?;
                    // MultiPoint holds Points (4 - 3 = 1), and so on; collections hold anything.
                    if container != 7 && member != container - 3 {
                        return Err(CrsError::WkbMemberType {
                            offset,
                            container: TYPE_NAMES[container as usize],
                            expected: TYPE_NAMES[(container - 3) as usize],
                            found: TYPE_NAMES[member as usize],
                        });
                    }
                }
            }
        }
        Ok(header.base)
    }

    fn coordinates(&mut self, count: u32, header: Header) -> Result<(), CrsError> {
        let stride = header.dims * 8;
        let start = self.take(
            u64::from(count) * stride as u64,
            "the coordinates (count x dimensions x 8 bytes)",
        )?;
        let le = header.little_endian;
        let read = |b: &[u8], at: usize| {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(&b[at..at + 8]);
            if le {
                f64::from_le_bytes(bytes)
            } else {
                f64::from_be_bytes(bytes)
            }
        };
        for i in 0..count as usize {
            let at = start + i * stride;
            let (x, y) = (read(self.buf, at), read(self.buf, at + 8));
            let index = self.coordinate;
            self.coordinate += 1;
            if header.base == 1 && x.is_nan() && y.is_nan() {
                continue; // POINT EMPTY
            }
            let (nx, ny) = self.reprojection.transform_indexed(index, x, y)?;
            if self.write {
                let (bx, by) = if le {
                    (nx.to_le_bytes(), ny.to_le_bytes())
                } else {
                    (nx.to_be_bytes(), ny.to_be_bytes())
                };
                self.buf[at..at + 8].copy_from_slice(&bx);
                self.buf[at + 8..at + 16].copy_from_slice(&by);
            }
        }
        Ok(())
    }
}
