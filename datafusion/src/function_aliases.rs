//! The reference documents' names for functions SedonaDB has under other names.
//!
//! Seed 004 converts between geometry and geography with `ST_GeomToGeography(geom)` and
//! `ST_GeogToGeometry(geog)`: SedonaDB 0.5 has both as `ST_ToGeography` and `ST_ToGeometry`.
//! They change the type only: the WKB and the CRS stay, and the edges between the same vertices
//! become great-circle arcs (or straight lines again); both refuse a CRS that is not
//! longitude/latitude for a geography, as a geography column does.
//!
//! Seed 003 lists Sedona's aggregates `ST_Envelope_Aggr`, `ST_Union_Aggr` and
//! `ST_Intersection_Aggr`: SedonaDB 0.5 names them `ST_Envelope_Agg`, `ST_Union_Agg` and
//! `ST_Intersection_Agg`.

use datafusion::error::Result;
use datafusion::execution::FunctionRegistry;
use datafusion::prelude::SessionContext;

/// `(alias, SedonaDB's scalar function)`.
pub(crate) const SCALAR_ALIASES: [(&str, &str); 2] = [
    ("st_geomtogeography", "st_togeography"),
    ("st_geogtogeometry", "st_togeometry"),
];

/// `(alias, SedonaDB's aggregate function)`.
pub(crate) const AGGREGATE_ALIASES: [(&str, &str); 3] = [
    ("st_envelope_aggr", "st_envelope_agg"),
    ("st_union_aggr", "st_union_agg"),
    ("st_intersection_aggr", "st_intersection_agg"),
];

/// Registers the aliases on `ctx` (after every kernel is appended to SedonaDB's functions,
/// which re-registers them under their own names only).
pub(crate) fn register_function_aliases(ctx: &SessionContext) -> Result<()> {
    for (alias, name) in SCALAR_ALIASES {
        let udf = ctx.udf(name)?;
        ctx.register_udf(udf.as_ref().clone().with_aliases([alias]));
    }
    for (alias, name) in AGGREGATE_ALIASES {
        let udaf = ctx.udaf(name)?;
        ctx.register_udaf(udaf.as_ref().clone().with_aliases([alias]));
    }
    Ok(())
}
