//! Column metrics of data files, following Iceberg's `write.metadata.metrics.*` rules
//! (Java `MetricsConfig`, `MetricsModes`, `BinaryUtil`/`UnicodeUtil` truncation).

use std::collections::HashMap;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Float32Type, Float64Type, Int32Type, Int64Type, TimestampMicrosecondType,
};
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType as ArrowType;
use iceberg::spec::{Datum, PrimitiveType};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::statistics::Statistics;

use crate::error::{Error, Result};

/// `write.metadata.metrics.default`.
pub const METRICS_DEFAULT: &str = "write.metadata.metrics.default";
/// Prefix of `write.metadata.metrics.column.<col>`.
pub const METRICS_COLUMN_PREFIX: &str = "write.metadata.metrics.column.";
/// `write.metadata.metrics.max-inferred-column-defaults`.
pub const METRICS_MAX_INFERRED: &str = "write.metadata.metrics.max-inferred-column-defaults";
const DEFAULT_MAX_INFERRED: usize = 100;

/// How much a data-file entry says about one column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsMode {
    /// Nothing.
    None,
    /// Value, null and NaN counts.
    Counts,
    /// Counts plus bounds; strings and binaries cut to N characters / bytes.
    Truncate(usize),
    /// Counts plus exact bounds.
    Full,
}

impl MetricsMode {
    /// Parses `none`, `counts`, `truncate(N)` (N > 0) or `full`, case-insensitively.
    pub fn parse(key: &str, value: &str) -> Result<Self> {
        let v = value.trim().to_ascii_lowercase();
        let bad = || Error::InvalidProperty {
            key: key.to_string(),
            value: value.to_string(),
            reason: "expected none, counts, truncate(N) with N > 0, or full".into(),
        };
        match v.as_str() {
            "none" => Ok(MetricsMode::None),
            "counts" => Ok(MetricsMode::Counts),
            "full" => Ok(MetricsMode::Full),
            _ => {
                let n = v
                    .strip_prefix("truncate(")
                    .and_then(|r| r.strip_suffix(')'))
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|&n| n > 0)
                    .ok_or_else(bad)?;
                Ok(MetricsMode::Truncate(n))
            }
        }
    }

    fn has_bounds(self) -> bool {
        matches!(self, MetricsMode::Truncate(_) | MetricsMode::Full)
    }
}

/// The mode of every column of a table, resolved once per write.
#[derive(Debug, Clone)]
pub struct MetricsConfig {
    modes: HashMap<i32, MetricsMode>,
}

impl MetricsConfig {
    /// Resolves modes as Java does: an explicit default applies to all columns and lifts the
    /// column cap; otherwise the first `max-inferred-column-defaults` (100) columns get
    /// `truncate(16)` and the rest `none`; sort columns are raised to `truncate(16)`; per-column
    /// properties win. `columns` are `(field id, name)` in schema order.
    pub fn new(
        properties: &HashMap<String, String>,
        columns: &[(i32, String)],
        sort_columns: &[i32],
    ) -> Result<Self> {
        let truncate16 = MetricsMode::Truncate(16);
        let explicit_default = properties
            .get(METRICS_DEFAULT)
            .map(|v| MetricsMode::parse(METRICS_DEFAULT, v))
            .transpose()?;
        let limit = match properties.get(METRICS_MAX_INFERRED) {
            Some(v) => v
                .trim()
                .parse::<i64>()
                .map_err(|_| Error::InvalidProperty {
                    key: METRICS_MAX_INFERRED.into(),
                    value: v.clone(),
                    reason: "expected an integer column count".into(),
                })?,
            None => DEFAULT_MAX_INFERRED as i64,
        };
        let limit = usize::try_from(limit).unwrap_or(DEFAULT_MAX_INFERRED);
        let mut modes = HashMap::with_capacity(columns.len());
        for (i, (id, name)) in columns.iter().enumerate() {
            let mut mode = match explicit_default {
                Some(m) => m,
                None if i < limit => truncate16,
                None => MetricsMode::None,
            };
            if sort_columns.contains(id) && matches!(mode, MetricsMode::None | MetricsMode::Counts)
            {
                mode = truncate16;
            }
            let key = format!("{METRICS_COLUMN_PREFIX}{name}");
            if let Some(v) = properties.get(&key) {
                mode = MetricsMode::parse(&key, v)?;
            }
            modes.insert(*id, mode);
        }
        Ok(Self { modes })
    }

    /// Mode of a column (`none` for unknown ids).
    pub fn mode(&self, field_id: i32) -> MetricsMode {
        self.modes
            .get(&field_id)
            .copied()
            .unwrap_or(MetricsMode::None)
    }
}

/// Counts and bounds of one column over one data file, built batch by batch.
#[derive(Debug, Default, Clone)]
pub(crate) struct ColumnMetrics {
    pub values: u64,
    pub nulls: u64,
    pub nans: Option<u64>,
    pub lower: Option<Datum>,
    pub upper: Option<Datum>,
}

impl ColumnMetrics {
    /// Folds one array in; `ty` is the column's Iceberg type.
    pub(crate) fn update(&mut self, array: &ArrayRef, ty: &PrimitiveType, with_bounds: bool) {
        self.values += array.len() as u64;
        self.nulls += array.null_count() as u64;
        let (lo, hi, nans) = if with_bounds {
            array_min_max(array, ty)
        } else {
            (None, None, nan_count(array))
        };
        if let Some(n) = nans {
            *self.nans.get_or_insert(0) += n;
        }
        merge(&mut self.lower, lo, std::cmp::Ordering::Less);
        merge(&mut self.upper, hi, std::cmp::Ordering::Greater);
    }

    /// Bounds as stored under `mode`: truncated for strings and binaries only.
    pub(crate) fn bounds(&self, mode: MetricsMode) -> (Option<Datum>, Option<Datum>) {
        if !mode.has_bounds() {
            return (None, None);
        }
        let MetricsMode::Truncate(n) = mode else {
            return (self.lower.clone(), self.upper.clone());
        };
        let lower = self.lower.as_ref().map(|d| truncate_lower(d, n));
        let upper = self.upper.as_ref().and_then(|d| truncate_upper(d, n));
        (lower, upper)
    }
}

/// Bounds of one leaf column of a written Parquet file, from its footer statistics, stored
/// under `mode` as [`ColumnMetrics::bounds`] stores bounds computed from Arrow arrays.
///
/// For files written by someone else's writer (the rewrite): row-group min/max are folded
/// with the same merge and truncation rules. Bounds are omitted when any row group that holds
/// values has no usable min/max, or when the Parquet type does not map to `ty` exactly.
pub(crate) fn footer_bounds(
    footer: &ParquetMetaData,
    leaf: usize,
    ty: &PrimitiveType,
    mode: MetricsMode,
) -> (Option<Datum>, Option<Datum>) {
    if !mode.has_bounds() {
        return (None, None);
    }
    let mut m = ColumnMetrics::default();
    for rg in footer.row_groups() {
        let Some(chunk) = rg.columns().get(leaf) else {
            return (None, None);
        };
        let stats = chunk.statistics();
        let all_null = stats
            .and_then(|s| s.null_count_opt())
            .is_some_and(|n| n as i64 == chunk.num_values());
        if chunk.num_values() == 0 || all_null {
            continue;
        }
        let Some((lo, hi)) = stats.and_then(|s| statistics_datums(s, ty)) else {
            return (None, None);
        };
        merge(&mut m.lower, Some(lo), std::cmp::Ordering::Less);
        merge(&mut m.upper, Some(hi), std::cmp::Ordering::Greater);
    }
    m.bounds(mode)
}

/// Min and max of one column chunk as Iceberg values of type `ty`.
fn statistics_datums(stats: &Statistics, ty: &PrimitiveType) -> Option<(Datum, Datum)> {
    use PrimitiveType as P;
    use Statistics as S;
    fn both<T>(
        min: Option<&T>,
        max: Option<&T>,
        f: impl Fn(&T) -> Option<Datum>,
    ) -> Option<(Datum, Datum)> {
        Some((f(min?)?, f(max?)?))
    }
    match (stats, ty) {
        (S::Boolean(s), P::Boolean) => both(s.min_opt(), s.max_opt(), |v| Some(Datum::bool(*v))),
        (S::Int32(s), P::Int) => both(s.min_opt(), s.max_opt(), |v| Some(Datum::int(*v))),
        (S::Int32(s), P::Date) => both(s.min_opt(), s.max_opt(), |v| Some(Datum::date(*v))),
        (S::Int64(s), P::Long) => both(s.min_opt(), s.max_opt(), |v| Some(Datum::long(*v))),
        (S::Int64(s), P::Timestamp) => both(s.min_opt(), s.max_opt(), |v| {
            Some(Datum::timestamp_micros(*v))
        }),
        (S::Int64(s), P::Timestamptz) => both(s.min_opt(), s.max_opt(), |v| {
            Some(Datum::timestamptz_micros(*v))
        }),
        (S::Float(s), P::Float) => both(s.min_opt(), s.max_opt(), |v| Some(Datum::float(*v))),
        (S::Double(s), P::Double) => both(s.min_opt(), s.max_opt(), |v| Some(Datum::double(*v))),
        // A truncated string statistic may end inside a code point: then it bounds nothing.
        (S::ByteArray(s), P::String) => both(s.min_opt(), s.max_opt(), |v| {
            std::str::from_utf8(v.data()).ok().map(Datum::string)
        }),
        (S::ByteArray(s), P::Binary) => both(s.min_opt(), s.max_opt(), |v| {
            Some(Datum::binary(v.data().iter().copied()))
        }),
        _ => None,
    }
}

fn merge(acc: &mut Option<Datum>, new: Option<Datum>, keep: std::cmp::Ordering) {
    if let Some(new) = new {
        match acc {
            Some(cur) if new.partial_cmp(cur) != Some(keep) => {}
            _ => *acc = Some(new),
        }
    }
}

fn nan_count(array: &ArrayRef) -> Option<u64> {
    match array.data_type() {
        ArrowType::Float32 => Some(
            array
                .as_primitive::<Float32Type>()
                .iter()
                .flatten()
                .filter(|v| v.is_nan())
                .count() as u64,
        ),
        ArrowType::Float64 => Some(
            array
                .as_primitive::<Float64Type>()
                .iter()
                .flatten()
                .filter(|v| v.is_nan())
                .count() as u64,
        ),
        _ => None,
    }
}

/// Min and max of the non-null, non-NaN values, plus the NaN count for floats.
fn array_min_max(
    array: &ArrayRef,
    ty: &PrimitiveType,
) -> (Option<Datum>, Option<Datum>, Option<u64>) {
    fn ord<T: PartialOrd + Copy>(it: impl Iterator<Item = T>) -> Option<(T, T)> {
        it.fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((if v < lo { v } else { lo }, if v > hi { v } else { hi })),
        })
    }
    fn pair<T>(mm: Option<(T, T)>, f: impl Fn(T) -> Datum) -> (Option<Datum>, Option<Datum>) {
        match mm {
            Some((lo, hi)) => (Some(f(lo)), Some(f(hi))),
            None => (None, None),
        }
    }
    let (lo, hi) = match (array.data_type(), ty) {
        (ArrowType::Boolean, _) => pair(ord(array.as_boolean().iter().flatten()), Datum::bool),
        (ArrowType::Int32, _) => pair(
            ord(array.as_primitive::<Int32Type>().iter().flatten()),
            Datum::int,
        ),
        (ArrowType::Int64, _) => pair(
            ord(array.as_primitive::<Int64Type>().iter().flatten()),
            Datum::long,
        ),
        (ArrowType::Float32, _) => pair(
            ord(array
                .as_primitive::<Float32Type>()
                .iter()
                .flatten()
                .filter(|v| !v.is_nan())),
            Datum::float,
        ),
        (ArrowType::Float64, _) => pair(
            ord(array
                .as_primitive::<Float64Type>()
                .iter()
                .flatten()
                .filter(|v| !v.is_nan())),
            Datum::double,
        ),
        (ArrowType::Date32, _) => pair(
            ord(array.as_primitive::<Date32Type>().iter().flatten()),
            Datum::date,
        ),
        (ArrowType::Timestamp(_, _), PrimitiveType::Timestamptz) => pair(
            ord(array
                .as_primitive::<TimestampMicrosecondType>()
                .iter()
                .flatten()),
            Datum::timestamptz_micros,
        ),
        (ArrowType::Timestamp(_, _), _) => pair(
            ord(array
                .as_primitive::<TimestampMicrosecondType>()
                .iter()
                .flatten()),
            Datum::timestamp_micros,
        ),
        (ArrowType::Utf8, _) => pair(
            ord(array.as_string::<i32>().iter().flatten()),
            Datum::string,
        ),
        (ArrowType::LargeUtf8, _) => pair(
            ord(array.as_string::<i64>().iter().flatten()),
            Datum::string,
        ),
        (ArrowType::Utf8View, _) => {
            pair(ord(array.as_string_view().iter().flatten()), Datum::string)
        }
        (ArrowType::Binary, _) => pair(ord(array.as_binary::<i32>().iter().flatten()), |b| {
            Datum::binary(b.iter().copied())
        }),
        (ArrowType::LargeBinary, _) => pair(ord(array.as_binary::<i64>().iter().flatten()), |b| {
            Datum::binary(b.iter().copied())
        }),
        (ArrowType::BinaryView, _) => pair(ord(array.as_binary_view().iter().flatten()), |b| {
            Datum::binary(b.iter().copied())
        }),
        _ => (None, None),
    };
    (lo, hi, nan_count(array))
}

fn truncate_lower(d: &Datum, n: usize) -> Datum {
    match d.literal() {
        iceberg::spec::PrimitiveLiteral::String(s) => {
            Datum::string(s.chars().take(n).collect::<String>())
        }
        iceberg::spec::PrimitiveLiteral::Binary(b) if b.len() > n => {
            Datum::binary(b[..n].iter().copied())
        }
        _ => d.clone(),
    }
}

/// Smallest value of at most `n` units that is ≥ every value with the same prefix; `None` when
/// no such value exists (all units at their maximum), in which case no upper bound is stored.
fn truncate_upper(d: &Datum, n: usize) -> Option<Datum> {
    match d.literal() {
        iceberg::spec::PrimitiveLiteral::String(s) if s.chars().count() > n => {
            let mut chars: Vec<char> = s.chars().take(n).collect();
            while let Some(last) = chars.pop() {
                let next = (last as u32 + 1..=char::MAX as u32).find_map(char::from_u32);
                if let Some(c) = next {
                    chars.push(c);
                    return Some(Datum::string(chars.into_iter().collect::<String>()));
                }
            }
            None
        }
        iceberg::spec::PrimitiveLiteral::Binary(b) if b.len() > n => {
            let mut bytes = b[..n].to_vec();
            while let Some(last) = bytes.pop() {
                if last < u8::MAX {
                    bytes.push(last + 1);
                    return Some(Datum::binary(bytes));
                }
            }
            None
        }
        _ => Some(d.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(kv: &[(&str, &str)]) -> HashMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn cols(n: usize) -> Vec<(i32, String)> {
        (1..=n as i32).map(|i| (i, format!("c{i}"))).collect()
    }

    #[test]
    fn default_cap_and_overrides_follow_java() {
        let c = MetricsConfig::new(&props(&[]), &cols(150), &[]).unwrap();
        assert_eq!(c.mode(1), MetricsMode::Truncate(16));
        assert_eq!(c.mode(100), MetricsMode::Truncate(16));
        assert_eq!(c.mode(101), MetricsMode::None);
        // sort columns are promoted even past the cap
        let c = MetricsConfig::new(&props(&[]), &cols(150), &[120]).unwrap();
        assert_eq!(c.mode(120), MetricsMode::Truncate(16));
        // an explicit default lifts the cap
        let c =
            MetricsConfig::new(&props(&[(METRICS_DEFAULT, "counts")]), &cols(150), &[]).unwrap();
        assert_eq!(c.mode(150), MetricsMode::Counts);
        let c = MetricsConfig::new(
            &props(&[
                (METRICS_MAX_INFERRED, "2"),
                ("write.metadata.metrics.column.c3", "full"),
            ]),
            &cols(4),
            &[],
        )
        .unwrap();
        assert_eq!(c.mode(2), MetricsMode::Truncate(16));
        assert_eq!(c.mode(3), MetricsMode::Full);
        assert_eq!(c.mode(4), MetricsMode::None);
        let err = MetricsConfig::new(&props(&[(METRICS_DEFAULT, "truncate(0)")]), &cols(1), &[])
            .unwrap_err();
        assert!(err.to_string().contains("truncate(N)"));
    }

    #[test]
    fn truncation_applies_to_strings_and_binary_only() {
        let s = Datum::string("abcdefghijklmnopqrstuvwxyz");
        assert_eq!(truncate_lower(&s, 3), Datum::string("abc"));
        assert_eq!(truncate_upper(&s, 3), Some(Datum::string("abd")));
        let b = Datum::binary(vec![1, 0xff, 0xff, 7]);
        assert_eq!(truncate_upper(&b, 3), Some(Datum::binary(vec![2])));
        assert_eq!(truncate_upper(&Datum::binary(vec![0xff, 0xff, 1]), 2), None);
        let d = Datum::double(1.5);
        assert_eq!(truncate_lower(&d, 1), d);
        assert_eq!(truncate_upper(&d, 1), Some(d));
    }

    #[test]
    fn nan_is_counted_not_bounded() {
        let a: ArrayRef = std::sync::Arc::new(arrow_array::Float64Array::from(vec![
            Some(f64::NAN),
            Some(2.0),
            None,
            Some(-1.0),
        ]));
        let mut m = ColumnMetrics::default();
        m.update(&a, &PrimitiveType::Double, true);
        assert_eq!((m.values, m.nulls, m.nans), (4, 1, Some(1)));
        assert_eq!(m.lower, Some(Datum::double(-1.0)));
        assert_eq!(m.upper, Some(Datum::double(2.0)));
    }
}
