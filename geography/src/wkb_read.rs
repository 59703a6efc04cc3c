//! WKB (ISO or EWKB, any byte order, Z/M ignored) into the parts a predicate needs.
//!
//! Validation is `geoberg_geostats::wkb_info`'s, so that the same values are accepted with the
//! same typed errors as everywhere else (truncation, counts, nesting, nested EWKB SRIDs as JTS
//! writes them, curve types by name); this walk then only collects coordinates.

use geoberg_geostats::{GeostatsError, wkb_info};

/// Coordinates of one value, by kind of part, in lon/lat degrees.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Parts {
    pub points: Vec<(f64, f64)>,
    pub lines: Vec<Vec<(f64, f64)>>,
    /// Polygons as lists of rings.
    pub polygons: Vec<Vec<Vec<(f64, f64)>>>,
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// Error for a value that passed validation but not this walk (cannot happen for valid input;
/// kept so that nothing here can panic).
fn truncated(pos: usize, buf: &[u8]) -> GeostatsError {
    GeostatsError::Truncated {
        offset: pos,
        needed: 1,
        available: buf.len().saturating_sub(pos),
    }
}

impl<'a> Reader<'a> {
    fn bytes<const N: usize>(&mut self) -> Result<[u8; N], GeostatsError> {
        let s = self
            .buf
            .get(self.pos..self.pos + N)
            .ok_or_else(|| truncated(self.pos, self.buf))?;
        self.pos += N;
        Ok(s.try_into().unwrap_or([0; N]))
    }

    fn u32(&mut self, be: bool) -> Result<u32, GeostatsError> {
        let b = self.bytes::<4>()?;
        Ok(if be {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    }

    fn f64(&mut self, be: bool) -> Result<f64, GeostatsError> {
        let b = self.bytes::<8>()?;
        Ok(if be {
            f64::from_be_bytes(b)
        } else {
            f64::from_le_bytes(b)
        })
    }

    /// One coordinate: X and Y, skipping Z and M.
    fn coord(&mut self, be: bool, extra: usize) -> Result<(f64, f64), GeostatsError> {
        let x = self.f64(be)?;
        let y = self.f64(be)?;
        for _ in 0..extra {
            self.f64(be)?;
        }
        Ok((x, y))
    }

    fn coords(&mut self, be: bool, extra: usize) -> Result<Vec<(f64, f64)>, GeostatsError> {
        let n = self.u32(be)? as usize;
        // Validation bounded n by the bytes left; cap the reservation anyway.
        let mut out = Vec::with_capacity(n.min(self.buf.len() / 16));
        for _ in 0..n {
            let c = self.coord(be, extra)?;
            // NaN or infinite vertices cannot be placed on the sphere: skipped, as by the bounds.
            if c.0.is_finite() && c.1.is_finite() {
                out.push(c);
            }
        }
        Ok(out)
    }

    fn geometry(&mut self, parts: &mut Parts) -> Result<(), GeostatsError> {
        let be = self.bytes::<1>()?[0] == 0;
        let code = self.u32(be)?;
        let base = code & 0x0FFF_FFFF;
        let (kind, extra) = if base >= 1000 {
            (base % 1000, [0, 1, 1, 2][(base / 1000).min(3) as usize])
        } else {
            (
                base,
                usize::from(code & 0x8000_0000 != 0) + usize::from(code & 0x4000_0000 != 0),
            )
        };
        if code & 0x2000_0000 != 0 {
            self.u32(be)?;
        }
        match kind {
            1 => {
                let c = self.coord(be, extra)?;
                if c.0.is_finite() && c.1.is_finite() {
                    parts.points.push(c);
                }
            }
            2 => {
                let l = self.coords(be, extra)?;
                if !l.is_empty() {
                    parts.lines.push(l);
                }
            }
            3 => {
                let rings = self.u32(be)?;
                let mut polygon = Vec::new();
                for _ in 0..rings {
                    let r = self.coords(be, extra)?;
                    if !r.is_empty() {
                        polygon.push(r);
                    }
                }
                if !polygon.is_empty() {
                    parts.polygons.push(polygon);
                }
            }
            _ => {
                let n = self.u32(be)?;
                for _ in 0..n {
                    self.geometry(parts)?;
                }
            }
        }
        Ok(())
    }
}

/// The parts of a WKB value; errors are geostats' typed WKB errors.
pub(crate) fn read_parts(wkb: &[u8]) -> Result<Parts, GeostatsError> {
    wkb_info(wkb)?;
    let mut parts = Parts::default();
    Reader { buf: wkb, pos: 0 }.geometry(&mut parts)?;
    Ok(parts)
}
