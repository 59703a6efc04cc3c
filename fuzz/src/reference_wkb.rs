//! A deliberately plain WKB reader, the oracle the bbox targets compare against.
//!
//! It shares no code with `geoberg-geostats` (whose scanner is tuned for speed) and reads the same
//! dialect: ISO WKB (Z/M as +1000/+2000/+3000) and EWKB (Z/M/SRID flags), either byte order,
//! the seven OGC types. It returns every coordinate, so a target can check that a box contains
//! each one and is tight. It is only ever run on bytes that geostats accepted, and it gives up
//! (`None`) on anything odd rather than guessing.

/// One coordinate; absent Z or M is `None`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Coord {
    pub x: f64,
    pub y: f64,
    pub z: Option<f64>,
    pub m: Option<f64>,
}

/// Every coordinate of a WKB value, in order, or `None` when the bytes are not WKB as read here.
pub(crate) fn coordinates(wkb: &[u8]) -> Option<Vec<Coord>> {
    let mut r = Reader { buf: wkb, pos: 0 };
    let mut out = Vec::new();
    r.geometry(0, &mut out)?;
    (r.pos == wkb.len()).then_some(out)
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn bytes<const N: usize>(&mut self) -> Option<[u8; N]> {
        let s = self.buf.get(self.pos..self.pos + N)?;
        self.pos += N;
        s.try_into().ok()
    }

    fn u32(&mut self, big_endian: bool) -> Option<u32> {
        let b = self.bytes::<4>()?;
        Some(if big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    }

    fn f64(&mut self, big_endian: bool) -> Option<f64> {
        let b = self.bytes::<8>()?;
        Some(if big_endian {
            f64::from_be_bytes(b)
        } else {
            f64::from_le_bytes(b)
        })
    }

    fn coord(&mut self, be: bool, z: bool, m: bool) -> Option<Coord> {
        let x = self.f64(be)?;
        let y = self.f64(be)?;
        let z = if z { Some(self.f64(be)?) } else { None };
        let m = if m { Some(self.f64(be)?) } else { None };
        Some(Coord { x, y, z, m })
    }

    fn run(&mut self, be: bool, z: bool, m: bool, out: &mut Vec<Coord>) -> Option<()> {
        let n = self.u32(be)?;
        // Refuse counts the remaining bytes cannot hold before allocating anything.
        if u64::from(n) * 16 > (self.buf.len() - self.pos) as u64 {
            return None;
        }
        for _ in 0..n {
            out.push(self.coord(be, z, m)?);
        }
        Some(())
    }

    fn geometry(&mut self, depth: usize, out: &mut Vec<Coord>) -> Option<()> {
        if depth > 64 {
            return None;
        }
        let be = match self.bytes::<1>()?[0] {
            0 => true,
            1 => false,
            _ => return None,
        };
        let code = self.u32(be)?;
        let flags = code & 0xE000_0000;
        let base = code & 0x1FFF_FFFF;
        let (kind, z, m) = if base >= 1000 {
            (
                base % 1000,
                matches!(base / 1000, 1 | 3),
                matches!(base / 1000, 2 | 3),
            )
        } else {
            (base, code & 0x8000_0000 != 0, code & 0x4000_0000 != 0)
        };
        if flags & 0x2000_0000 != 0 {
            self.u32(be)?;
        }
        match kind {
            1 => out.push(self.coord(be, z, m)?),
            2 => self.run(be, z, m, out)?,
            3 => {
                for _ in 0..self.u32(be)? {
                    self.run(be, z, m, out)?;
                }
            }
            4..=7 => {
                for _ in 0..self.u32(be)? {
                    self.geometry(depth + 1, out)?;
                }
            }
            _ => return None,
        }
        Some(())
    }
}
