//! `CALL ... expire_snapshots(...)` and `CALL ... remove_orphan_files(...)`: Iceberg's
//! maintenance procedures, with Iceberg's argument names. An argument left out stays `None`;
//! the executor applies Iceberg's default (see each field). And geoberg's
//! `CALL ... maintain(table => ...)`, which runs the maintenance that is due.

use std::fmt;
use std::time::{Duration, SystemTime};

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Timelike, Utc};
use sqlparser::ast::{DataType, Expr, FunctionArg, FunctionArgExpr, FunctionArguments};

use crate::error::SqlError;
use crate::name::{TableName, string_value};
use crate::predicate::{Literal, function_name, literal};
use crate::procedure::{CallArgs, write_call_head};

/// The timestamp format of `older_than`, named when a timestamp is refused.
pub const TIMESTAMP_FORMAT: &str = "'YYYY-MM-DD HH:MM:SS[.fraction]' in UTC (or 'YYYY-MM-DD')";

/// Iceberg's default `older_than` of `expire_snapshots`: 5 days before now.
pub const EXPIRE_SNAPSHOTS_DEFAULT_AGE: Duration = Duration::from_secs(5 * 24 * 3600);
/// Iceberg's default `retain_last` of `expire_snapshots`.
pub const EXPIRE_SNAPSHOTS_DEFAULT_RETAIN_LAST: u32 = 1;
/// Iceberg's default `older_than` of `remove_orphan_files`: 3 days before now.
pub const REMOVE_ORPHAN_FILES_DEFAULT_AGE: Duration = Duration::from_secs(3 * 24 * 3600);

/// The `older_than` argument: a point in time, or a time relative to when the procedure runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OlderThan {
    /// `TIMESTAMP '2026-01-01 00:00:00'` or `'2026-01-01 00:00:00'`, read as UTC.
    At(SystemTime),
    /// `TIMESTAMPADD(DAY, -30, CURRENT_TIMESTAMP)`: this long before the procedure runs
    /// (whole seconds).
    BeforeNow(Duration),
}

impl OlderThan {
    /// The horizon for a procedure that runs at `now`.
    pub fn resolve(self, now: SystemTime) -> SystemTime {
        match self {
            OlderThan::At(t) => t,
            OlderThan::BeforeNow(d) => now.checked_sub(d).unwrap_or(SystemTime::UNIX_EPOCH),
        }
    }
}

impl fmt::Display for OlderThan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OlderThan::At(t) => match utc(*t) {
                Some(t) => write!(f, "TIMESTAMP '{}'", t.format("%Y-%m-%d %H:%M:%S%.f")),
                // Only a time built in code can be out of chrono's range; parsing never
                // yields one.
                None => write!(f, "TIMESTAMP '{t:?} is out of range'"),
            },
            OlderThan::BeforeNow(d) => {
                write!(
                    f,
                    "TIMESTAMPADD(SECOND, -{}, CURRENT_TIMESTAMP)",
                    d.as_secs()
                )
            }
        }
    }
}

/// `CALL <catalog>.system.expire_snapshots(table => 'db.t' [, older_than => ...]
/// [, retain_last => n])`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpireSnapshotsRequest {
    /// The table, with the procedure's catalog in front when the argument had none.
    pub table: TableName,
    /// Snapshots older than this are expired; `None`: 5 days before now
    /// ([`EXPIRE_SNAPSHOTS_DEFAULT_AGE`]).
    pub older_than: Option<OlderThan>,
    /// The most recent snapshots kept whatever their age, at least 1; `None`: 1.
    pub retain_last: Option<u32>,
}

impl ExpireSnapshotsRequest {
    /// `older_than` with Iceberg's default applied, for a procedure that runs at `now`.
    pub fn horizon(&self, now: SystemTime) -> SystemTime {
        self.older_than
            .unwrap_or(OlderThan::BeforeNow(EXPIRE_SNAPSHOTS_DEFAULT_AGE))
            .resolve(now)
    }

    /// `retain_last` with Iceberg's default applied.
    pub fn retain_last_or_default(&self) -> u32 {
        self.retain_last
            .unwrap_or(EXPIRE_SNAPSHOTS_DEFAULT_RETAIN_LAST)
    }

    /// The canonical `CALL` statement; parsing it gives an equal request.
    pub fn to_sql(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for ExpireSnapshotsRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_call_head(f, "expire_snapshots", &self.table)?;
        if let Some(t) = &self.older_than {
            write!(f, ", older_than => {t}")?;
        }
        if let Some(n) = self.retain_last {
            write!(f, ", retain_last => {n}")?;
        }
        f.write_str(")")
    }
}

/// `CALL <catalog>.system.remove_orphan_files(table => 'db.t' [, older_than => ...]
/// [, dry_run => true|false])`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoveOrphanFilesRequest {
    /// The table, with the procedure's catalog in front when the argument had none.
    pub table: TableName,
    /// Only files last modified before this are orphans; `None`: 3 days before now
    /// ([`REMOVE_ORPHAN_FILES_DEFAULT_AGE`]).
    pub older_than: Option<OlderThan>,
    /// List the orphans without deleting them; `None`: false.
    pub dry_run: Option<bool>,
}

impl RemoveOrphanFilesRequest {
    /// `older_than` with Iceberg's default applied, for a procedure that runs at `now`.
    pub fn horizon(&self, now: SystemTime) -> SystemTime {
        self.older_than
            .unwrap_or(OlderThan::BeforeNow(REMOVE_ORPHAN_FILES_DEFAULT_AGE))
            .resolve(now)
    }

    /// `dry_run` with Iceberg's default (false) applied.
    pub fn is_dry_run(&self) -> bool {
        self.dry_run.unwrap_or(false)
    }

    /// The canonical `CALL` statement; parsing it gives an equal request.
    pub fn to_sql(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for RemoveOrphanFilesRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_call_head(f, "remove_orphan_files", &self.table)?;
        if let Some(t) = &self.older_than {
            write!(f, ", older_than => {t}")?;
        }
        if let Some(d) = self.dry_run {
            write!(f, ", dry_run => {d}")?;
        }
        f.write_str(")")
    }
}

/// The request of `CALL ... expire_snapshots(...)`, from its bound arguments.
/// `CALL <catalog>.system.maintain(table => 'db.t')`: the maintenance that is due (incremental
/// clustering past the table's thresholds, `rewrite_manifests`, expiry per its retention).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaintainRequest {
    /// The table, with the procedure's catalog in front when the argument had none.
    pub table: TableName,
}

impl fmt::Display for MaintainRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_call_head(f, "maintain", &self.table)?;
        f.write_str(")")
    }
}

/// The request of `CALL ... maintain(...)`, from its bound arguments.
pub(crate) fn maintain_from_call(args: &CallArgs<'_>) -> Result<MaintainRequest, SqlError> {
    Ok(MaintainRequest {
        table: args.table()?,
    })
}

pub(crate) fn expire_snapshots_from_call(
    args: &CallArgs<'_>,
) -> Result<ExpireSnapshotsRequest, SqlError> {
    let table = args.table()?;
    let older_than = args.get("older_than").map(older_than).transpose()?;
    let retain_last = args
        .get("retain_last")
        .map(|e| match literal(e) {
            Ok(Literal::Integer(n)) if n >= 1 => u32::try_from(n).map_err(|_| n.to_string()),
            _ => Err(e.to_string()),
        })
        .transpose()
        .map_err(|found| {
            SqlError::invalid(
                "argument `retain_last`",
                format!(
                    "{found} is not a snapshot count; give a whole number from 1 to {} \
                     (Iceberg keeps at least one snapshot)",
                    u32::MAX
                ),
            )
        })?;
    Ok(ExpireSnapshotsRequest {
        table,
        older_than,
        retain_last,
    })
}

/// The request of `CALL ... remove_orphan_files(...)`, from its bound arguments.
pub(crate) fn remove_orphan_files_from_call(
    args: &CallArgs<'_>,
) -> Result<RemoveOrphanFilesRequest, SqlError> {
    let table = args.table()?;
    let older_than = args.get("older_than").map(older_than).transpose()?;
    let dry_run = args
        .get("dry_run")
        .map(|e| match literal(e) {
            Ok(Literal::Boolean(b)) => Ok(b),
            _ => Err(SqlError::invalid(
                "argument `dry_run`",
                format!("expected true or false, found {e}"),
            )),
        })
        .transpose()?;
    Ok(RemoveOrphanFilesRequest {
        table,
        older_than,
        dry_run,
    })
}

/// Units of `TIMESTAMPADD(<unit>, -n, CURRENT_TIMESTAMP)`, in seconds.
const UNITS: [(&str, u64); 5] = [
    ("SECOND", 1),
    ("MINUTE", 60),
    ("HOUR", 3600),
    ("DAY", 86_400),
    ("WEEK", 604_800),
];

/// `TIMESTAMP '...'`, `'...'` or `TIMESTAMPADD(<unit>, -n, CURRENT_TIMESTAMP)`.
fn older_than(expr: &Expr) -> Result<OlderThan, SqlError> {
    let usage = format!(
        "write older_than => TIMESTAMP {TIMESTAMP_FORMAT}, or \
         TIMESTAMPADD(DAY, -<n>, CURRENT_TIMESTAMP)"
    );
    let text = match expr {
        Expr::TypedString(ts) if matches!(ts.data_type, DataType::Timestamp(..)) => {
            string_value(&ts.value.value).map(str::to_string)
        }
        Expr::Function(f) if function_name(f).eq_ignore_ascii_case("timestampadd") => {
            return before_now(&f.args)
                .map(OlderThan::BeforeNow)
                .ok_or_else(|| {
                    SqlError::invalid(
                        "argument `older_than`",
                        format!(
                            "`{expr}` is not TIMESTAMPADD(<unit>, -<n>, CURRENT_TIMESTAMP) with \
                             a unit among SECOND, MINUTE, HOUR, DAY, WEEK and a count of 0 or \
                             less; {usage}"
                        ),
                    )
                });
        }
        _ => match literal(expr) {
            Ok(Literal::String(s)) => Some(s),
            _ => None,
        },
    };
    let Some(text) = text else {
        return Err(SqlError::invalid(
            "argument `older_than`",
            format!("expected a timestamp, found {expr}; {usage}"),
        ));
    };
    parse_timestamp(&text).map(OlderThan::At).ok_or_else(|| {
        SqlError::invalid(
            "argument `older_than`",
            format!("'{text}' is not a timestamp; {usage}"),
        )
    })
}

/// `TIMESTAMPADD(<unit>, -n, CURRENT_TIMESTAMP)` as the time before now, when it is one.
fn before_now(args: &FunctionArguments) -> Option<Duration> {
    let FunctionArguments::List(list) = args else {
        return None;
    };
    let plain: Vec<&Expr> = list
        .args
        .iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let [unit, count, base] = plain.as_slice() else {
        return None;
    };
    let unit = match unit {
        Expr::Identifier(i) if i.quote_style.is_none() => i.value.to_ascii_uppercase(),
        _ => return None,
    };
    let seconds = UNITS.iter().find(|(u, _)| *u == unit)?.1;
    let count = match literal(count) {
        Ok(Literal::Integer(n)) if n <= 0 => n.unsigned_abs(),
        _ => return None,
    };
    let is_now = match base {
        Expr::Function(f) => {
            function_name(f).eq_ignore_ascii_case("current_timestamp")
                && matches!(f.args, FunctionArguments::None)
        }
        Expr::Identifier(i) => {
            i.quote_style.is_none() && i.value.eq_ignore_ascii_case("current_timestamp")
        }
        _ => false,
    };
    if !is_now {
        return None;
    }
    Some(Duration::from_secs(count.checked_mul(seconds)?))
}

/// A UTC timestamp in [`TIMESTAMP_FORMAT`].
fn parse_timestamp(text: &str) -> Option<SystemTime> {
    let text = text.trim();
    let naive = ["%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f"]
        .iter()
        .find_map(|format| NaiveDateTime::parse_from_str(text, format).ok())
        .or_else(|| {
            NaiveDate::parse_from_str(text, "%Y-%m-%d")
                .ok()?
                .and_hms_opt(0, 0, 0)
        })?;
    // Four-digit years only, and no leap second: both render back the way they were read.
    if !(0..=9999).contains(&naive.year()) || naive.nanosecond() >= 1_000_000_000 {
        return None;
    }
    Some(naive.and_utc().into())
}

/// `t` as a UTC date and time, when chrono can represent it.
fn utc(t: SystemTime) -> Option<DateTime<Utc>> {
    let (secs, nanos) = match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => (i64::try_from(d.as_secs()).ok()?, d.subsec_nanos()),
        Err(e) => {
            let d = e.duration();
            let secs = -i64::try_from(d.as_secs()).ok()?;
            match d.subsec_nanos() {
                0 => (secs, 0),
                n => (secs.checked_sub(1)?, 1_000_000_000 - n),
            }
        }
    };
    DateTime::from_timestamp(secs, nanos)
}
