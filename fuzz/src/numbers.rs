//! Floats from fuzz bytes, biased towards the values that break float code: raw bit patterns
//! (NaN, infinities, subnormals), small integers, and points on, just inside and just outside
//! given edges.

use arbitrary::{Result, Unstructured};

/// Any `f64`, one time in four from raw bits.
pub(crate) fn any_f64(u: &mut Unstructured<'_>) -> Result<f64> {
    Ok(match u.int_in_range(0u8..=7)? {
        0 | 1 => f64::from_bits(u.arbitrary()?),
        2 => *u.choose(&[
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            f64::MIN_POSITIVE,
            f64::EPSILON,
            f64::MAX,
            f64::MIN,
            180.0,
            -180.0,
            90.0,
            -90.0,
            20_037_508.342_789_244,
        ])?,
        3 => f64::from(u.arbitrary::<i16>()?) / f64::from(u.int_in_range(1u16..=1024)?),
        _ => f64::from(u.arbitrary::<i16>()?),
    })
}

/// A value in or around `[min, max]`: an edge, its neighbouring floats, a point between, or any
/// value.
pub(crate) fn near(u: &mut Unstructured<'_>, min: f64, max: f64) -> Result<f64> {
    Ok(match u.int_in_range(0u8..=9)? {
        0 => min,
        1 => max,
        2 => min.next_down(),
        3 => max.next_up(),
        4 => min.next_up(),
        5 => max.next_down(),
        6 => any_f64(u)?,
        _ => between(u, min, max)?,
    })
}

/// A value in `[min, max]`, spread by 16 bits of input (an edge when the range is not finite or
/// not ordered).
pub(crate) fn between(u: &mut Unstructured<'_>, min: f64, max: f64) -> Result<f64> {
    let t = f64::from(u.arbitrary::<u16>()?) / f64::from(u16::MAX);
    if !(min <= max && (max - min).is_finite()) {
        return Ok(if t < 0.5 { min } else { max });
    }
    // Clamped: rounding must not carry the value past an edge.
    Ok((min + (max - min) * t).clamp(min, max))
}
