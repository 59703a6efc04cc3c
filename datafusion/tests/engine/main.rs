//! Integration tests of the engine, in one test binary: every binary links DataFusion and
//! SedonaDB (about 270 MB in a debug build), so one binary instead of eight saves CI disk and
//! link time.

mod bbox_columns;
mod codec;
mod common;
mod deletes;
mod explain;
mod geography;
mod geography_measures;
mod geos_functions;
mod insert_overwrite;
mod join;
mod metadata_tables;
mod object_storage;
mod pushdown;
mod rectangle;
mod reference_statements;
mod row_changes;
mod scan;
mod schema_statements;
mod seed_000;
mod seed_functions;
mod seed_recipes;
mod session_objects;
mod spatial_join;
mod statements;
mod transform;
