//! Statement text: `CREATE SPATIAL INDEX`, `CALL ... rewrite_data_files`, `CREATE TABLE`,
//! `SHOW`/`DESCRIBE`, and bare WHERE conditions (queries are the SQL engine's and must parse to
//! an error here).

use geoberg_crs::HilbertSpec;
use geoberg_geostats::bbox_of_wkb;
use geoberg_sql::{Predicate, Statement, parse, parse_condition, parse_sort_order};

/// Fuzz target `sql_parse`: the input (lossy UTF-8) is parsed as a statement, as a sort order
/// (`write.sort-order`) and as a condition.
///
/// * Neither parser panics.
/// * A parsed statement renders (`to_sql`) to text that parses to an equal statement, and the
///   rendering is a fixed point; the same for sort orders and conditions.
/// * Every spatial filter's window is finite, its WKB is read by geostats to exactly the
///   window's box, and its pruning box is ordered (a negative or NaN distance must not invert
///   it).
/// * A Hilbert index has a precision in `1..=MAX_PRECISION` and ordered, finite bounds.
pub fn sql_parse(data: &[u8]) {
    let sql = String::from_utf8_lossy(data);
    if let Ok(statement) = parse(&sql) {
        let text = statement.to_sql();
        let again = parse(&text).unwrap_or_else(|e| panic!("{text:?} does not parse: {e}"));
        assert_eq!(again, statement, "{sql:?} -> {text:?}");
        assert_eq!(again.to_sql(), text, "to_sql is not a fixed point");
        check_statement(&statement);
    }
    if let Ok(order) = parse_sort_order(&sql) {
        let text = order.to_string();
        let again =
            parse_sort_order(&text).unwrap_or_else(|e| panic!("{text:?} does not parse: {e}"));
        assert_eq!(again, order, "{sql:?} -> {text:?}");
        assert_eq!(again.to_string(), text, "Display is not a fixed point");
    }
    if let Ok(condition) = parse_condition(&sql) {
        let text = condition.to_sql();
        let again =
            parse_condition(&text).unwrap_or_else(|e| panic!("{text:?} does not parse: {e}"));
        assert_eq!(again, condition, "{sql:?} -> {text:?}");
        assert_eq!(again.to_sql(), text, "to_sql is not a fixed point");
        check_predicate(&condition);
    }
}

fn check_statement(statement: &Statement) {
    match statement {
        Statement::Rewrite(r) => {
            if let Some(h) = r.hilbert() {
                assert!(
                    (HilbertSpec::MIN_PRECISION..=HilbertSpec::MAX_PRECISION)
                        .contains(&h.precision),
                    "{h:?}"
                );
                if let Some(b) = h.bounds {
                    let all = [b.min_x, b.min_y, b.max_x, b.max_y];
                    assert!(all.iter().all(|v| v.is_finite()), "{b:?}");
                    assert!(b.min_x < b.max_x && b.min_y < b.max_y, "{b:?}");
                }
            }
            r.filter.iter().for_each(check_predicate);
        }
        Statement::SetTblProperties { properties, .. } => assert!(!properties.is_empty()),
        Statement::UnsetTblProperties { keys, .. } => {
            assert!(!keys.is_empty());
            let mut unique = keys.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), keys.len(), "a key unset twice: {keys:?}");
        }
        Statement::ExpireSnapshots(r) => {
            assert!(r.retain_last.is_none_or(|n| n >= 1), "{r:?}");
        }
        Statement::AddBBoxColumns(r) => {
            if let Some(names) = &r.names {
                let mut unique = names.to_vec();
                unique.push(r.column.clone());
                unique.sort();
                unique.dedup();
                assert_eq!(unique.len(), 5, "bbox names not distinct: {r:?}");
            }
            if let Some([_, min_y, _, max_y]) = r.window {
                assert!(r.window.iter().flatten().all(|v| v.is_finite()), "{r:?}");
                assert!(min_y <= max_y, "{r:?}");
            }
            assert!(
                r.backfill || (r.filter.is_none() && r.window.is_none()),
                "{r:?}"
            );
            r.filter.iter().for_each(check_predicate);
        }
        Statement::RemoveOrphanFiles(_)
        | Statement::Maintain(_)
        | Statement::RewriteManifests(_)
        | Statement::UpgradeGeometry(_)
        | Statement::AlterSchema(_)
        | Statement::RenameTable { .. }
        | Statement::DropTable { .. }
        | Statement::CreateTable(_)
        | Statement::CreateTableAsSelect(_)
        | Statement::ShowTables(_)
        | Statement::ShowCreateTable(_)
        | Statement::ShowTblProperties { .. }
        | Statement::Describe { .. } => {}
    }
}

fn check_predicate(predicate: &Predicate) {
    for filter in predicate.spatial_filters() {
        let w = filter.window.bbox();
        let all = [w.min_x, w.min_y, w.max_x, w.max_y];
        assert!(all.iter().all(|v| v.is_finite()), "window {w:?}");
        let read = bbox_of_wkb(filter.window.wkb())
            .unwrap_or_else(|e| panic!("window WKB unreadable: {e}"))
            .unwrap_or_else(|| panic!("window WKB is empty, its box is {w:?}"));
        assert_eq!(
            (read.min_x, read.min_y, read.max_x, read.max_y),
            (w.min_x, w.min_y, w.max_x, w.max_y),
            "window WKB box vs window box"
        );
        let p = filter.pruning_bbox();
        assert!(
            p.min_x <= p.max_x && p.min_y <= p.max_y,
            "pruning box {p:?} of {filter}"
        );
    }
    if let Some(rest) = predicate.non_spatial() {
        assert!(rest.spatial_filters().is_empty());
    }
}
