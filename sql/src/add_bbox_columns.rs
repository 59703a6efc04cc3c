//! `CALL <catalog>.system.add_bbox_columns(table => 'db.t', column => 'geom' [, names => ...]
//! [, where => ...] [, window => ...] [, backfill => true|false])`: geoberg's procedure for
//! seed 002's "Materializing Bbox Columns for Pushdown" (the four bbox columns added right
//! before the geometry with their metrics modes set, then backfilled partition by partition,
//! with the files a window query reads before and after). The table crate runs it
//! (`Table::add_bbox_columns`, `Table::backfill_bbox_columns`).

use std::fmt;

use sqlparser::ast::Expr;

use crate::error::SqlError;
use crate::name::{TableName, quote_string};
use crate::predicate::{Literal, Predicate, function_name, literal, positional_args};
use crate::predicate::{float, predicate_from_expr};
use crate::procedure::{CallArgs, in_string, write_call_head};

/// `CALL <catalog>.system.add_bbox_columns(table => ..., column => ... [, names => ...]
/// [, where => ...] [, window => ...] [, backfill => ...])`.
#[derive(Debug, Clone, PartialEq)]
pub struct AddBBoxColumnsRequest {
    /// The table, with the procedure's catalog in front when the argument had none.
    pub table: TableName,
    /// The geometry (or geography) column whose bbox the new columns hold.
    pub column: String,
    /// `names => array(min_x, min_y, max_x, max_y)`: the four columns' names, distinct and
    /// none the geometry column; `None`: the table crate's defaults for `column`.
    pub names: Option<[String; 4]>,
    /// `where => '<condition>'`: only partitions that may hold matching rows are backfilled;
    /// `None`: every partition.
    pub filter: Option<Predicate>,
    /// `window => array(min_x, min_y, max_x, max_y)`: the window query whose files-read counts
    /// are reported before and after the backfill; `None`: the table crate's default (the
    /// central 1% of the table's extent). `min_x > max_x` wraps the antimeridian (geography);
    /// `min_y <= max_y` always.
    pub window: Option<[f64; 4]>,
    /// `backfill => false`: only add the columns and set their properties. Default: true.
    pub backfill: bool,
}

impl AddBBoxColumnsRequest {
    /// The canonical `CALL` statement; parsing it gives an equal request.
    pub fn to_sql(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for AddBBoxColumnsRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_call_head(f, "add_bbox_columns", &self.table)?;
        write!(f, ", column => {}", quote_string(&self.column))?;
        if let Some(names) = &self.names {
            let names: Vec<String> = names.iter().map(|n| quote_string(n)).collect();
            write!(f, ", names => array({})", names.join(", "))?;
        }
        if let Some(p) = &self.filter {
            write!(f, ", where => {}", quote_string(&p.to_string()))?;
        }
        if let Some([min_x, min_y, max_x, max_y]) = self.window {
            // `{:?}` prints the shortest text that parses back to the same f64.
            write!(
                f,
                ", window => array({min_x:?}, {min_y:?}, {max_x:?}, {max_y:?})"
            )?;
        }
        if !self.backfill {
            f.write_str(", backfill => false")?;
        }
        f.write_str(")")
    }
}

/// The request of `CALL ... add_bbox_columns(...)`, from its bound arguments.
pub(crate) fn add_bbox_columns_from_call(
    args: &CallArgs<'_>,
) -> Result<AddBBoxColumnsRequest, SqlError> {
    let table = args.table()?;
    let column = args.geometry_column()?;
    let names = args.get("names").map(|e| names(e, &column)).transpose()?;
    let filter = args
        .get("where")
        .map(|w| {
            in_string("where", w, |f| {
                let expr = f.expr()?;
                f.finish()?;
                predicate_from_expr(&expr)
            })
        })
        .transpose()?;
    let window = args.get("window").map(window).transpose()?;
    let backfill = match args.get("backfill").map(|e| (e, literal(e))) {
        None => true,
        Some((_, Ok(Literal::Boolean(b)))) => b,
        Some((e, _)) => {
            return Err(SqlError::invalid(
                "argument `backfill`",
                format!(
                    "expected true or false, found {e}; backfill => false only adds the columns \
                     and sets their properties"
                ),
            ));
        }
    };
    if !backfill {
        // Both only steer the backfill; silently ignoring them would hide a mistake.
        if let Some(argument) = [("where", filter.is_some()), ("window", window.is_some())]
            .iter()
            .find_map(|(a, given)| given.then_some(*a))
        {
            return Err(SqlError::invalid(
                format!("argument `{argument}`"),
                "it only applies to the backfill, and backfill => false skips it; drop \
                 backfill => false or the argument",
            ));
        }
    }
    Ok(AddBBoxColumnsRequest {
        table,
        column,
        names,
        filter,
        window,
        backfill,
    })
}

/// The items of `array(a, b, ...)` (Spark's form) or `ARRAY[a, b, ...]`; `None` for anything
/// else.
fn array_items(expr: &Expr) -> Option<Vec<&Expr>> {
    match expr {
        Expr::Function(f) if function_name(f).eq_ignore_ascii_case("array") => {
            positional_args(f, expr).ok()
        }
        Expr::Array(a) => Some(a.elem.iter().collect()),
        Expr::Nested(inner) => array_items(inner),
        _ => None,
    }
}

/// `names => array('min_x', 'min_y', 'max_x', 'max_y')`: four distinct non-empty strings, none
/// the geometry column.
fn names(expr: &Expr, column: &str) -> Result<[String; 4], SqlError> {
    let usage = "write names => array('<min x>', '<min y>', '<max x>', '<max y>'), e.g. \
                 array('bbox_min_x', 'bbox_min_y', 'bbox_max_x', 'bbox_max_y')";
    let bad = |reason: String| SqlError::invalid("argument `names`", format!("{reason}; {usage}"));
    let items = array_items(expr).ok_or_else(|| bad(format!("expected an array, found {expr}")))?;
    if items.len() != 4 {
        return Err(bad(format!(
            "expected 4 column names (min x, min y, max x, max y), found {} in {expr}",
            items.len()
        )));
    }
    let mut names: Vec<String> = Vec::with_capacity(4);
    for item in items {
        let name = match literal(item) {
            Ok(Literal::String(s)) if !s.trim().is_empty() => s,
            _ => {
                return Err(bad(format!(
                    "every name must be a non-empty quoted string, found {item}"
                )));
            }
        };
        if names.contains(&name) {
            return Err(bad(format!(
                "'{name}' is given twice; the four columns need four names"
            )));
        }
        if name == column {
            return Err(bad(format!(
                "'{name}' is the geometry column itself; name the bbox columns differently"
            )));
        }
        names.push(name);
    }
    Ok(names.try_into().expect("four names were checked above"))
}

/// `window => array(min_x, min_y, max_x, max_y)`: four finite numbers, `min_y <= max_y`
/// (`min_x > max_x` is a window across the antimeridian).
fn window(expr: &Expr) -> Result<[f64; 4], SqlError> {
    let usage = "write window => array(<min x>, <min y>, <max x>, <max y>), e.g. \
                 array(-10, 40.5, 5, 52)";
    let bad = |reason: String| SqlError::invalid("argument `window`", format!("{reason}; {usage}"));
    let items = array_items(expr).ok_or_else(|| bad(format!("expected an array, found {expr}")))?;
    if items.len() != 4 {
        return Err(bad(format!(
            "expected 4 numbers (min x, min y, max x, max y), found {} in {expr}",
            items.len()
        )));
    }
    let mut bounds = [0.0; 4];
    for (bound, item) in bounds.iter_mut().zip(items) {
        *bound = float(item)
            .map_err(|_| bad(format!("every bound must be a finite number, found {item}")))?;
    }
    let [_, min_y, _, max_y] = bounds;
    if min_y > max_y {
        return Err(bad(format!(
            "min y {min_y:?} is above max y {max_y:?}; the order is (min x, min y, max x, max y)"
        )));
    }
    Ok(bounds)
}

#[cfg(test)]
mod tests {
    use crate::{Statement, parse, parse_condition};

    fn request(sql: &str) -> super::AddBBoxColumnsRequest {
        match parse(sql) {
            Ok(Statement::AddBBoxColumns(r)) => r,
            other => panic!("{sql} -> {other:?}"),
        }
    }

    #[test]
    fn parses_and_renders_back() {
        for sql in [
            "CALL cat.system.add_bbox_columns(table => 'db.t', column => 'geom')",
            "CALL cat.system.add_bbox_columns('db.t', 'geom', array('a', 'b', 'c', 'd'), \
             \"day = '2026-01-01'\", array(-10, 40.5, 5, 52), true)",
            "CALL system.add_bbox_columns(table => 'db.t', column => 'g', backfill => false, \
             names => ARRAY['x0', 'y0', 'x1', 'y1'])",
            "CALL c.system.add_bbox_columns(window => array(170, -1e-3, -170.25, 1E3), \
             column => 'geog', table => 'other.db.t', where => 'id > 5 OR id IS NULL')",
            "CALL c.system.add_bbox_columns(table => 'db.t', column => 'g', \
             window => array(1, 2, 1, 2))",
        ] {
            let r = request(sql);
            let canonical = r.to_sql();
            assert_eq!(request(&canonical), r, "{sql}\n  canonical: {canonical}");
            assert_eq!(request(&canonical).to_sql(), canonical);
        }
    }

    #[test]
    fn the_readme_recipe_parses() {
        let r = request(
            "CALL geoberg.system.add_bbox_columns(table => 'spatial.telemetry', column => 'geom',
              where => 'event_day < ''2026-12-01''',
              window => array(-10, 35, 30, 60))",
        );
        assert_eq!(
            r.filter,
            Some(parse_condition("event_day < '2026-12-01'").unwrap())
        );
        assert_eq!(r.window, Some([-10.0, 35.0, 30.0, 60.0]));
    }

    #[test]
    fn holds_the_parsed_values() {
        let r = request(
            "CALL cat.system.add_bbox_columns('db.t', 'geom', array('a', 'b', 'c', 'd'), \
             \"day = '2026-01-01'\", array(-10, 40.5, 5, 52))",
        );
        assert_eq!(r.table.to_string(), "cat.db.t");
        assert_eq!(r.column, "geom");
        assert_eq!(r.names, Some(["a", "b", "c", "d"].map(String::from)));
        assert_eq!(
            r.filter,
            Some(parse_condition("day = '2026-01-01'").unwrap())
        );
        assert_eq!(r.window, Some([-10.0, 40.5, 5.0, 52.0]));
        assert!(r.backfill);

        let r = request("CALL system.add_bbox_columns('db.t', 'g', backfill => false)");
        assert_eq!(r.table.to_string(), "db.t");
        assert_eq!(
            (r.names, r.filter, r.window, r.backfill),
            (None, None, None, false)
        );
        // Across the antimeridian: min x > max x is a window, not a mistake.
        let r =
            request("CALL system.add_bbox_columns('db.t', 'g', window => array(170, -5, -170, 5))");
        assert_eq!(r.window, Some([170.0, -5.0, -170.0, 5.0]));
    }

    #[test]
    fn missing_or_bad_arguments_name_the_fix() {
        let e = |args: &str| {
            parse(&format!("CALL cat.system.add_bbox_columns({args})"))
                .unwrap_err()
                .to_string()
        };
        let cases: [(&str, &[&str]); 19] = [
            ("column => 'geom'", &["table =>"]),
            ("table => 'db.t'", &["column =>"]),
            ("table => 'db.t', column => 3", &["column => 'geom'"]),
            ("table => 'db.t', column => ' '", &["column => 'geom'"]),
            ("'db.t', 'g', 'a,b,c,d'", &["`names`", "expected an array"]),
            ("'db.t', 'g', array('a', 'b', 'c')", &["`names`", "found 3"]),
            (
                "'db.t', 'g', array('a', 'b', 'c', 'd', 'e')",
                &["`names`", "found 5"],
            ),
            (
                "'db.t', 'g', array('a', 'b', 'a', 'd')",
                &["'a' is given twice"],
            ),
            ("'db.t', 'g', array('a', '', 'c', 'd')", &["non-empty"]),
            (
                "'db.t', 'g', array('a', 1, 'c', 'd')",
                &["non-empty", "found 1"],
            ),
            (
                "'db.t', 'g', array('a', 'g', 'c', 'd')",
                &["geometry column itself"],
            ),
            ("'db.t', 'g', where => 'id >'", &["`where`"]),
            (
                "'db.t', 'g', window => array(0, 0, 1)",
                &["`window`", "expected 4 numbers", "found 3"],
            ),
            (
                "'db.t', 'g', window => array(0, 'a', 1, 1)",
                &["`window`", "finite number", "'a'"],
            ),
            (
                "'db.t', 'g', window => array(0, 0, 1, 1e999)",
                &["`window`", "finite number"],
            ),
            (
                "'db.t', 'g', window => 5",
                &["`window`", "expected an array"],
            ),
            (
                "'db.t', 'g', window => array(0, 5, 1, 4)",
                &["`window`", "min y 5.0 is above max y 4.0"],
            ),
            (
                "'db.t', 'g', backfill => 'no'",
                &["`backfill`", "true or false"],
            ),
            (
                "'db.t', 'g', window => array(0, 0, 1, 1), backfill => false",
                &["`window`", "drop backfill => false"],
            ),
        ];
        for (args, needles) in cases {
            let m = e(args);
            for needle in needles {
                assert!(m.contains(needle), "{args}: `{needle}` not in: {m}");
            }
        }
        let m = e("'db.t', 'g', where => 'id = 1', backfill => false");
        assert!(
            m.contains("`where`") && m.contains("backfill => false"),
            "{m}"
        );
        let m = e("'db.t', 'g', sort => true");
        assert!(
            m.contains("valid ones are") && m.contains("backfill"),
            "{m}"
        );
        let m = e("'db.t', 'g', null, null, null, true, 1");
        assert!(m.contains("at most 6 arguments"), "{m}");
    }
}
