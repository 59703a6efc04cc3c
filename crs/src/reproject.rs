//! Rule 6: reprojection between WGS84 longitude/latitude and Web Mercator, over single
//! coordinates, slices and Arrow arrays (WKB lives in `wkb.rs`).

use arrow_array::{Array, Float64Array};
use arrow_buffer::{NullBuffer, ScalarBuffer};

use crate::crs::Crs;
use crate::error::CrsError;
use crate::mercator::{
    forward_domain_error, forward_domain_ok, forward_x, forward_y, inverse_domain_error,
    inverse_domain_ok, inverse_lat, inverse_lon,
};

/// A reprojection this crate can perform, chosen with [`Reprojection::between`].
///
/// Longitude/latitude are x/y in that order (the Iceberg and GeoParquet axis order), in
/// degrees; Web Mercator is in metres on the sphere of radius 6378137 m (closed form, no
/// ellipsoid: that is what EPSG:3857 is).
///
/// Where we differ from PROJ (measured against pyproj 3.7.2 / PROJ 9.5.1): PROJ returns a large
/// finite y at latitude +-90 and silently wraps longitude 181 to -179. Both are almost always
/// bugs upstream (swapped axes, degrees vs metres, a pole vertex), and a wrapped or enormous
/// coordinate corrupts file bounds for every later query, so we return a typed error instead.
/// Elsewhere the results agree with PROJ to about 1e-8 m and 1e-13 degrees.
///
/// ```
/// use geoberg_crs::{Crs, Reprojection};
///
/// let to_3857 = Reprojection::between(&Crs::OgcCrs84, &Crs::Epsg(3857))?;
/// let mut xs = vec![0.0, 180.0, -90.0];
/// let mut ys = vec![0.0, 45.0, -60.0];
/// to_3857.transform_slices(&mut xs, &mut ys)?;
/// assert_eq!(xs[1], 20037508.342789244);
///
/// let back = to_3857.inverse();
/// back.transform_slices(&mut xs, &mut ys)?;
/// assert!((ys[2] + 60.0).abs() < 1e-12);
/// # Ok::<(), geoberg_crs::CrsError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reprojection {
    /// Source and target are the same CRS: coordinates are left alone.
    Identity,
    /// WGS84 longitude/latitude (degrees) to Web Mercator (metres).
    LonLatToWebMercator,
    /// Web Mercator (metres) to WGS84 longitude/latitude (degrees).
    WebMercatorToLonLat,
}

impl Reprojection {
    /// The reprojection from `from` to `to`. Same CRS (under any spelling, e.g. `OGC:CRS84` and
    /// `EPSG:4326`) gives [`Reprojection::Identity`]; 4326 <-> 3857 the closed form; anything
    /// else `ST_UNSUPPORTED_REPROJECTION`.
    ///
    /// ```
    /// use geoberg_crs::{Crs, Reprojection};
    ///
    /// assert_eq!(Reprojection::between(&Crs::Epsg(4326), &Crs::OgcCrs84)?, Reprojection::Identity);
    /// assert_eq!(
    ///     Reprojection::between(&Crs::Srid(3857), &Crs::Epsg(4326))?,
    ///     Reprojection::WebMercatorToLonLat
    /// );
    /// let err = Reprojection::between(&Crs::Epsg(32633), &Crs::Epsg(4326)).unwrap_err();
    /// assert_eq!(err.code(), "ST_UNSUPPORTED_REPROJECTION");
    /// # Ok::<(), geoberg_crs::CrsError>(())
    /// ```
    pub fn between(from: &Crs, to: &Crs) -> Result<Self, CrsError> {
        if from.is_same_as(to) {
            return Ok(Reprojection::Identity);
        }
        match (from.srid(), to.srid()) {
            (Some(4326), Some(3857)) => Ok(Reprojection::LonLatToWebMercator),
            (Some(3857), Some(4326)) => Ok(Reprojection::WebMercatorToLonLat),
            _ => Err(CrsError::UnsupportedReprojection {
                from: from.clone(),
                to: to.clone(),
            }),
        }
    }

    /// The reprojection that undoes this one.
    pub fn inverse(self) -> Self {
        match self {
            Reprojection::Identity => Reprojection::Identity,
            Reprojection::LonLatToWebMercator => Reprojection::WebMercatorToLonLat,
            Reprojection::WebMercatorToLonLat => Reprojection::LonLatToWebMercator,
        }
    }

    /// The SRID of the target, when not [`Reprojection::Identity`].
    pub fn target_srid(self) -> Option<i32> {
        match self {
            Reprojection::Identity => None,
            Reprojection::LonLatToWebMercator => Some(3857),
            Reprojection::WebMercatorToLonLat => Some(4326),
        }
    }

    /// The SRID of the source, when not [`Reprojection::Identity`].
    pub fn source_srid(self) -> Option<i32> {
        self.inverse().target_srid()
    }

    /// Transforms one coordinate.
    ///
    /// ```
    /// use geoberg_crs::Reprojection;
    ///
    /// let (x, y) = Reprojection::LonLatToWebMercator.transform(90.0, 0.0)?;
    /// assert_eq!((x, y), (10018754.171394622, 0.0));
    /// # Ok::<(), geoberg_crs::CrsError>(())
    /// ```
    pub fn transform(self, x: f64, y: f64) -> Result<(f64, f64), CrsError> {
        self.transform_indexed(0, x, y)
    }

    /// [`Reprojection::transform`] reporting `index` in its errors.
    #[inline]
    pub(crate) fn transform_indexed(
        self,
        index: usize,
        x: f64,
        y: f64,
    ) -> Result<(f64, f64), CrsError> {
        match self {
            Reprojection::Identity => Ok((x, y)),
            Reprojection::LonLatToWebMercator if forward_domain_ok(x, y) => {
                Ok((forward_x(x), forward_y(y)))
            }
            Reprojection::LonLatToWebMercator => Err(forward_domain_error(index, x, y)),
            Reprojection::WebMercatorToLonLat if inverse_domain_ok(x, y) => {
                Ok((inverse_lon(x), inverse_lat(y)))
            }
            Reprojection::WebMercatorToLonLat => Err(inverse_domain_error(index, x, y)),
        }
    }

    /// Transforms coordinates in place, `xs[i]` with `ys[i]`.
    ///
    /// All coordinates are checked before any is changed, so on error the slices are untouched
    /// and the error names the first offending index. The kernel is vectorised, with AVX2 or
    /// AVX-512 chosen at run time where the CPU has them.
    ///
    /// ```
    /// use geoberg_crs::Reprojection;
    ///
    /// let mut xs = [10.0, 20.0];
    /// let mut ys = [50.0, 95.0];
    /// let err = Reprojection::LonLatToWebMercator.transform_slices(&mut xs, &mut ys).unwrap_err();
    /// assert_eq!(err.code(), "ST_LATITUDE_OUT_OF_DOMAIN");
    /// assert_eq!(xs, [10.0, 20.0]);
    /// ```
    pub fn transform_slices(self, xs: &mut [f64], ys: &mut [f64]) -> Result<(), CrsError> {
        if xs.len() != ys.len() {
            return Err(CrsError::LengthMismatch {
                x_len: xs.len(),
                y_len: ys.len(),
            });
        }
        self.check_domain(xs, ys, None)?;
        match self {
            Reprojection::Identity => {}
            Reprojection::LonLatToWebMercator => simd::forward(xs, ys),
            Reprojection::WebMercatorToLonLat => simd::inverse(xs, ys),
        }
        Ok(())
    }

    /// Transforms a pair of Arrow arrays into new arrays. A row that is null in either input is
    /// null in both outputs, and its values are not checked.
    ///
    /// ```
    /// use arrow_array::{Array, Float64Array};
    /// use geoberg_crs::Reprojection;
    ///
    /// let lon = Float64Array::from(vec![Some(0.0), None, Some(-180.0)]);
    /// let lat = Float64Array::from(vec![Some(0.0), Some(99.0), Some(0.0)]);
    /// let (x, y) = Reprojection::LonLatToWebMercator.transform_arrays(&lon, &lat)?;
    /// assert!(x.is_null(1) && y.is_null(1));
    /// assert_eq!(x.value(2), -20037508.342789244);
    /// # Ok::<(), geoberg_crs::CrsError>(())
    /// ```
    pub fn transform_arrays(
        self,
        xs: &Float64Array,
        ys: &Float64Array,
    ) -> Result<(Float64Array, Float64Array), CrsError> {
        if xs.len() != ys.len() {
            return Err(CrsError::LengthMismatch {
                x_len: xs.len(),
                y_len: ys.len(),
            });
        }
        let nulls = NullBuffer::union(xs.nulls(), ys.nulls());
        self.check_domain(xs.values(), ys.values(), nulls.as_ref())?;
        // One pass from the input buffers into fresh ones. Null slots hold arbitrary values; the
        // kernels are branch-free and cannot panic on them, and the nulls mask the results.
        let (mut out_x, mut out_y) = (vec![0.0; xs.len()], vec![0.0; ys.len()]);
        let (vx, vy) = (xs.values().as_ref(), ys.values().as_ref());
        match self {
            Reprojection::Identity => {
                out_x.copy_from_slice(vx);
                out_y.copy_from_slice(vy);
            }
            Reprojection::LonLatToWebMercator => simd::forward_into(vx, vy, &mut out_x, &mut out_y),
            Reprojection::WebMercatorToLonLat => simd::inverse_into(vx, vy, &mut out_x, &mut out_y),
        }
        Ok((
            Float64Array::new(ScalarBuffer::from(out_x), nulls.clone()),
            Float64Array::new(ScalarBuffer::from(out_y), nulls),
        ))
    }

    /// Returns the first coordinate (among valid rows) outside the domain as an error.
    fn check_domain(
        self,
        xs: &[f64],
        ys: &[f64],
        nulls: Option<&NullBuffer>,
    ) -> Result<(), CrsError> {
        type Check = fn(f64, f64) -> bool;
        type Explain = fn(usize, f64, f64) -> CrsError;
        let (ok, error): (Check, Explain) = match self {
            Reprojection::Identity => return Ok(()),
            Reprojection::LonLatToWebMercator => (forward_domain_ok, forward_domain_error),
            Reprojection::WebMercatorToLonLat => (inverse_domain_ok, inverse_domain_error),
        };
        let bad = |i: usize| nulls.is_none_or(|n| n.is_valid(i)) && !ok(xs[i], ys[i]);
        // A branch-free pass over everything first (vectorises); only on failure look for the
        // first bad valid row.
        let all_ok = xs.iter().zip(ys).fold(true, |acc, (&x, &y)| acc & ok(x, y));
        if all_ok {
            return Ok(());
        }
        match (0..xs.len()).find(|&i| bad(i)) {
            Some(i) => Err(error(i, xs[i], ys[i])),
            None => Ok(()),
        }
    }
}

/// Run-time dispatch of the batch kernels to the widest vector unit the CPU has. The results
/// are bit-identical on every path: the kernels use only IEEE add/mul/div and bit operations.
#[allow(unsafe_code)]
mod simd {
    use crate::mercator::{forward_x, forward_y, inverse_lat, inverse_lon};

    #[inline(always)]
    fn forward_kernel(xs: &[f64], ys: &[f64], out_x: &mut [f64], out_y: &mut [f64]) {
        let n = xs.len().min(ys.len()).min(out_x.len()).min(out_y.len());
        for i in 0..n {
            out_x[i] = forward_x(xs[i]);
            out_y[i] = forward_y(ys[i]);
        }
    }

    #[inline(always)]
    fn inverse_kernel(xs: &[f64], ys: &[f64], out_x: &mut [f64], out_y: &mut [f64]) {
        let n = xs.len().min(ys.len()).min(out_x.len()).min(out_y.len());
        for i in 0..n {
            out_x[i] = inverse_lon(xs[i]);
            out_y[i] = inverse_lat(ys[i]);
        }
    }

    #[inline(always)]
    fn forward_in_place_kernel(xs: &mut [f64], ys: &mut [f64]) {
        for (x, y) in xs.iter_mut().zip(ys.iter_mut()) {
            *x = forward_x(*x);
            *y = forward_y(*y);
        }
    }

    #[inline(always)]
    fn inverse_in_place_kernel(xs: &mut [f64], ys: &mut [f64]) {
        for (x, y) in xs.iter_mut().zip(ys.iter_mut()) {
            *x = inverse_lon(*x);
            *y = inverse_lat(*y);
        }
    }

    macro_rules! dispatch {
        ($name:ident, $kernel:ident, ($($arg:ident: $ty:ty),*)) => {
            pub(super) fn $name($($arg: $ty),*) {
                #[cfg(target_arch = "x86_64")]
                {
                    #[target_feature(enable = "avx512f")]
                    fn avx512($($arg: $ty),*) {
                        $kernel($($arg),*)
                    }
                    #[target_feature(enable = "avx2")]
                    fn avx2($($arg: $ty),*) {
                        $kernel($($arg),*)
                    }
                    if std::arch::is_x86_feature_detected!("avx512f") {
                        // SAFETY: the CPU has AVX-512F, checked just above.
                        return unsafe { avx512($($arg),*) };
                    }
                    if std::arch::is_x86_feature_detected!("avx2") {
                        // SAFETY: the CPU has AVX2, checked just above.
                        return unsafe { avx2($($arg),*) };
                    }
                }
                $kernel($($arg),*)
            }
        };
    }

    dispatch!(forward, forward_in_place_kernel, (xs: &mut [f64], ys: &mut [f64]));
    dispatch!(inverse, inverse_in_place_kernel, (xs: &mut [f64], ys: &mut [f64]));
    dispatch!(forward_into, forward_kernel, (xs: &[f64], ys: &[f64], out_x: &mut [f64], out_y: &mut [f64]));
    dispatch!(inverse_into, inverse_kernel, (xs: &[f64], ys: &[f64], out_x: &mut [f64], out_y: &mut [f64]));
}
