//! Too many manifests: planning reads every manifest of the current snapshot, so a table of
//! many small appends plans slower with each one (seed 001's "manifest bloat"). `geoberg
//! inspect` and `geoberg audit` warn past [`MANIFEST_COUNT_WARNING_THRESHOLD`] and name the fix,
//! `CALL ... rewrite_manifests`.

use std::fmt;

use crate::error::Result;
use crate::table::Table;

/// Manifests in one snapshot past which inspection warns.
pub const MANIFEST_COUNT_WARNING_THRESHOLD: usize = 5_000;

/// A snapshot with more manifests than the threshold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestBloat {
    /// The table, as `ns.name`.
    pub table: String,
    /// Manifests of the current snapshot.
    pub manifests: usize,
    /// The threshold it passed.
    pub threshold: usize,
}

impl fmt::Display for ManifestBloat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the current snapshot of {} has {} manifests (more than {}): every scan plan reads \
             all of them; regroup them with CALL <catalog>.system.rewrite_manifests(table => \
             '{}')",
            self.table, self.manifests, self.threshold, self.table
        )
    }
}

impl Table {
    /// Manifests (data and delete) of the current snapshot; 0 for a table without one. Reads
    /// the manifest list only.
    pub fn manifest_count(&self) -> Result<usize> {
        Ok(self.manifests()?.len())
    }

    /// [`ManifestBloat`] when the current snapshot has more than
    /// [`MANIFEST_COUNT_WARNING_THRESHOLD`] manifests.
    pub fn manifest_bloat(&self) -> Result<Option<ManifestBloat>> {
        self.manifest_bloat_over(MANIFEST_COUNT_WARNING_THRESHOLD)
    }

    /// [`ManifestBloat`] when the current snapshot has more than `threshold` manifests.
    pub fn manifest_bloat_over(&self, threshold: usize) -> Result<Option<ManifestBloat>> {
        let manifests = self.manifest_count()?;
        Ok((manifests > threshold).then(|| ManifestBloat {
            table: self.ident().to_string(),
            manifests,
            threshold,
        }))
    }
}
