//! Seed 004's names for the conversions between geometry and geography:
//! `ST_GeomToGeography(geom)` and `ST_GeogToGeometry(geog)`. They change the type only: the
//! WKB and the CRS stay, and the edges between the same vertices become great-circle arcs (or
//! straight lines again). SedonaDB 0.5 has both as `ST_ToGeography` and `ST_ToGeometry`
//! (which refuse a CRS that is not longitude/latitude for a geography, as a geography column
//! does), so the seed's names are aliases of those functions.

use datafusion::error::Result;
use datafusion::execution::FunctionRegistry;
use datafusion::prelude::SessionContext;

/// `(alias, SedonaDB's function)`.
pub(crate) const CONVERSION_ALIASES: [(&str, &str); 2] = [
    ("st_geomtogeography", "st_togeography"),
    ("st_geogtogeometry", "st_togeometry"),
];

/// Registers the aliases on `ctx` (after every kernel is appended to SedonaDB's functions,
/// which re-registers them under their own names only).
pub(crate) fn register_conversion_aliases(ctx: &SessionContext) -> Result<()> {
    for (alias, name) in CONVERSION_ALIASES {
        let udf = ctx.udf(name)?;
        ctx.register_udf(udf.as_ref().clone().with_aliases([alias]));
    }
    Ok(())
}
