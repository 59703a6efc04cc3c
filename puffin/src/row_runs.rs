//! Deleted positions as run-length keep/skip runs over a data file's rows: the shape of a
//! Parquet reader's row selection (`parquet::arrow::arrow_reader::RowSelector`).

use crate::{ErrorKind, Result};

/// `rows` consecutive rows that are all kept (`keep`) or all skipped (deleted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowRun {
    /// Whether the rows are read (`true`) or skipped as deleted (`false`).
    pub keep: bool,
    /// Number of rows in the run, never 0.
    pub rows: usize,
}

impl RowRun {
    /// A run of kept rows.
    pub fn keep(rows: usize) -> RowRun {
        RowRun { keep: true, rows }
    }

    /// A run of skipped rows.
    pub fn skip(rows: usize) -> RowRun {
        RowRun { keep: false, rows }
    }
}

/// Keep/skip runs over `num_rows` rows of which `deleted` (strictly ascending positions) are
/// skipped. Runs alternate, none is empty, and their lengths add up to `num_rows`; no rows at
/// all gives no runs. A position at or past `num_rows` is an error: the deletes belong to
/// another file.
pub fn keep_skip_runs(
    deleted: impl IntoIterator<Item = u64>,
    num_rows: u64,
) -> Result<Vec<RowRun>> {
    let mut runs: Vec<RowRun> = Vec::new();
    let mut push = |keep: bool, rows: u64| {
        if rows == 0 {
            return;
        }
        // `num_rows` rows fit in memory-addressable counts on any platform that can read them.
        let rows = usize::try_from(rows).unwrap_or(usize::MAX);
        match runs.last_mut() {
            Some(last) if last.keep == keep => last.rows += rows,
            _ => runs.push(RowRun { keep, rows }),
        }
    };
    // Next row not yet covered by a run.
    let mut next = 0u64;
    for position in deleted {
        if position >= num_rows {
            return Err(ErrorKind::PositionBeyondFile { position, num_rows }.into());
        }
        debug_assert!(
            position >= next,
            "deleted positions must be strictly ascending"
        );
        push(true, position.saturating_sub(next));
        push(false, 1);
        next = position + 1;
    }
    push(true, num_rows - next.min(num_rows));
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_alternate_and_cover_every_row() {
        let runs = keep_skip_runs([0, 1, 5, 9], 10).unwrap();
        assert_eq!(
            runs,
            vec![
                RowRun::skip(2),
                RowRun::keep(3),
                RowRun::skip(1),
                RowRun::keep(3),
                RowRun::skip(1)
            ]
        );
        assert_eq!(keep_skip_runs([], 4).unwrap(), vec![RowRun::keep(4)]);
        assert!(keep_skip_runs([], 0).unwrap().is_empty());
        let e = keep_skip_runs([3, 10], 10).unwrap_err();
        assert!(matches!(
            e.kind(),
            ErrorKind::PositionBeyondFile {
                position: 10,
                num_rows: 10
            }
        ));
    }
}
