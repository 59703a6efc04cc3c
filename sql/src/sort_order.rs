//! Sort orders: what `rewrite_data_files(sort_order => '...')` and the table property
//! `write.sort-order` hold.
//!
//! Three forms, as Iceberg's Spark procedures and geoberg write them:
//! - a column list, `c1 [ASC|DESC] [NULLS FIRST|LAST], c2 ...` (Iceberg's
//!   `SortOrderParser` syntax); a column without a direction is ascending, and the null order
//!   defaults as in Iceberg Java's `SortOrder.Builder`: `asc(term)` is `NULLS_FIRST`,
//!   `desc(term)` is `NULLS_LAST`;
//! - `hilbert(geom, precision[, minX, minY, maxX, maxY])`, the [`HilbertIndex`] of
//!   `CREATE SPATIAL INDEX`;
//! - `zorder(c1, c2, ...)`, Iceberg's z-order (Spark's `strategy => 'sort', sort_order =>
//!   'zorder(c1, c2)'`): the columns' order-preserving bytes, bits interleaved.
//!
//! Which columns exist and whether their types fit is checked by the table, which knows the
//! schema; here only the syntax.

use std::fmt;
use std::str::FromStr;

use sqlparser::ast::Expr;
use sqlparser::tokenizer::Token;

use crate::error::SqlError;
use crate::front::Front;
use crate::hilbert_index::{HilbertIndex, hilbert};
use crate::name::quote_ident;
use crate::predicate::{column_name, function_name, positional_args};

/// The three accepted forms, for error messages.
pub const SORT_ORDER_FORMS: &str = "<column> [ASC|DESC] [NULLS FIRST|NULLS LAST], ...; \
hilbert(<geom>, <precision>[, <minX>, <minY>, <maxX>, <maxY>]); zorder(<column>, <column>, ...)";

/// Ascending or descending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortDirection {
    /// `ASC`, the default.
    Ascending,
    /// `DESC`.
    Descending,
}

/// Where nulls go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NullOrder {
    /// `NULLS FIRST`, the default of an ascending column.
    First,
    /// `NULLS LAST`, the default of a descending column.
    Last,
}

impl SortDirection {
    /// Iceberg's default null order for this direction (`SortOrder.Builder.asc` / `.desc`).
    pub fn default_null_order(self) -> NullOrder {
        match self {
            SortDirection::Ascending => NullOrder::First,
            SortDirection::Descending => NullOrder::Last,
        }
    }
}

/// One column of a column sort order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SortField {
    /// The column (nested fields dotted, `s.a`).
    pub column: String,
    /// Ascending or descending.
    pub direction: SortDirection,
    /// Where nulls go.
    pub null_order: NullOrder,
}

impl SortField {
    /// `column ASC NULLS FIRST`, Iceberg's default.
    pub fn asc(column: impl Into<String>) -> Self {
        SortField::new(column, SortDirection::Ascending)
    }

    /// `column DESC NULLS LAST`.
    pub fn desc(column: impl Into<String>) -> Self {
        SortField::new(column, SortDirection::Descending)
    }

    /// A field with the direction's default null order.
    pub fn new(column: impl Into<String>, direction: SortDirection) -> Self {
        SortField {
            column: column.into(),
            direction,
            null_order: direction.default_null_order(),
        }
    }

    /// The same field with `null_order`.
    pub fn nulls(mut self, null_order: NullOrder) -> Self {
        self.null_order = null_order;
        self
    }
}

impl fmt::Display for SortField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let direction = match self.direction {
            SortDirection::Ascending => "ASC",
            SortDirection::Descending => "DESC",
        };
        let nulls = match self.null_order {
            NullOrder::First => "NULLS FIRST",
            NullOrder::Last => "NULLS LAST",
        };
        write!(f, "{} {direction} {nulls}", quote_ident(&self.column))
    }
}

/// How rows are ordered: by columns, by a Hilbert index of a geometry column, or by the z-order
/// of several columns.
///
/// ```
/// use geoberg_sql::{SortField, SortOrder};
///
/// let order: SortOrder = "bbox_min_x, bbox_min_y DESC".parse()?;
/// assert_eq!(
///     order,
///     SortOrder::Columns(vec![SortField::asc("bbox_min_x"), SortField::desc("bbox_min_y")])
/// );
/// assert_eq!(order.to_string(), "bbox_min_x ASC NULLS FIRST, bbox_min_y DESC NULLS LAST");
/// assert_eq!(order.to_string().parse::<SortOrder>()?, order);
///
/// let z: SortOrder = "zorder(bbox_min_x, bbox_min_y)".parse()?;
/// assert_eq!(z.columns(), ["bbox_min_x", "bbox_min_y"]);
/// assert!(matches!("hilbert(geom, 16)".parse()?, SortOrder::Hilbert(_)));
/// # Ok::<(), geoberg_sql::SqlError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum SortOrder {
    /// `c1 [ASC|DESC] [NULLS FIRST|LAST], ...`: at least one column.
    Columns(Vec<SortField>),
    /// `hilbert(geom, precision[, bounds])`.
    Hilbert(HilbertIndex),
    /// `zorder(c1, c2, ...)`: at least one column.
    ZOrder(Vec<String>),
}

impl SortOrder {
    /// The order after column `from` is renamed `to` (a nested field `from.x` becomes `to.x`).
    pub fn rename_column(&self, from: &str, to: &str) -> SortOrder {
        let rename = |c: &str| -> String {
            match c.strip_prefix(from) {
                Some("") => to.to_string(),
                Some(rest) if rest.starts_with('.') => format!("{to}{rest}"),
                _ => c.to_string(),
            }
        };
        match self {
            SortOrder::Columns(fields) => SortOrder::Columns(
                fields
                    .iter()
                    .map(|f| SortField {
                        column: rename(&f.column),
                        ..f.clone()
                    })
                    .collect(),
            ),
            SortOrder::Hilbert(h) => SortOrder::Hilbert(HilbertIndex {
                column: rename(&h.column),
                ..h.clone()
            }),
            SortOrder::ZOrder(columns) => {
                SortOrder::ZOrder(columns.iter().map(|c| rename(c)).collect())
            }
        }
    }

    /// The columns the order reads, in order.
    pub fn columns(&self) -> Vec<&str> {
        match self {
            SortOrder::Columns(fields) => fields.iter().map(|f| f.column.as_str()).collect(),
            SortOrder::Hilbert(h) => vec![h.column.as_str()],
            SortOrder::ZOrder(columns) => columns.iter().map(String::as_str).collect(),
        }
    }
}

impl fmt::Display for SortOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SortOrder::Columns(fields) => {
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{field}")?;
                }
                Ok(())
            }
            SortOrder::Hilbert(h) => write!(f, "{h}"),
            SortOrder::ZOrder(columns) => {
                let names: Vec<String> = columns.iter().map(|c| quote_ident(c)).collect();
                write!(f, "zorder({})", names.join(", "))
            }
        }
    }
}

impl FromStr for SortOrder {
    type Err = SqlError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_sort_order(text)
    }
}

/// Parses a sort order as `sort_order => '...'` and `write.sort-order` hold it (an optional
/// trailing `;` is allowed).
pub fn parse_sort_order(text: &str) -> Result<SortOrder, SqlError> {
    let mut front = Front::new(text)?;
    let order = sort_order(&mut front)?;
    front.finish()?;
    Ok(order)
}

/// A sort order at the front's position.
pub(crate) fn sort_order(front: &mut Front<'_>) -> Result<SortOrder, SqlError> {
    if front.at_end() {
        return Err(front.error_here(format!("expected a sort order: {SORT_ORDER_FORMS}")));
    }
    let first = front.expr()?;
    if let Expr::Function(function) = &first {
        let name = function_name(function).to_ascii_lowercase();
        return match name.as_str() {
            "hilbert" => hilbert(&first).map(SortOrder::Hilbert),
            "zorder" => zorder(&first, function),
            _ => Err(SqlError::invalid(
                format!("sort order `{first}`"),
                format!(
                    "{name}(...) is not a sort order; write one of: {SORT_ORDER_FORMS} \
                     (Iceberg's transforms such as bucket(...) are not supported)"
                ),
            )),
        };
    }
    let mut fields = vec![sort_field(front, &first)?];
    while front.consume(&Token::Comma) {
        let expr = front.expr()?;
        if matches!(expr, Expr::Function(_)) {
            return Err(SqlError::invalid(
                format!("sort order column `{expr}`"),
                "hilbert(...) and zorder(...) stand alone; they cannot follow or precede columns",
            ));
        }
        fields.push(sort_field(front, &expr)?);
    }
    if let Some(twice) = fields
        .iter()
        .enumerate()
        .find(|(i, f)| fields[..*i].iter().any(|g| g.column == f.column))
    {
        return Err(SqlError::invalid(
            format!("sort order column `{}`", twice.1.column),
            "it is listed twice; list each column once",
        ));
    }
    Ok(SortOrder::Columns(fields))
}

/// `<column> [ASC|DESC] [NULLS FIRST|LAST]`, the column already parsed as `expr`.
fn sort_field(front: &mut Front<'_>, expr: &Expr) -> Result<SortField, SqlError> {
    let column = column_name(expr).ok_or_else(|| {
        SqlError::invalid(
            format!("sort order term `{expr}`"),
            format!("expected a column name; write one of: {SORT_ORDER_FORMS}"),
        )
    })?;
    let direction = if front.word("DESC") {
        SortDirection::Descending
    } else {
        front.word("ASC");
        SortDirection::Ascending
    };
    let mut field = SortField::new(column, direction);
    if front.word("NULLS") {
        field.null_order = if front.word("FIRST") {
            NullOrder::First
        } else if front.word("LAST") {
            NullOrder::Last
        } else {
            return Err(front.error_here(format!(
                "expected FIRST or LAST after NULLS, found {}",
                front.peek().token
            )));
        };
    }
    if !front.at_end() && front.peek().token != Token::Comma {
        return Err(front.error_here(format!(
            "expected ASC, DESC, NULLS FIRST, NULLS LAST, `,` or the end of the sort order after \
             column {}, found {}",
            field.column,
            front.peek().token
        )));
    }
    Ok(field)
}

/// `zorder(c1, c2, ...)`.
fn zorder(expr: &Expr, function: &sqlparser::ast::Function) -> Result<SortOrder, SqlError> {
    let args = positional_args(function, expr)?;
    if args.is_empty() {
        return Err(SqlError::invalid(
            format!("`{expr}`"),
            "zorder needs at least one column: zorder(<column>, <column>, ...)",
        ));
    }
    let mut columns: Vec<String> = Vec::with_capacity(args.len());
    for a in args {
        let column = column_name(a).ok_or_else(|| {
            SqlError::invalid(
                format!("`{expr}`"),
                format!("zorder takes column names, found {a}: zorder(<column>, <column>, ...)"),
            )
        })?;
        if columns.contains(&column) {
            return Err(SqlError::invalid(
                format!("`{expr}`"),
                format!("column {column} is listed twice; list each column once"),
            ));
        }
        columns.push(column);
    }
    Ok(SortOrder::ZOrder(columns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rename_follows_into_every_kind_of_order() {
        let rename = |s: &str| {
            parse_sort_order(s)
                .unwrap()
                .rename_column("s", "t")
                .to_string()
        };
        let same = |s: &str| parse_sort_order(s).unwrap().to_string();
        assert_eq!(rename("s DESC, so, s.a"), same("t DESC, so, t.a"));
        assert_eq!(rename("zorder(a, s)"), "zorder(a, t)");
        assert_eq!(rename("hilbert(s, 12)"), "hilbert(t, 12)");
    }

    #[test]
    fn defaults_follow_iceberg_java() {
        let order = parse_sort_order("a, b DESC, c ASC NULLS LAST, d DESC NULLS FIRST").unwrap();
        assert_eq!(
            order,
            SortOrder::Columns(vec![
                SortField::asc("a"),
                SortField::desc("b"),
                SortField::asc("c").nulls(NullOrder::Last),
                SortField::desc("d").nulls(NullOrder::First),
            ])
        );
        assert_eq!(SortField::asc("a").null_order, NullOrder::First);
        assert_eq!(SortField::desc("a").null_order, NullOrder::Last);
    }

    #[test]
    fn bad_orders_say_what_is_accepted() {
        for bad in [
            "",
            "a NULLS",
            "a NULLS MIDDLE",
            "a b",
            "a, a",
            "zorder()",
            "zorder(a, 1)",
            "zorder(a, a)",
            "bucket(4, a)",
            "a, hilbert(geom, 16)",
            "hilbert(geom)",
            "hilbert(geom, 99)",
            "1",
        ] {
            assert!(parse_sort_order(bad).is_err(), "{bad:?} parsed");
        }
        let e = parse_sort_order("bucket(4, a)").unwrap_err().to_string();
        assert!(e.contains("zorder(<column>"), "{e}");
    }
}
