//! PROJ for `ST_Transform`. SedonaDB's `ST_Transform` runs on the PROJ library, which geoberg
//! loads at run time from the system (Debian: `apt-get install libproj25`) instead of building
//! it from source into every binary: linking PROJ statically (SedonaDB's `proj` feature) would
//! add PROJ, SQLite and libtiff to a cold build that already takes half an hour. Without PROJ
//! the function fails with [`PROJ_HINT`] as its fix.

use std::path::PathBuf;
use std::sync::Once;

use sedona_proj::transform::{ProjCrsEngineBuilder, configure_global_proj_engine};

/// The environment variable naming the PROJ shared library to load (a path, or a name the
/// dynamic loader finds), for a PROJ other than the system's `libproj.so.25`.
pub const PROJ_LIBRARY_ENV: &str = "GEOBERG_PROJ_LIBRARY";

/// The library loaded when [`PROJ_LIBRARY_ENV`] is unset: PROJ 9 as Debian 12 and Ubuntu 24.04
/// install it.
const SYSTEM_PROJ: &str = "libproj.so.25";

/// The fix for an `ST_Transform` that found no PROJ.
pub(crate) const PROJ_HINT: &str = "ST_Transform needs the PROJ library (9.x): install it \
     (Debian / Ubuntu: apt-get install libproj25), or set GEOBERG_PROJ_LIBRARY to the path of \
     libproj's shared library";

/// Points SedonaDB's `ST_Transform` at the PROJ library to load (once per process; nothing is
/// loaded until a query transforms).
pub(crate) fn configure_proj() {
    static CONFIGURED: Once = Once::new();
    CONFIGURED.call_once(|| {
        let library = std::env::var_os(PROJ_LIBRARY_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(SYSTEM_PROJ));
        // Fails only when another thread panicked while configuring.
        let _ = configure_global_proj_engine(
            ProjCrsEngineBuilder::default().with_shared_library(library),
        );
    });
}
