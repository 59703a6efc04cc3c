//! Sort keys of sampled rows: the bbox centre keyed by `geoberg-hilbert`'s curves over the CRS
//! extent (the same normalization the rewrite uses).

use geoberg_hilbert::{Bounds, GeoHash, HilbertCurve, ZOrderCurve};

use crate::Crs;
use crate::error::Error;
use crate::sample::SampleRow;

fn centres(samples: &[SampleRow]) -> (Vec<f64>, Vec<f64>) {
    samples.iter().map(SampleRow::centre).unzip()
}

fn bounds(extent: [f64; 4]) -> Result<Bounds, Error> {
    let [a, b, c, d] = extent;
    Ok(Bounds::new(a, b, c, d)?)
}

/// Hilbert keys of the bbox centres at `bits` per axis.
pub(crate) fn hilbert_keys(
    samples: &[SampleRow],
    extent: [f64; 4],
    bits: u8,
) -> Result<Vec<u64>, Error> {
    let curve = HilbertCurve::new(bits, bounds(extent)?)?;
    let (xs, ys) = centres(samples);
    let mut out = vec![0; samples.len()];
    curve.par_encode_batch(&xs, &ys, &mut out)?;
    Ok(out)
}

/// Z-order (Morton) keys of the bbox centres at `bits` per axis.
pub(crate) fn zorder_keys(
    samples: &[SampleRow],
    extent: [f64; 4],
    bits: u8,
) -> Result<Vec<u64>, Error> {
    let curve = ZOrderCurve::new(bits, bounds(extent)?)?;
    let (xs, ys) = centres(samples);
    let mut out = vec![0; samples.len()];
    curve.par_encode_batch(&xs, &ys, &mut out)?;
    Ok(out)
}

/// GeoHash integer keys of the bbox centres at `chars` characters. GeoHash is defined on
/// longitude/latitude, so Web Mercator centres are converted first (spherical inverse).
pub(crate) fn geohash_keys(samples: &[SampleRow], crs: Crs, chars: u8) -> Result<Vec<u64>, Error> {
    let geohash = GeoHash::new(chars)?;
    let (mut xs, mut ys) = centres(samples);
    if crs == Crs::WebMercator {
        let half = crs.extent()[2];
        for (x, y) in xs.iter_mut().zip(ys.iter_mut()) {
            *x = (*x / half * 180.0).clamp(-180.0, 180.0);
            *y = (*y / half * std::f64::consts::PI)
                .sinh()
                .atan()
                .to_degrees()
                .clamp(-90.0, 90.0);
        }
    }
    let mut out = vec![0; samples.len()];
    geohash.encode_key_batch(&xs, &ys, &mut out)?;
    Ok(out)
}
