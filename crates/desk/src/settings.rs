//! The operator's settings: a small JSON file in the config directory, written atomically.
//!
//! A settings file that cannot be read is moved aside (never deleted) and the defaults are
//! used, so a bad edit can neither stop the app from starting nor be silently lost.

use std::path::{Path, PathBuf};

use crate::errors::IpcError;
use crate::views::Settings;

/// `$XDG_CONFIG_HOME/answer-inbox/settings.json`.
pub fn default_settings_path() -> Option<PathBuf> {
    dirs::config_dir().map(|dir| dir.join("answer-inbox").join("settings.json"))
}

impl Settings {
    /// Notifications on, do-not-disturb off, the given spool.
    pub fn with_spool(spool_dir: &Path) -> Settings {
        Settings {
            spool_dir: spool_dir.display().to_string(),
            notifications: true,
            do_not_disturb: false,
        }
    }
}

/// Reads the settings at `path`, or `defaults` when there are none. A file that is not
/// valid settings is renamed to `settings.json.unreadable` and reported in the second value.
pub fn load_settings(path: &Path, defaults: Settings) -> (Settings, Option<String>) {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return (defaults, None),
        Err(error) => {
            return (
                defaults,
                Some(format!("cannot read {}: {error}", path.display())),
            )
        }
    };
    match serde_json::from_slice::<Settings>(&bytes) {
        Ok(settings) => (settings, None),
        Err(error) => {
            let aside = path.with_extension("json.unreadable");
            let kept = match std::fs::rename(path, &aside) {
                Ok(()) => format!("kept as {}", aside.display()),
                Err(rename) => format!("could not move it aside: {rename}"),
            };
            (
                defaults,
                Some(format!(
                    "{} is not valid settings ({error}); using defaults, {kept}",
                    path.display()
                )),
            )
        }
    }
}

/// Checks and writes settings: to a temporary file, then renamed over the old one.
pub fn save_settings(path: &Path, settings: &Settings) -> Result<(), IpcError> {
    if settings.spool_dir.trim().is_empty() {
        return Err(IpcError::bad_input("the spool directory cannot be empty"));
    }
    if !Path::new(&settings.spool_dir).is_absolute() {
        return Err(IpcError::bad_input(format!(
            "the spool directory must be an absolute path, not \"{}\"",
            settings.spool_dir
        )));
    }
    let storage = |error: std::io::Error| {
        IpcError::new(
            crate::errors::ErrorCode::Storage,
            format!("cannot save settings to {}: {error}", path.display()),
        )
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(storage)?;
    }
    let json = serde_json::to_vec_pretty(settings).expect("settings serialise");
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, json).map_err(storage)?;
    std::fs::rename(&tmp, path).map_err(storage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_missing_means_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/settings.json");
        let defaults = Settings::with_spool(Path::new("/srv/spool"));
        assert_eq!(
            load_settings(&path, defaults.clone()),
            (defaults.clone(), None)
        );
        let changed = Settings {
            do_not_disturb: true,
            ..defaults.clone()
        };
        save_settings(&path, &changed).unwrap();
        assert_eq!(load_settings(&path, defaults).0, changed);
    }

    #[test]
    fn an_unreadable_file_is_kept_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, b"{ not json").unwrap();
        let defaults = Settings::with_spool(Path::new("/srv/spool"));
        let (settings, warning) = load_settings(&path, defaults.clone());
        assert_eq!(settings, defaults);
        assert!(warning.unwrap().contains("not valid settings"));
        assert_eq!(
            std::fs::read(dir.path().join("settings.json.unreadable")).unwrap(),
            b"{ not json"
        );
    }

    #[test]
    fn a_relative_spool_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut settings = Settings::with_spool(Path::new("/srv/spool"));
        settings.spool_dir = "spool".into();
        let error = save_settings(&dir.path().join("s.json"), &settings).unwrap_err();
        assert!(error.message.contains("absolute"), "{}", error.message);
    }
}
