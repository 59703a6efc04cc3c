//! Hilbert (and Z-order) curves over arbitrary precision, bounds and points.

use arbitrary::{Result, Unstructured};
use geoberg_hilbert::{Bounds, Error, HilbertCurve, Kernel, ZOrderCurve};

use crate::numbers::{any_f64, near};

/// Fuzz target `hilbert_curve`: a precision (any `u8`), bounds (any four floats, usually
/// ordered), then up to 2100 points around the bounds and a few raw keys.
///
/// * `HilbertCurve::new` succeeds exactly when the precision is in 1..=32 and
///   `Bounds::validate` passes; `ZOrderCurve::new` agrees.
/// * `encode` succeeds exactly when the bounds contain the point; the key is below `4^p`,
///   equals `encode_clamped`, `cell_bounds(key)` contains the point (the first 16 points),
///   `decode` gives cells below `2^p`, and `encode_cell(decode(key)) == key`.
/// * Keys nest: the key at `p - 1` is the key at `p` shifted right by 2.
/// * `encode_batch` on every available kernel, `par_encode_batch` and `encode_arrow` equal the
///   scalar keys (clamped variants too), and the batch error names the first bad index.
/// * Up to 16 raw `u64` keys decode to cells that encode back to the key's low `2p` bits.
pub fn hilbert_curve(data: &[u8]) {
    let _ = run(&mut Unstructured::new(data));
}

/// How many points (and then raw keys) per input also check `cell_bounds`.
const CELL_BOUNDS_CHECKS: usize = 16;

fn run(u: &mut Unstructured<'_>) -> Result<()> {
    let precision = match u.int_in_range(0u8..=3)? {
        0 => u.arbitrary()?,
        _ => u.int_in_range(1..=32)?,
    };
    let bounds = if u.ratio(1, 8)? {
        Bounds {
            min_x: any_f64(u)?,
            min_y: any_f64(u)?,
            max_x: any_f64(u)?,
            max_y: any_f64(u)?,
        }
    } else {
        let (x0, y0) = (any_f64(u)?, any_f64(u)?);
        let (w, h) = (any_f64(u)?.abs(), any_f64(u)?.abs());
        Bounds {
            min_x: x0,
            min_y: y0,
            max_x: x0 + w,
            max_y: y0 + h,
        }
    };
    let valid = (1..=32).contains(&precision) && bounds.validate().is_ok();
    let curve = HilbertCurve::new(precision, bounds);
    let zorder = ZOrderCurve::new(precision, bounds);
    assert_eq!(curve.is_ok(), valid, "p {precision} {bounds:?}: {curve:?}");
    assert_eq!(
        zorder.is_ok(),
        valid,
        "p {precision} {bounds:?}: {zorder:?}"
    );
    let (Ok(curve), Ok(zorder)) = (curve, zorder) else {
        return Ok(());
    };
    let coarser = (precision > 1).then(|| HilbertCurve::new(precision - 1, bounds).unwrap());
    let key_mask = u64::MAX >> (64 - 2 * u32::from(precision));
    let cell_limit = 1u64 << precision;

    // Mostly short inputs (fast), sometimes past two batch blocks.
    let n = if u.ratio(1, 8)? {
        u.int_in_range(0..=2100)?
    } else {
        u.int_in_range(0..=48)?
    };
    let (mut xs, mut ys) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        xs.push(near(u, bounds.min_x, bounds.max_x)?);
        ys.push(near(u, bounds.min_y, bounds.max_y)?);
    }
    let mut keys = Vec::with_capacity(n);
    let mut clamped = Vec::with_capacity(n);
    let mut first_bad = None;
    for (i, (&x, &y)) in xs.iter().zip(&ys).enumerate() {
        clamped.push(curve.encode_clamped(x, y));
        assert!(clamped[i] <= key_mask, "clamped key above 4^p");
        match curve.encode(x, y) {
            Ok(key) => {
                assert!(
                    bounds.contains(x, y),
                    "encoded ({x}, {y}) outside {bounds:?}"
                );
                assert!(key <= key_mask, "key {key} above 4^{precision}");
                assert_eq!(key, clamped[i], "encode vs encode_clamped at ({x}, {y})");
                let (cx, cy) = curve.decode(key);
                assert!(u64::from(cx) < cell_limit && u64::from(cy) < cell_limit);
                assert_eq!(curve.encode_cell(cx, cy), key, "cell round trip");
                // `cell_bounds` bisects over the floats (exact but ~250 steps): a sample
                // keeps the target fast.
                if i < CELL_BOUNDS_CHECKS {
                    let cell = curve.cell_bounds(key);
                    assert!(cell.contains(x, y), "({x}, {y}) outside its cell {cell:?}");
                }
                if let Some(c) = &coarser {
                    assert_eq!(
                        c.encode(x, y),
                        Ok(key >> 2),
                        "keys do not nest at ({x}, {y})"
                    );
                }
                let z = zorder
                    .encode(x, y)
                    .expect("z-order rejects what hilbert accepts");
                assert_eq!(
                    zorder.decode(z),
                    (cx, cy),
                    "z-order and hilbert cells differ"
                );
                keys.push(key);
            }
            Err(e) => {
                assert!(!bounds.contains(x, y), "({x}, {y}) inside {bounds:?}: {e}");
                assert!(matches!(e, Error::OutOfBounds { index: None, .. }), "{e:?}");
                first_bad.get_or_insert(i);
                keys.push(0);
            }
        }
    }

    let kernels = [Kernel::Portable, Kernel::Avx2];
    for kernel in kernels.into_iter().filter(|k| k.is_available()) {
        let c = curve.with_kernel(kernel).unwrap();
        let mut out = vec![0; n];
        match c.encode_batch(&xs, &ys, &mut out) {
            Ok(()) => {
                assert_eq!(first_bad, None, "{kernel:?} batch accepted a bad point");
                assert_eq!(out, keys, "{kernel:?} batch vs scalar");
            }
            Err(Error::OutOfBounds { index, .. }) => {
                assert_eq!(index, first_bad, "{kernel:?} batch error index")
            }
            Err(e) => panic!("{kernel:?}: {e}"),
        }
        c.encode_batch_clamped(&xs, &ys, &mut out).unwrap();
        assert_eq!(out, clamped, "{kernel:?} clamped batch vs scalar");
    }
    let mut out = vec![0; n];
    match curve.par_encode_batch(&xs, &ys, &mut out) {
        Ok(()) => assert_eq!((first_bad, &out), (None, &keys), "parallel batch"),
        Err(Error::OutOfBounds { index, .. }) => assert_eq!(index, first_bad, "parallel index"),
        Err(e) => panic!("{e}"),
    }
    curve.par_encode_batch_clamped(&xs, &ys, &mut out).unwrap();
    assert_eq!(out, clamped, "parallel clamped batch");
    let arrow = curve.encode_arrow_clamped(&xs.clone().into(), &ys.clone().into());
    assert_eq!(
        arrow.unwrap().values().as_ref(),
        clamped.as_slice(),
        "arrow clamped"
    );
    if first_bad.is_none() {
        let arrow = curve.encode_arrow(&xs.into(), &ys.into()).unwrap();
        assert_eq!(arrow.values().as_ref(), keys.as_slice(), "arrow");
    }

    for _ in 0..CELL_BOUNDS_CHECKS {
        let key: u64 = u.arbitrary()?;
        let (cx, cy) = curve.decode(key);
        assert!(u64::from(cx) < cell_limit && u64::from(cy) < cell_limit);
        assert_eq!(
            curve.encode_cell(cx, cy),
            key & key_mask,
            "raw key {key:#x}"
        );
        let cell = curve.cell_bounds(key);
        assert!(
            cell.min_x <= cell.max_x && cell.min_y <= cell.max_y,
            "{cell:?}"
        );
    }
    Ok(())
}
