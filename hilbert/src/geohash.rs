//! GeoHash keys (base32 strings and their integer form), for comparison with Hilbert keys.

use crate::{Bounds, Error, ZOrderCurve};

const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";

/// GeoHash at a fixed length of 1..=12 characters (5 bits each, longitude first).
///
/// The cells use the crate's normalisation over [`Bounds::WGS84`]: the integer key is the top
/// `5 * len` bits of the 32-bit-per-axis [`ZOrderCurve`] key, so a longitude of exactly 180 or a
/// latitude of exactly 90 lands in the last cell, and NaN or out-of-range values are errors.
/// Arguments are `(lon, lat)`, the crate's `(x, y)` order.
///
/// ```
/// use geoberg_hilbert::GeoHash;
///
/// let geohash = GeoHash::new(7)?;
/// assert_eq!(geohash.encode(20.9997, 52.0004)?, "u3nzvf7");
/// # Ok::<(), geoberg_hilbert::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeoHash {
    len: u8,
    zorder: ZOrderCurve,
}

impl GeoHash {
    /// A GeoHash of `len` characters (1..=12).
    pub fn new(len: u8) -> Result<GeoHash, Error> {
        if !(1..=12).contains(&len) {
            return Err(Error::InvalidGeoHashLength { len });
        }
        Ok(GeoHash {
            len,
            zorder: ZOrderCurve::new(32, Bounds::WGS84)?,
        })
    }

    /// Characters per hash.
    pub fn len(&self) -> u8 {
        self.len
    }

    /// Always false: a GeoHash has at least one character.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Bits in the integer key: `5 * len`.
    pub fn bits(&self) -> u32 {
        5 * u32::from(self.len)
    }

    /// The integer key: the hash's `5 * len` bits, first character most significant.
    #[inline]
    pub fn encode_key(&self, lon: f64, lat: f64) -> Result<u64, Error> {
        Ok(self.zorder.encode(lon, lat)? >> (64 - self.bits()))
    }

    /// The base32 hash string.
    pub fn encode(&self, lon: f64, lat: f64) -> Result<String, Error> {
        Ok(self.key_to_string(self.encode_key(lon, lat)?))
    }

    /// Integer keys for many points; errors as [`ZOrderCurve::encode_batch`].
    pub fn encode_key_batch(
        &self,
        lons: &[f64],
        lats: &[f64],
        out: &mut [u64],
    ) -> Result<(), Error> {
        self.zorder.encode_batch(lons, lats, out)?;
        let shift = 64 - self.bits();
        for key in out.iter_mut() {
            *key >>= shift;
        }
        Ok(())
    }

    /// The base32 string of an integer key of this length.
    pub fn key_to_string(&self, key: u64) -> String {
        (0..u32::from(self.len))
            .rev()
            .map(|i| char::from(ALPHABET[((key >> (5 * i)) & 31) as usize]))
            .collect()
    }
}
