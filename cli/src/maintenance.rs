//! `geoberg maintain`, `geoberg expire-snapshots` and `geoberg remove-orphans`: table
//! housekeeping.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use geoberg_table::Table;
use serde_json::json;

use crate::args::{ExpireArgs, GlobalArgs, MaintainArgs, OrphanArgs};
use crate::context::{Access, Context};
use crate::error::{CliError, Result};

/// Expires snapshots older than `--older-than`, keeping the last `--retain-last`.
pub fn expire_snapshots(global: &GlobalArgs, args: &ExpireArgs) -> Result<()> {
    let cutoff = parse_time(&args.older_than, now_ms())?;
    if args.retain_last == 0 {
        return Err(CliError::invalid(
            "--retain-last",
            0,
            "at least 1: the current snapshot is always kept",
        ));
    }
    let ctx = Context::open(global, Access::Existing)?;
    let table = ctx.load(&args.table)?;
    expire(&ctx, &table, cutoff, args.retain_last)
}

/// Runs the maintenance that is due ([`Table::maintain`]) and reports each step.
pub fn maintain(global: &GlobalArgs, args: &MaintainArgs) -> Result<()> {
    let ctx = Context::open(global, Access::Existing)?;
    let table = ctx.load(&args.table)?;
    let (table, report) = table.maintain()?;
    let mut text = format!("maintained {}\n", table.ident());
    text.push_str(&format!("clustering: {}\n", report.clustering_reason));
    if let Some(r) = &report.clustering {
        text.push_str(&format!(
            "  rewrote {} files ({} bytes) into {}\n",
            r.rewritten_data_files_count, r.rewritten_bytes_count, r.added_data_files_count
        ));
    }
    text.push_str(&format!(
        "manifests: {}{}\n",
        report.manifests,
        match &report.manifest_rewrite {
            Some(r) => format!(", rewritten into {}", r.added_manifests_count),
            None => ", below the threshold".to_string(),
        }
    ));
    text.push_str(&format!(
        "expired {} snapshots, deleted {} files\n",
        report.expiry.expired_snapshots.len(),
        report.expiry.deleted_files.len()
    ));
    let clustering = report.clustering.as_ref().map(|r| {
        json!({
            "rewritten_data_files_count": r.rewritten_data_files_count,
            "rewritten_bytes_count": r.rewritten_bytes_count,
            "added_data_files_count": r.added_data_files_count,
            "added_bytes_count": r.added_bytes_count,
            "snapshot_ids": r.snapshot_ids,
        })
    });
    ctx.output.emit(
        text,
        json!({
            "table": table.ident().to_string(),
            "column": report.column,
            "overlap_depth": report.overlap_depth,
            "new_files": report.new_files,
            "clustering_reason": report.clustering_reason,
            "clustering": clustering,
            "manifests": report.manifests,
            "manifests_rewritten": report.manifest_rewrite.as_ref().map(|r| r.added_manifests_count),
            "expired_snapshots": report.expiry.expired_snapshots,
            "deleted_files": report.expiry.deleted_files,
        }),
    );
    Ok(())
}

/// Lists (`--dry-run`) or deletes files under the table location that no snapshot references.
pub fn remove_orphans(global: &GlobalArgs, args: &OrphanArgs) -> Result<()> {
    let cutoff = parse_time(&args.older_than, now_ms())?;
    let ctx = Context::open(global, Access::Existing)?;
    let table = ctx.load(&args.table)?;
    orphans(&ctx, &table, cutoff, args.dry_run)
}

/// Expires through `Table::expire_snapshots` (an atomic metadata commit, then deletes of the
/// files only the expired snapshots referenced).
fn expire(ctx: &Context, table: &Table, cutoff_ms: i64, retain_last: usize) -> Result<()> {
    let (table, report) = table.expire_snapshots(system_time(cutoff_ms), retain_last)?;
    let mut text = format!(
        "expired {} snapshots of {}, deleted {} files; {} snapshots remain\n",
        report.expired_snapshots.len(),
        table.ident(),
        report.deleted_files.len(),
        table.metadata().snapshots().len()
    );
    for (path, error) in &report.undeleted_files {
        text.push_str(&format!(
            "could not delete {path} ({error}); remove-orphans will find it\n"
        ));
    }
    ctx.output.emit(
        text,
        json!({
            "table": table.ident().to_string(),
            "expired_snapshots": report.expired_snapshots,
            "deleted_files": report.deleted_files,
            "undeleted_files": report
                .undeleted_files
                .iter()
                .map(|(p, e)| json!({"path": p, "error": e}))
                .collect::<Vec<_>>(),
            "remaining_snapshots": table.metadata().snapshots().len(),
        }),
    );
    Ok(())
}

/// Lists or deletes through `Table::orphan_files` / `Table::remove_orphan_files`.
fn orphans(ctx: &Context, table: &Table, cutoff_ms: i64, dry_run: bool) -> Result<()> {
    let cutoff = system_time(cutoff_ms);
    let files = if dry_run {
        table.orphan_files(cutoff)?
    } else {
        table.remove_orphan_files(cutoff)?
    };
    let verb = if dry_run { "would remove" } else { "removed" };
    let mut text = format!("{verb} {} orphan files of {}\n", files.len(), table.ident());
    for f in &files {
        text.push_str(&format!("  {f}\n"));
    }
    ctx.output.emit(
        text,
        json!({
            "table": table.ident().to_string(),
            "dry_run": dry_run,
            "orphan_files": files,
        }),
    );
    Ok(())
}

/// Epoch milliseconds as a `SystemTime` (times before 1970 clamp to the epoch).
fn system_time(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A point in time as epoch milliseconds: an age before `now` (`5d`, `12h`, `30m`, `10s`,
/// `0s`), epoch milliseconds, or RFC 3339 (`2024-05-01T00:00:00Z`, `...+02:00`).
pub fn parse_time(text: &str, now: i64) -> Result<i64> {
    let bad = || {
        CliError::invalid(
            "time",
            text,
            "use an age such as 5d, 12h, 30m or 10s, epoch milliseconds, or RFC 3339 such as \
             2024-05-01T00:00:00Z",
        )
    };
    let t = text.trim();
    if let Some(unit) = t.chars().last().filter(|c| "dhms".contains(*c))
        && let Ok(n) = t[..t.len() - 1].parse::<i64>()
        && n >= 0
    {
        let ms = match unit {
            'd' => 86_400_000,
            'h' => 3_600_000,
            'm' => 60_000,
            _ => 1_000,
        };
        return n.checked_mul(ms).map(|age| now - age).ok_or_else(bad);
    }
    if t.bytes().all(|b| b.is_ascii_digit()) && !t.is_empty() {
        return t.parse().map_err(|_| bad());
    }
    rfc3339_ms(t).ok_or_else(bad)
}

/// `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)` as epoch milliseconds.
fn rfc3339_ms(t: &str) -> Option<i64> {
    let num = |s: &str| -> Option<i64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let (date, time) = t.split_once(['T', 't', ' '])?;
    let mut d = date.splitn(3, '-');
    let (y, mo, da) = (num(d.next()?)?, num(d.next()?)?, num(d.next()?)?);
    let (clock, offset_ms) = if let Some(c) = time.strip_suffix(['Z', 'z']) {
        (c, 0)
    } else {
        let at = time.rfind(['+', '-'])?;
        let (c, off) = time.split_at(at);
        let (oh, om) = off[1..].split_once(':')?;
        let ms = (num(oh)? * 60 + num(om)?) * 60_000;
        (c, if off.starts_with('-') { -ms } else { ms })
    };
    let (hms, frac) = clock.split_once('.').unwrap_or((clock, ""));
    let mut c = hms.splitn(3, ':');
    let (h, mi, s) = (num(c.next()?)?, num(c.next()?)?, num(c.next()?)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&da) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let millis = if frac.is_empty() {
        0
    } else {
        num(&format!("{frac:0<3}")[..3])?
    };
    let days = days_from_civil(y, mo, da);
    Some(((days * 24 + h) * 60 + mi) * 60_000 + s * 1_000 + millis - offset_ms)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_in_every_form() {
        let now = 1_000_000_000_000;
        assert_eq!(parse_time("0s", now).unwrap(), now);
        assert_eq!(parse_time("2d", now).unwrap(), now - 2 * 86_400_000);
        assert_eq!(parse_time("1714521600000", now).unwrap(), 1_714_521_600_000);
        assert_eq!(
            parse_time("2024-05-01T00:00:00Z", now).unwrap(),
            1_714_521_600_000
        );
        assert_eq!(
            parse_time("2024-05-01T02:00:00.5+02:00", now).unwrap(),
            1_714_521_600_500
        );
        assert_eq!(parse_time("1970-01-01T00:00:00Z", now).unwrap(), 0);
        for bad in ["", "yesterday", "-5d", "2024-13-01T00:00:00Z", "5w"] {
            let e = parse_time(bad, now).unwrap_err().to_string();
            assert!(e.contains("RFC 3339"), "{bad}: {e}");
        }
    }
}
