//! The smallest longitude interval covering a set of arcs on the 360-degree circle, and an
//! order-independent accumulator of covered longitudes for row groups and files.
//!
//! Pairwise interval unions (S2's `S1Interval::Union`) are minimal for two intervals but not for
//! a fold over many, and the fold depends on the order. Here the covered set is kept (exactly per
//! value; per accumulator in 256 bins that keep the exact extreme longitudes covered inside each
//! bin), and the cover is the complement of its largest gap. Merging bins is a min/max per bin, so
//! row groups and files can be folded in any order and give the same box.

/// An arc of longitudes in degrees from `lo` eastwards to `hi`, both in [-180, 180]; `lo > hi`
/// means the arc crosses the antimeridian (as a box's X range does). Values are kept exactly as
/// given, so that a cover built from them holds every input longitude bit for bit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Arc {
    pub lo: f64,
    pub hi: f64,
}

/// The X range of a box: `min_x > max_x` means the range crosses the antimeridian.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LonRange {
    pub min_x: f64,
    pub max_x: f64,
}

pub(crate) const FULL: LonRange = LonRange {
    min_x: -180.0,
    max_x: 180.0,
};

impl Arc {
    /// `hi` unwrapped past 180 when the arc crosses the antimeridian (for comparisons only).
    fn hi_unwrapped(self) -> f64 {
        if self.lo > self.hi {
            self.hi + 360.0
        } else {
            self.hi
        }
    }
}

/// The smallest range covering every arc (sorted in place), or `None` for no arcs.
pub(crate) fn smallest_cover(arcs: &mut [Arc]) -> Option<LonRange> {
    match arcs {
        [] => return None,
        // One arc (a point, one line or ring) covers itself.
        [a] => {
            return Some(LonRange {
                min_x: a.lo,
                max_x: a.hi,
            });
        }
        _ => {}
    }
    arcs.sort_unstable_by(|a, b| a.lo.total_cmp(&b.lo));
    let n = arcs.len();
    // Sweep the arcs twice round the circle, so that arcs crossing the antimeridian cover the
    // start again; gaps are read in the second round, when every arc has been seen. `reach` is
    // the furthest unwrapped end so far and `reach_hi` the same end as given.
    let shift = |i: usize| if i >= n { 360.0 } else { 0.0 };
    let (mut reach, mut reach_hi) = (f64::NEG_INFINITY, f64::NAN);
    // (gap length, the given longitude where the gap starts, index of the arc after the gap)
    let mut best: Option<(f64, f64, usize)> = None;
    for i in 0..2 * n - 1 {
        let a = arcs[i % n];
        let end = a.hi_unwrapped() + shift(i);
        if end > reach {
            (reach, reach_hi) = (end, a.hi);
        }
        if i + 1 < n {
            continue;
        }
        let next = (i + 1) % n;
        let gap = arcs[next].lo + shift(i + 1) - reach;
        if gap > 0.0 && best.is_none_or(|(len, _, _)| gap > len) {
            best = Some((gap, reach_hi, next));
        }
    }
    // The cover runs from the end of the largest gap round to its start.
    Some(match best {
        None => FULL,
        Some((_, start, next)) => LonRange {
            min_x: arcs[next].lo,
            max_x: start,
        },
    })
}

/// Bins of the covered-longitude accumulator.
const BINS: usize = 256;
const BIN_WIDTH: f64 = 360.0 / BINS as f64;

/// Covered longitudes of many boxes: per bin, the smallest and largest covered longitude in it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LonBins {
    min: [f64; BINS],
    max: [f64; BINS],
}

impl LonBins {
    pub fn new() -> Self {
        LonBins {
            min: [f64::INFINITY; BINS],
            max: [f64::NEG_INFINITY; BINS],
        }
    }

    fn bin(x: f64) -> usize {
        (((x + 180.0) / BIN_WIDTH) as usize).min(BINS - 1)
    }

    fn bin_lo(i: usize) -> f64 {
        -180.0 + i as f64 * BIN_WIDTH
    }

    /// Adds `[a, b]` with `-180 <= a <= b <= 180`.
    fn add_plain(&mut self, a: f64, b: f64) {
        let (ia, ib) = (Self::bin(a), Self::bin(b));
        for i in ia..=ib {
            let lo = if i == ia { a } else { Self::bin_lo(i) };
            let hi = if i == ib { b } else { Self::bin_lo(i + 1) };
            self.min[i] = self.min[i].min(lo);
            self.max[i] = self.max[i].max(hi);
        }
    }

    /// Adds a box's X range (wrapping when `min_x > max_x`); NaN is ignored, values are clamped
    /// to [-180, 180].
    pub fn add(&mut self, min_x: f64, max_x: f64) {
        if min_x.is_nan() || max_x.is_nan() {
            return;
        }
        let (a, b) = (min_x.clamp(-180.0, 180.0), max_x.clamp(-180.0, 180.0));
        if a <= b {
            self.add_plain(a, b);
        } else {
            self.add_plain(a, 180.0);
            self.add_plain(-180.0, b);
        }
    }

    pub fn merge(&mut self, other: &LonBins) {
        for i in 0..BINS {
            self.min[i] = self.min[i].min(other.min[i]);
            self.max[i] = self.max[i].max(other.max[i]);
        }
    }

    /// The smallest range covering everything added, `None` when nothing was.
    pub fn cover(&self) -> Option<LonRange> {
        let mut arcs: Vec<Arc> = (0..BINS)
            .filter(|&i| self.min[i] <= self.max[i])
            .map(|i| Arc {
                lo: self.min[i],
                hi: self.max[i],
            })
            .collect();
        smallest_cover(&mut arcs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cover(arcs: &[(f64, f64)]) -> LonRange {
        let mut a: Vec<Arc> = arcs.iter().map(|&(lo, hi)| Arc { lo, hi }).collect();
        smallest_cover(&mut a).unwrap()
    }

    #[test]
    fn complement_of_the_largest_gap() {
        // Gaps: 120 between -150 and -30 is the largest; the cover wraps from -30 to -150.
        let pts = [30.0, 60.0, -30.0, 150.0, -150.0].map(|x| (x, x));
        assert_eq!(
            cover(&pts),
            LonRange {
                min_x: -30.0,
                max_x: -150.0
            }
        );
        assert_eq!(
            cover(&[(10.0, 10.0), (100.0, 100.0), (-100.0, -100.0)]),
            LonRange {
                min_x: -100.0,
                max_x: 100.0
            }
        );
        // A wrapping arc swallows an arc inside its tail.
        assert_eq!(
            cover(&[(170.0, -160.0), (-170.0, -165.0)]),
            LonRange {
                min_x: 170.0,
                max_x: -160.0
            }
        );
        assert_eq!(
            cover(&[(0.0, 0.0)]),
            LonRange {
                min_x: 0.0,
                max_x: 0.0
            }
        );
        assert_eq!(cover(&[(-180.0, 180.0)]), FULL);
        // 180 and -180 are one meridian.
        assert_eq!(
            cover(&[(180.0, 180.0), (-180.0, -180.0)]),
            LonRange {
                min_x: 180.0,
                max_x: 180.0
            }
        );
    }

    #[test]
    fn bins_agree_with_exact_cover_and_any_order() {
        let boxes = [
            (170.0, -170.0),
            (10.0, 20.0),
            (-175.0, -160.0),
            (15.0, 40.0),
        ];
        let mut all = LonBins::new();
        boxes.iter().for_each(|&(a, b)| all.add(a, b));
        let mut rev = LonBins::new();
        boxes.iter().rev().for_each(|&(a, b)| rev.add(a, b));
        assert_eq!(all.cover(), rev.cover());
        assert_eq!(all.cover(), Some(cover(&boxes)));
        assert_eq!(
            all.cover(),
            Some(LonRange {
                min_x: 10.0,
                max_x: -160.0
            })
        );
    }
}
