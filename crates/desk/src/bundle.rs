//! Running from the AppImage's bundle (scripts/appimage).
//!
//! The WebKit in the bundle finds its helper processes (the web and network processes, the
//! injected bundle) at `././/lib/<multiarch>/webkit2gtk-4.1`, a path relative to the working
//! directory: scripts/appimage rewrote the absolute one compiled into it, since the mount
//! point is only known at run time. So the app must run with the bundle's `usr/` as its
//! working directory, or WebKit would start whatever program lies at that path under the
//! directory the app was started from, which may be anyone's (/tmp, a checkout). The app sees
//! to this itself, first thing, however it was started: through the AppImage's AppRun, or
//! the unpacked bundle's binary run by hand.
//!
//! Moving changes what a relative path names, so the app's variables that hold paths are
//! made absolute first, from where the app was started.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use inbox_app::config::{DB_VAR, POLICY_VAR, SPOOL_VAR};

/// The variables whose relative values name places from where the app was started.
const PATH_VARS: [&str; 3] = [SPOOL_VAR, DB_VAR, POLICY_VAR];

/// The bundled WebKit, at the bundle's `usr/lib`, beside the app's `usr/bin`. A system's
/// own WebKit lives elsewhere (`/usr/lib/<multiarch>/`), so this marks the bundle.
const BUNDLED_WEBKIT: &str = "lib/libwebkit2gtk-4.1.so.0";

/// The bundle's `usr/` when `exe` is the app inside one; `None` otherwise.
pub fn bundle_usr_dir(exe: &Path) -> Option<PathBuf> {
    let usr = exe.parent()?.parent()?;
    usr.join(BUNDLED_WEBKIT).is_file().then(|| usr.to_owned())
}

/// The new values of the app's path variables that are relative in `vars`: each joined to
/// `started_in`. Absolute and empty values stay as they are. Values are taken as the OS gave
/// them: a relative path that is not UTF-8 must be made absolute too.
pub fn absolute_path_vars(
    vars: impl Fn(&str) -> Option<OsString>,
    started_in: &Path,
) -> Vec<(&'static str, PathBuf)> {
    PATH_VARS
        .iter()
        .filter_map(|&name| {
            let value = vars(name).filter(|value| !value.is_empty())?;
            Path::new(&value)
                .is_relative()
                .then(|| (name, started_in.join(value)))
        })
        .collect()
}

/// When this process is the app inside a bundle: makes its path variables absolute and
/// moves to the bundle's `usr/`. Call it before any other thread starts (it sets variables).
/// Returns the directory moved to, for the log.
pub fn enter_bundle() -> std::io::Result<Option<PathBuf>> {
    let exe = std::env::current_exe()?;
    let Some(usr) = bundle_usr_dir(&exe) else {
        return Ok(None);
    };
    let started_in = std::env::current_dir()?;
    for (name, value) in absolute_path_vars(|name| std::env::var_os(name), &started_in) {
        std::env::set_var(name, value);
    }
    std::env::set_current_dir(&usr)?;
    Ok(Some(usr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundle_is_known_by_the_webkit_beside_the_app() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("usr/bin/answer-inbox-desktop");
        std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
        std::fs::write(&exe, "").unwrap();
        assert_eq!(bundle_usr_dir(&exe), None, "a build or a system install");

        std::fs::create_dir_all(dir.path().join("usr/lib")).unwrap();
        std::fs::write(dir.path().join("usr").join(BUNDLED_WEBKIT), "").unwrap();
        assert_eq!(bundle_usr_dir(&exe), Some(dir.path().join("usr")));
    }

    #[test]
    fn only_relative_path_variables_are_made_absolute_from_where_the_app_started() {
        let vars = |name: &str| match name {
            SPOOL_VAR => Some("spool".into()),
            DB_VAR => Some("/var/inbox.sqlite3".into()),
            POLICY_VAR => Some(OsString::new()),
            _ => None,
        };
        assert_eq!(
            absolute_path_vars(vars, Path::new("/home/op/work")),
            vec![(SPOOL_VAR, PathBuf::from("/home/op/work/spool"))]
        );
        assert!(absolute_path_vars(|_| None, Path::new("/x")).is_empty());
    }
}
