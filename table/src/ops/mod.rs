//! Table operations, one file each, every one a builder or method on [`crate::Table`] that
//! commits through the snapshot producer ([`crate::snapshot`]): a new operation is one more
//! file here.
//!
//! | file | operation | snapshot |
//! |---|---|---|
//! | `append.rs` | [`Table::append`](crate::Table::append), imports | `append` |
//! | `rewrite.rs` | [`Table::rewrite`](crate::Table::rewrite): `CREATE SPATIAL INDEX`, `rewrite_data_files` | `replace` |
//! | `maintenance.rs` | [`Table::expire_snapshots`](crate::Table::expire_snapshots), orphan files | metadata only |

pub(crate) mod append;
pub(crate) mod maintenance;
pub(crate) mod rewrite;
