//! `CALL <catalog>.system.upgrade_geometry(table => 'db.t', column => 'geom', srid => 4326
//! [, target => 'db.t_v3'])`: geoberg's procedure for seed 004's "Upgrade Existing Geometry
//! Tables" (a no-CRS geometry column copied into a new format-version 3 table whose column
//! declares the SRID). The table crate runs it (`Table::upgrade_geometry`).

use std::fmt;

use crate::error::SqlError;
use crate::name::{TableName, quote_string};
use crate::predicate::{Literal, literal};
use crate::procedure::{CallArgs, in_string, write_call_head};

/// `CALL <catalog>.system.upgrade_geometry(table => ..., column => ..., srid => ...
/// [, target => ...])`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpgradeGeometryRequest {
    /// The source table, with the procedure's catalog in front when the argument had none.
    pub table: TableName,
    /// The geometry column without a declared CRS.
    pub column: String,
    /// The SRID the new column declares (0, 3857 or 4326 for geometry).
    pub srid: i32,
    /// The new table; `None`: the source's name with `_v3` appended, in its namespace.
    pub target: Option<TableName>,
}

impl UpgradeGeometryRequest {
    /// The canonical `CALL` statement; parsing it gives an equal request.
    pub fn to_sql(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for UpgradeGeometryRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_call_head(f, "upgrade_geometry", &self.table)?;
        write!(
            f,
            ", column => {}, srid => {}",
            quote_string(&self.column),
            self.srid
        )?;
        if let Some(t) = &self.target {
            // The procedure's catalog goes in front of a target that names none.
            let name = match t.catalog() == self.table.catalog() {
                true => t.without_catalog().to_string(),
                false => t.to_string(),
            };
            write!(f, ", target => {}", quote_string(&name))?;
        }
        f.write_str(")")
    }
}

/// The request of `CALL ... upgrade_geometry(...)`, from its bound arguments.
pub(crate) fn upgrade_geometry_from_call(
    args: &CallArgs<'_>,
) -> Result<UpgradeGeometryRequest, SqlError> {
    let table = args.table()?;
    let column = args.geometry_column()?;
    let srid = match args.get("srid").map(|e| (e, literal(e))) {
        Some((_, Ok(Literal::Integer(n)))) if i32::try_from(n).is_ok() => n as i32,
        Some((e, _)) => {
            return Err(SqlError::invalid(
                "argument `srid`",
                format!("expected an SRID (a whole number: 4326, 3857 or 0), found {e}"),
            ));
        }
        None => {
            return Err(SqlError::invalid(
                "CALL upgrade_geometry",
                "the srid argument is missing; add srid => 4326 (the SRID the values are in)",
            ));
        }
    };
    let target = args
        .get("target")
        .map(|e| {
            in_string("target", e, |f| {
                let name = f.table_name()?;
                f.finish()?;
                Ok(name)
            })
        })
        .transpose()?
        .map(|t| t.in_catalog(args.catalog.as_deref()));
    Ok(UpgradeGeometryRequest {
        table,
        column,
        srid,
        target,
    })
}

#[cfg(test)]
mod tests {
    use crate::{Statement, parse};

    #[test]
    fn parses_and_renders_back() {
        for sql in [
            "CALL cat.system.upgrade_geometry(table => 'db.t', column => 'geom', srid => 4326)",
            "CALL cat.system.upgrade_geometry('db.t', 'geom', 3857, 'db.t_new')",
            "CALL system.upgrade_geometry(table => 'db.t', column => 'g', srid => 0, \
             target => 'other.t2')",
        ] {
            let Statement::UpgradeGeometry(r) = parse(sql).unwrap() else {
                panic!("{sql}")
            };
            assert_eq!(
                parse(&r.to_sql()).unwrap(),
                Statement::UpgradeGeometry(r.clone()),
                "{sql}"
            );
        }
        let Statement::UpgradeGeometry(r) =
            parse("CALL cat.system.upgrade_geometry('db.t', 'geom', 3857, 'db.t_new')").unwrap()
        else {
            unreachable!()
        };
        assert_eq!(r.table.to_string(), "cat.db.t");
        assert_eq!((r.column.as_str(), r.srid), ("geom", 3857));
        assert_eq!(r.target.unwrap().to_string(), "cat.db.t_new");
    }

    #[test]
    fn missing_or_bad_arguments_name_the_fix() {
        let e = |sql: &str| parse(sql).unwrap_err().to_string();
        let m = e("CALL cat.system.upgrade_geometry(table => 'db.t', srid => 4326)");
        assert!(m.contains("column =>"), "{m}");
        let m = e("CALL cat.system.upgrade_geometry(table => 'db.t', column => 'geom')");
        assert!(m.contains("srid =>"), "{m}");
        let m =
            e("CALL cat.system.upgrade_geometry(table => 'db.t', column => 'geom', srid => 'x')");
        assert!(m.contains("4326"), "{m}");
        let m = e("CALL cat.system.upgrade_geometry(table => 'db.t', column => 3, srid => 4326)");
        assert!(m.contains("column => 'geom'"), "{m}");
        let m = e(
            "CALL cat.system.upgrade_geometry(table => 'db.t', column => 'g', srid => 4326, \
                   target => 'not a name')",
        );
        assert!(m.contains("target"), "{m}");
    }
}
