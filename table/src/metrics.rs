//! Column metrics of data files, following Iceberg's `write.metadata.metrics.*` rules
//! (Java `MetricsConfig`, `MetricsModes`, `BinaryUtil`/`UnicodeUtil` truncation).

use std::collections::HashMap;

use iceberg::spec::{Datum, PrimitiveType, StructType, Type};
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

    /// Whether files written under this mode carry the column's bounds.
    pub fn has_bounds(self) -> bool {
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
    /// properties win. `columns` are the primitive fields as `(field id, name)`, nested ones
    /// by dotted name (`s.a`, `tags.element`, `m.key`), in field-id order (as Java limits them).
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

/// Bounds of one column over one data file, folded row group by row group.
#[derive(Debug, Default, Clone)]
struct ColumnBounds {
    lower: Option<Datum>,
    upper: Option<Datum>,
}

impl ColumnBounds {
    /// Bounds as stored under `mode`: truncated for strings and binaries only.
    pub(crate) fn bounds(&self, mode: MetricsMode) -> (Option<Datum>, Option<Datum>) {
        if !mode.has_bounds() {
            return (None, None);
        }
        let MetricsMode::Truncate(n) = mode else {
            return (self.lower.clone(), self.upper.clone());
        };
        // Truncation shortens strings and binaries only; a fixed, uuid or decimal bound is
        // kept whole (a shorter fixed value is no value of its type).
        let truncatable =
            |d: &Datum| matches!(d.data_type(), PrimitiveType::String | PrimitiveType::Binary);
        if !self.lower.iter().chain(&self.upper).all(truncatable) {
            return (self.lower.clone(), self.upper.clone());
        }
        let lower = self.lower.as_ref().map(|d| truncate_lower(d, n));
        let upper = self.upper.as_ref().and_then(|d| truncate_upper(d, n));
        (lower, upper)
    }
}

/// Bounds of one leaf column of a written Parquet file, from its footer statistics, stored
/// under `mode`.
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
    let mut m = ColumnBounds::default();
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
        (S::Int64(s), P::Time) => both(s.min_opt(), s.max_opt(), |v| Datum::time_micros(*v).ok()),
        (S::Int64(s), P::TimestampNs) => both(s.min_opt(), s.max_opt(), |v| {
            Some(Datum::timestamp_nanos(*v))
        }),
        (S::Int64(s), P::TimestamptzNs) => both(s.min_opt(), s.max_opt(), |v| {
            Some(Datum::timestamptz_nanos(*v))
        }),
        // Decimals: the unscaled value, as Iceberg serialises it (big-endian two's complement).
        (S::Int32(s), P::Decimal { .. }) => both(s.min_opt(), s.max_opt(), |v| {
            Datum::try_from_bytes(&i128::from(*v).to_be_bytes(), ty.clone()).ok()
        }),
        (S::Int64(s), P::Decimal { .. }) => both(s.min_opt(), s.max_opt(), |v| {
            Datum::try_from_bytes(&i128::from(*v).to_be_bytes(), ty.clone()).ok()
        }),
        (S::FixedLenByteArray(s), P::Decimal { .. } | P::Uuid | P::Fixed(_)) => {
            both(s.min_opt(), s.max_opt(), |v| {
                Datum::try_from_bytes(v.data(), ty.clone()).ok()
            })
        }
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

/// Primitive fields as `(field id, dotted name)` in the order Iceberg counts them against
/// `max-inferred-column-defaults`: a struct's primitive fields first, then its nested ones
/// depth-first (see `metrics_position`).
pub(crate) fn inferred_metrics_order(schema: &StructType) -> Vec<(i32, String)> {
    fn name(prefix: Option<&str>, field: &str) -> String {
        match prefix {
            Some(p) => format!("{p}.{field}"),
            None => field.to_string(),
        }
    }
    fn in_struct(s: &StructType, prefix: Option<&str>, out: &mut Vec<(i32, String)>) {
        for f in s.fields() {
            if f.field_type.is_primitive() {
                out.push((f.id, name(prefix, &f.name)));
            }
        }
        for f in s.fields() {
            if !f.field_type.is_primitive() {
                nested(&f.field_type, &name(prefix, &f.name), out);
            }
        }
    }
    fn nested(ty: &Type, path: &str, out: &mut Vec<(i32, String)>) {
        match ty {
            Type::Primitive(_) => {}
            Type::Struct(s) => in_struct(s, Some(path), out),
            Type::List(l) => child(
                &l.element_field.field_type,
                l.element_field.id,
                path,
                "element",
                out,
            ),
            Type::Map(m) => {
                child(&m.key_field.field_type, m.key_field.id, path, "key", out);
                child(
                    &m.value_field.field_type,
                    m.value_field.id,
                    path,
                    "value",
                    out,
                );
            }
        }
    }
    fn child(ty: &Type, id: i32, path: &str, part: &str, out: &mut Vec<(i32, String)>) {
        let path = format!("{path}.{part}");
        match ty.is_primitive() {
            true => out.push((id, path)),
            false => nested(ty, &path, out),
        }
    }
    let mut out = Vec::new();
    in_struct(schema, None, &mut out);
    out
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
    fn footer_bounds_skip_nan_and_null() {
        use std::sync::Arc;
        let column =
            arrow_array::Float64Array::from(vec![Some(f64::NAN), Some(2.0), None, Some(-1.0)]);
        let schema = Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
            "v",
            arrow_schema::DataType::Float64,
            true,
        )]));
        let batch =
            arrow_array::RecordBatch::try_new(schema.clone(), vec![Arc::new(column)]).unwrap();
        let mut buf = Vec::new();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, schema, None).unwrap();
        w.write(&batch).unwrap();
        let footer = w.close().unwrap();
        let (lo, hi) = footer_bounds(&footer, 0, &PrimitiveType::Double, MetricsMode::Full);
        assert_eq!(lo, Some(Datum::double(-1.0)));
        assert_eq!(hi, Some(Datum::double(2.0)));
        let none = footer_bounds(&footer, 0, &PrimitiveType::Double, MetricsMode::Counts);
        assert_eq!(none, (None, None));
    }
}
