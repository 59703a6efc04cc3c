//! A value's SRID in the value, as PostGIS's extended WKB (EWKB) carries it, and back:
//! [`ewkb_with_srid`] is how a column without a declared CRS (a format-version 2 `geometry`
//! column) keeps each value's SRID, as seed 004 says such columns do ("Records the CRS: yes, in
//! each value"); [`wkb_without_srid`] is how a value enters a column that declares its CRS,
//! whose Parquet GEOMETRY / GEOGRAPHY values are plain WKB (the SRID is the column's).
//!
//! Only the outermost header changes: the SRID flag (`0x20000000`) and the SRID after the type
//! code are set or removed, and the Z/M flags there become ISO codes (+1000/+2000/+3000) or the
//! other way round. Members of a collection keep their own codes, which WKB readers (PostGIS,
//! GEOS, DuckDB, georust `wkb`, this workspace's readers) read per geometry.

use crate::error::CrsError;
use crate::wkb::{EWKB_M, EWKB_SRID, EWKB_Z};

/// The value as EWKB carrying `srid`: unchanged if it already carries an SRID (an EWKB value's
/// own SRID wins), else its outer header rewritten with the SRID flag and the SRID.
///
/// Fails on a value too short for a header, or with an unknown byte order or type code.
///
/// ```
/// use geoberg_crs::ewkb_with_srid;
///
/// // POINT (1 2), little-endian ISO WKB.
/// let mut wkb = vec![1u8, 1, 0, 0, 0];
/// wkb.extend(1f64.to_le_bytes());
/// wkb.extend(2f64.to_le_bytes());
/// let ewkb = ewkb_with_srid(&wkb, 4326)?;
/// assert_eq!(&ewkb[1..5], &0x2000_0001u32.to_le_bytes());
/// assert_eq!(&ewkb[5..9], &4326u32.to_le_bytes());
/// assert_eq!(&ewkb[9..], &wkb[5..]);
/// # Ok::<(), geoberg_crs::CrsError>(())
/// ```
pub fn ewkb_with_srid(wkb: &[u8], srid: i32) -> Result<Vec<u8>, CrsError> {
    let header = Header::read(wkb)?;
    if header.srid {
        return Ok(wkb.to_vec());
    }
    let code = header.base
        | if header.z { EWKB_Z } else { 0 }
        | if header.m { EWKB_M } else { 0 }
        | EWKB_SRID;
    let mut out = Vec::with_capacity(wkb.len() + 4);
    out.push(header.order);
    header.put(&mut out, code);
    header.put(&mut out, srid as u32);
    out.extend_from_slice(&wkb[5..]);
    Ok(out)
}

/// The value as plain (ISO) WKB: unchanged if it carries no SRID, else without the SRID and
/// with ISO dimension codes in its outer header. What a column that declares its CRS stores.
///
/// Fails on a value too short for its header, or with an unknown byte order or type code.
///
/// ```
/// use geoberg_crs::{ewkb_with_srid, wkb_without_srid};
///
/// let mut wkb = vec![1u8, 1, 0, 0, 0];
/// wkb.extend(1f64.to_le_bytes());
/// wkb.extend(2f64.to_le_bytes());
/// assert_eq!(wkb_without_srid(&ewkb_with_srid(&wkb, 4326)?)?, wkb);
/// # Ok::<(), geoberg_crs::CrsError>(())
/// ```
pub fn wkb_without_srid(wkb: &[u8]) -> Result<Vec<u8>, CrsError> {
    let header = Header::read(wkb)?;
    if !header.srid {
        return Ok(wkb.to_vec());
    }
    if wkb.len() < 9 {
        return Err(CrsError::WkbTruncated {
            offset: 5,
            what: "the SRID",
            needed: 4,
            available: wkb.len() - 5,
        });
    }
    let dims = match (header.z, header.m) {
        (false, false) => 0,
        (true, false) => 1000,
        (false, true) => 2000,
        (true, true) => 3000,
    };
    let mut out = Vec::with_capacity(wkb.len() - 4);
    out.push(header.order);
    header.put(&mut out, header.base + dims);
    out.extend_from_slice(&wkb[9..]);
    Ok(out)
}

/// The outer header of a WKB or EWKB value.
struct Header {
    order: u8,
    /// The OGC type, 1..=7.
    base: u32,
    z: bool,
    m: bool,
    /// The EWKB SRID flag.
    srid: bool,
}

impl Header {
    fn read(wkb: &[u8]) -> Result<Header, CrsError> {
        let truncated = || CrsError::WkbTruncated {
            offset: 0,
            what: "the byte order and geometry type",
            needed: 5,
            available: wkb.len(),
        };
        let (&order, rest) = wkb.split_first().ok_or_else(truncated)?;
        let code_bytes: [u8; 4] = rest
            .get(..4)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(truncated)?;
        let code = match order {
            0 => u32::from_be_bytes(code_bytes),
            1 => u32::from_le_bytes(code_bytes),
            found => return Err(CrsError::WkbByteOrder { offset: 0, found }),
        };
        let flags = code & (EWKB_Z | EWKB_M);
        let low = code & 0x0FFF_FFFF;
        let (base, iso_dims) = (low % 1000, low / 1000);
        if !(1..=7).contains(&base) || iso_dims > 3 || (flags != 0 && iso_dims != 0) {
            return Err(CrsError::WkbGeometryType { offset: 1, code });
        }
        Ok(Header {
            order,
            base,
            z: code & EWKB_Z != 0 || iso_dims == 1 || iso_dims == 3,
            m: code & EWKB_M != 0 || iso_dims == 2 || iso_dims == 3,
            srid: code & EWKB_SRID != 0,
        })
    }

    /// Appends `v` in the value's byte order.
    fn put(&self, out: &mut Vec<u8>, v: u32) {
        out.extend(if self.order == 0 {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dimensions_become_flags_and_ewkb_keeps_its_srid() {
        // POINT ZM (1 2 3 4), big endian ISO.
        let mut zm = vec![0u8];
        zm.extend(3001u32.to_be_bytes());
        for v in [1f64, 2.0, 3.0, 4.0] {
            zm.extend(v.to_be_bytes());
        }
        let out = ewkb_with_srid(&zm, 3857).unwrap();
        assert_eq!(&out[1..5], &(1 | EWKB_Z | EWKB_M | EWKB_SRID).to_be_bytes());
        assert_eq!(&out[5..9], &3857i32.to_be_bytes());
        assert_eq!(&out[9..], &zm[5..]);
        // Already EWKB with an SRID: untouched; and back to ISO.
        assert_eq!(ewkb_with_srid(&out, 4326).unwrap(), out);
        assert_eq!(wkb_without_srid(&out).unwrap(), zm);
        assert_eq!(wkb_without_srid(&zm).unwrap(), zm);
        assert!(wkb_without_srid(&out[..7]).is_err());
        // Hostile input: errors, no panic.
        assert!(ewkb_with_srid(&[], 1).is_err());
        assert!(ewkb_with_srid(&[1, 1, 0], 1).is_err());
        assert!(ewkb_with_srid(&[2, 1, 0, 0, 0], 1).is_err());
        assert!(ewkb_with_srid(&[1, 9, 0, 0, 0], 1).is_err());
    }
}
