//! The operator's settings: a small JSON file in the config directory, written atomically.
//!
//! The app writes it; the command line reads it too (see [`crate::config`]), so both use the
//! same spool. When the app finds a file that is not valid settings it moves it aside (never
//! deletes it) and uses the defaults, so a bad edit can neither stop the app from starting
//! nor be silently lost; the command line only reads, warns, and leaves the file alone.

use std::path::{Path, PathBuf};

use inbox_engine::inbox_policy::capped_read;
use inbox_engine::Trust;

use crate::errors::IpcError;
use crate::views::Settings;

/// `$XDG_CONFIG_HOME/answer-inbox/settings.json`.
pub fn default_settings_path() -> Option<PathBuf> {
    dirs::config_dir().map(|dir| dir.join("answer-inbox").join("settings.json"))
}

impl Settings {
    /// Notifications on, do-not-disturb off, the given spool, kept private.
    pub fn with_spool(spool_dir: &Path) -> Settings {
        Settings {
            spool_dir: spool_dir.display().to_string(),
            notifications: true,
            do_not_disturb: false,
            team: None,
            remote: crate::views::RemoteSettings::default(),
        }
    }

    /// The settings as the window typed them, tidied: paths and group names without the
    /// spaces around them, and an empty team meaning a private spool.
    pub fn tidied(mut self) -> Settings {
        self.spool_dir = self.spool_dir.trim().to_owned();
        self.remote.listen = self.remote.listen.trim().to_owned();
        self.remote.ntfy_topic = self.remote.ntfy_topic.trim().to_owned();
        self.remote.ntfy_token = self.remote.ntfy_token.trim().to_owned();
        self.team = self
            .team
            .map(|team| team.trim().to_owned())
            .filter(|team| !team.is_empty());
        self
    }

    /// Who may use the spool: private, or the team's group.
    pub fn trust(&self) -> Trust {
        match &self.team {
            Some(group) => Trust::Team {
                group: group.clone(),
            },
            None => Trust::Private,
        }
    }
}

/// `private`, or `team:<group>`: the trust in words, for the window.
pub fn trust_in_words(trust: &Trust) -> String {
    match trust {
        Trust::Private => "private".to_owned(),
        Trust::Team { group } => format!("team:{group}"),
    }
}

/// Why the settings file could not be used; names the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsTrouble {
    /// There is a file, but it cannot be read (permissions, a directory, ...).
    #[error("cannot read the settings file {}: {error}", path.display())]
    Unreadable { path: PathBuf, error: String },
    /// It was read, but it is not valid settings.
    #[error("the settings file {} is not valid settings ({error})", path.display())]
    Invalid { path: PathBuf, error: String },
}

impl SettingsTrouble {
    /// What is wrong, without the file's name: `not valid settings: ...`, `cannot be read:
    /// ...`.
    pub fn problem(&self) -> String {
        match self {
            SettingsTrouble::Unreadable { error, .. } => format!("cannot be read: {error}"),
            SettingsTrouble::Invalid { error, .. } => format!("not valid settings: {error}"),
        }
    }
}

/// The largest settings file read. The settings are a few dozen short fields (well under
/// a KiB as the app writes them); 1 MiB leaves room for any hand-edited file and still
/// refuses a runaway one.
pub const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

/// What the settings file at `path` holds, read without changing anything: `None` when
/// there is no file.
pub fn read_settings(path: &Path) -> Result<Option<Settings>, SettingsTrouble> {
    // Without blocking on a FIFO, a plain file only, at most MAX_SETTINGS_BYTES: every
    // command and the window read this file first, so a FIFO or /dev/zero put there must
    // not hang or exhaust them.
    let bytes = match capped_read::read_bytes(path, MAX_SETTINGS_BYTES) {
        Ok(bytes) => bytes,
        Err(error) if error.is_missing() => return Ok(None),
        Err(error) => {
            return Err(SettingsTrouble::Unreadable {
                path: path.to_owned(),
                error: error.problem(),
            })
        }
    };
    serde_json::from_slice::<Settings>(&bytes)
        .map(Some)
        .map_err(|error| SettingsTrouble::Invalid {
            path: path.to_owned(),
            error: error.to_string(),
        })
}

/// Reads the settings at `path`, or `defaults` when there are none. See
/// [`load_settings_file`] for a file that cannot be used.
pub fn load_settings(path: &Path, defaults: Settings) -> (Settings, Option<String>) {
    let (settings, warning) = load_settings_file(path);
    (settings.unwrap_or(defaults), warning)
}

/// The app's reading of its settings file: what it holds (`None` when there is none or it
/// cannot be used), and what to tell the operator. A file that is not valid settings is
/// renamed to `settings.json.unreadable`, so that the app's next save does not overwrite
/// it; one that cannot be read at all is left where it is.
pub fn load_settings_file(path: &Path) -> (Option<Settings>, Option<String>) {
    match read_settings(path) {
        Ok(settings) => (settings, None),
        Err(trouble @ SettingsTrouble::Unreadable { .. }) => (None, Some(trouble.to_string())),
        Err(trouble @ SettingsTrouble::Invalid { .. }) => {
            let aside = path.with_extension("json.unreadable");
            let kept = match std::fs::rename(path, &aside) {
                Ok(()) => format!("kept as {}", aside.display()),
                Err(rename) => format!("could not move it aside: {rename}"),
            };
            (None, Some(format!("{trouble}; using defaults, {kept}")))
        }
    }
}

/// Checks and writes settings: to a temporary file, then renamed over the old one.
pub fn save_settings(path: &Path, settings: &Settings) -> Result<(), IpcError> {
    check_settings(settings)?;
    let storage = |error: std::io::Error| {
        IpcError::new(
            crate::errors::ErrorCode::Storage,
            format!("cannot save settings to {}: {error}", path.display()),
        )
    };
    if let Some(dir) = path.parent() {
        // Private whatever the umask: the folder holds what decides who may answer.
        inbox_spool::locations::create_private_dirs(dir, 0o700).map_err(storage)?;
    }
    let json = serde_json::to_vec_pretty(settings).expect("settings serialise");
    // Private: the file may hold an ntfy access token.
    crate::atomic_file::write_atomically(path, &json, 0o600).map_err(storage)
}

/// What can be said about settings without opening anything: an absolute spool path, a
/// plausible group name.
pub fn check_settings(settings: &Settings) -> Result<(), IpcError> {
    if settings.spool_dir.trim().is_empty() {
        return Err(IpcError::bad_input("the spool directory cannot be empty"));
    }
    if !Path::new(&settings.spool_dir).is_absolute() {
        return Err(IpcError::bad_input(format!(
            "the spool directory must be an absolute path, not \"{}\"",
            settings.spool_dir
        )));
    }
    if let Some(team) = &settings.team {
        check_group_name(team)?;
    }
    if settings
        .remote
        .listen
        .parse::<std::net::SocketAddr>()
        .is_err()
    {
        return Err(IpcError::bad_input(format!(
            "the address to answer from other devices on must be ADDR:PORT (0.0.0.0:8765, \
             127.0.0.1:8765), not \"{}\"",
            inbox_protocol::text::one_line(&settings.remote.listen)
        )));
    }
    Ok(())
}

/// A group name as the system spells them: no spaces, colons, slashes or control characters
/// (which no group has), so a typo is caught here rather than looked up. Whether the group
/// exists, and this account is in it, is the spool's to check when it opens.
fn check_group_name(team: &str) -> Result<(), IpcError> {
    let bad = team
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || matches!(c, ':' | '/' | ','));
    if team.is_empty() || team.chars().count() > 64 || bad.is_some() {
        return Err(IpcError::bad_input(format!(
            "\"{}\" is not a group name: give the name of the system group that shares the \
             spool (e.g. \"ops\"), or leave it empty for a private spool",
            team.escape_default()
        )));
    }
    Ok(())
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
    fn remote_access_is_off_in_older_files_the_file_is_private_and_a_bad_address_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(
            &path,
            br#"{"spool_dir": "/srv/spool", "notifications": true, "do_not_disturb": false}"#,
        )
        .unwrap();
        let (settings, warning) = load_settings(&path, Settings::with_spool(Path::new("/x")));
        assert_eq!(warning, None);
        assert!(!settings.remote.enabled);

        let mut on = settings.clone();
        on.remote.enabled = true;
        on.remote.ntfy_token = "tk_secret".into();
        save_settings(&path, &on).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the file may hold an ntfy token");

        on.remote.listen = "everywhere".into();
        let error = save_settings(&path, &on).unwrap_err();
        assert!(error.message.contains("ADDR:PORT"), "{}", error.message);
    }

    #[test]
    fn a_relative_spool_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut settings = Settings::with_spool(Path::new("/srv/spool"));
        settings.spool_dir = "spool".into();
        let error = save_settings(&dir.path().join("s.json"), &settings).unwrap_err();
        assert!(error.message.contains("absolute"), "{}", error.message);
    }

    #[test]
    fn an_empty_team_is_private_and_a_bad_group_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut settings = Settings::with_spool(Path::new("/srv/spool"));
        settings.team = Some("  ".into());
        let settings = settings.tidied();
        assert_eq!(settings.team, None);
        assert_eq!(settings.trust(), Trust::Private);

        let team = Settings {
            team: Some(" ops ".into()),
            ..settings.clone()
        }
        .tidied();
        assert_eq!(
            team.trust(),
            Trust::Team {
                group: "ops".into()
            }
        );
        assert_eq!(trust_in_words(&team.trust()), "team:ops");

        let bad = Settings {
            team: Some("ops team".into()),
            ..settings
        };
        let error = save_settings(&dir.path().join("s.json"), &bad).unwrap_err();
        assert!(
            error.message.contains("not a group name"),
            "{}",
            error.message
        );
        assert!(!dir.path().join("s.json").exists());
    }

    /// Settings written before team mode existed read back as a private spool.
    #[test]
    fn older_settings_files_are_private() {
        let settings: Settings = serde_json::from_str(
            r#"{"spool_dir": "/srv/spool", "notifications": true, "do_not_disturb": false}"#,
        )
        .unwrap();
        assert_eq!(settings.team, None);
    }
}
