//! Where things are, for the desktop app and the command line alike: the spool, its
//! database, the policy file, who the spool is for (team), and the settings file the app's
//! Settings write. Each value comes with where it came from.
//!
//! Precedence, highest first: a command-line flag, an environment variable, the settings
//! file, the default (the XDG directories). The app has no flags; the command line's parser
//! merges a flag with its variable and tells this module which one won ([`Given`]).
//!
//! One resolution for both programs, so that the app's Settings moving the spool moves it
//! for `ask`, `mcp` and `watch` too, and both open the same database for the same spool
//! ([`db_for_spool`]).

use std::fmt;
use std::path::{Path, PathBuf};

use inbox_engine::{locations, Trust};
use serde::Serialize;

use crate::settings::{default_settings_path, read_settings};
use crate::views::Settings;

/// The spool directory's variable (`--spool`).
pub const SPOOL_VAR: &str = "ANSWER_INBOX_DIR";
/// The database's variable (`--db`).
pub const DB_VAR: &str = "ANSWER_INBOX_DB";
/// The policy file's variable (`--policy`).
pub const POLICY_VAR: &str = "ANSWER_INBOX_POLICY";
/// The team's variable (`--team`); the command line's only: the app takes its team from
/// Settings.
pub const TEAM_VAR: &str = "ANSWER_INBOX_TEAM";

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// A command-line flag, such as `--spool`.
    Flag { name: &'static str },
    /// An environment variable, such as `ANSWER_INBOX_DIR`.
    Env { name: &'static str },
    /// The settings file (what the app's Settings saved).
    SettingsFile { path: PathBuf },
    /// The default, under the XDG directories.
    Default,
    /// The database of a spool other than the default one: its own file beside the default
    /// database (see [`db_for_spool`]).
    DefaultForSpool,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Flag { name } => write!(f, "flag {name}"),
            Source::Env { name } => write!(f, "environment variable {name}"),
            Source::SettingsFile { path } => write!(f, "settings file {}", path.display()),
            Source::Default => f.write_str("default"),
            Source::DefaultForSpool => f.write_str("default for this spool"),
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sourced<T> {
    pub value: T,
    pub source: Source,
}

impl<T> Sourced<T> {
    pub fn new(value: T, source: Source) -> Sourced<T> {
        Sourced { value, source }
    }
}

/// Why a value cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Nothing gave the value and its default directory cannot be found (no HOME). Each
    /// program says how to give it (a flag, a variable).
    #[error("cannot find the user's {kind} directory (is HOME set?)")]
    NoDirectory { kind: &'static str },
    /// The settings file holds something that cannot be used; the message names the file.
    #[error("{0}")]
    BadSettings(String),
}

/// What the command line and the environment give, before the settings file and the
/// defaults: for each value, the one that won of its flag and its variable. An empty value
/// means "not given", as it does for most tools (`ANSWER_INBOX_DIR=`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Given {
    pub spool: Option<Sourced<PathBuf>>,
    pub db: Option<Sourced<PathBuf>>,
    pub policy: Option<Sourced<PathBuf>>,
    pub team: Option<Sourced<String>>,
}

impl Given {
    /// From the environment alone, for the desktop app (which has no flags):
    /// `ANSWER_INBOX_DIR`, `ANSWER_INBOX_DB` and `ANSWER_INBOX_POLICY`. The team is not read:
    /// the app's Settings choose it.
    pub fn from_env() -> Given {
        let var = |name: &'static str| {
            std::env::var_os(name)
                .filter(|value| !value.is_empty())
                .map(|value| Sourced::new(PathBuf::from(value), Source::Env { name }))
        };
        Given {
            spool: var(SPOOL_VAR),
            db: var(DB_VAR),
            policy: var(POLICY_VAR),
            team: None,
        }
    }
}

/// Where things are when nothing says otherwise; `None` where the directory cannot be found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Defaults {
    pub spool: Option<PathBuf>,
    pub db: Option<PathBuf>,
    pub policy: Option<PathBuf>,
    pub settings_file: Option<PathBuf>,
}

impl Defaults {
    /// The XDG directories': `$XDG_DATA_HOME/answer-inbox/{spool,inbox.sqlite3}`,
    /// `$XDG_CONFIG_HOME/answer-inbox/{policy.toml,settings.json}`.
    pub fn from_dirs() -> Defaults {
        Defaults {
            spool: locations::default_spool(),
            db: locations::default_db(),
            policy: locations::default_policy(),
            settings_file: default_settings_path(),
        }
    }
}

/// The settings file as read, and what it holds when that is valid settings.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingsFile {
    pub path: PathBuf,
    pub state: FileState,
    pub settings: Option<Settings>,
}

/// Whether the settings file is there and could be used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum FileState {
    /// There is no file: the defaults apply.
    Missing,
    /// Read, and valid settings.
    Read,
    /// There is a file, but it cannot be read or is not valid settings (`problem`).
    Unreadable { problem: String },
}

impl SettingsFile {
    /// Reads the file and leaves it as it is, whatever it holds: the command line only
    /// reads it (the app, which writes it, moves an invalid one aside; see
    /// [`crate::settings::load_settings`]).
    pub fn read(path: &Path) -> SettingsFile {
        let (state, settings) = match read_settings(path) {
            Ok(None) => (FileState::Missing, None),
            Ok(Some(settings)) => (FileState::Read, Some(settings)),
            Err(trouble) => (
                FileState::Unreadable {
                    problem: trouble.problem(),
                },
                None,
            ),
        };
        SettingsFile {
            path: path.to_owned(),
            state,
            settings,
        }
    }

    /// What to say on standard error about the file, if anything.
    pub fn warning(&self) -> Option<String> {
        match &self.state {
            FileState::Unreadable { problem } => Some(format!(
                "the settings file {} is not usable ({problem}); using the defaults instead \
                 (the file is left as it is: fix it, or save Settings in the app)",
                self.path.display()
            )),
            FileState::Missing | FileState::Read => None,
        }
    }
}

/// Everything resolved, each value with its source, or why it cannot be had.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// `None` when the config directory cannot be found.
    pub settings_file: Option<SettingsFile>,
    pub spool: Result<Sourced<PathBuf>, ConfigError>,
    pub db: Result<Sourced<PathBuf>, ConfigError>,
    pub policy: Result<Sourced<PathBuf>, ConfigError>,
    /// The team's group; `None` is a private spool.
    pub team: Sourced<Option<String>>,
}

impl Resolved {
    /// Who may use the spool: private, or the team's group.
    pub fn trust(&self) -> Trust {
        match &self.team.value {
            Some(group) => Trust::Team {
                group: group.clone(),
            },
            None => Trust::Private,
        }
    }
}

/// Resolves every value from what was given, the settings file (already read: by
/// [`SettingsFile::read`], or by the app, which moves an invalid one aside) and the defaults.
pub fn resolve(given: &Given, defaults: &Defaults, file: Option<SettingsFile>) -> Resolved {
    let spool = spool_dir(
        given.spool.as_ref(),
        file.as_ref(),
        defaults.spool.as_deref(),
    );
    let db = match &spool {
        Ok(spool) => database(
            given.db.as_ref(),
            &spool.value,
            defaults.spool.as_deref(),
            defaults.db.as_deref(),
        ),
        // Without a spool only a given database can be named; the spool's error says why.
        Err(error) => given.db.clone().ok_or_else(|| error.clone()),
    };
    Resolved {
        spool,
        db,
        policy: policy_file(given.policy.as_ref(), defaults.policy.as_deref()),
        team: team(given.team.as_ref(), file.as_ref()),
        settings_file: file,
    }
}

/// The spool: given (flag or variable), else the settings file's, else the default. A
/// settings file whose spool is empty or not an absolute path is refused, naming the file:
/// a relative path would be a different directory for every working directory.
pub fn spool_dir(
    given: Option<&Sourced<PathBuf>>,
    file: Option<&SettingsFile>,
    default: Option<&Path>,
) -> Result<Sourced<PathBuf>, ConfigError> {
    if let Some(given) = given.filter(|given| !given.value.as_os_str().is_empty()) {
        return Ok(given.clone());
    }
    if let Some((path, settings)) =
        file.and_then(|file| Some((&file.path, file.settings.as_ref()?)))
    {
        let spool = settings.spool_dir.trim();
        if spool.is_empty() {
            return Err(ConfigError::BadSettings(format!(
                "the settings file {} has an empty spool_dir; give the spool's absolute path \
                 there (or choose it in the app's Settings)",
                path.display()
            )));
        }
        if !Path::new(spool).is_absolute() {
            return Err(ConfigError::BadSettings(format!(
                "the settings file {} has the spool_dir \"{}\", which is not an absolute path; \
                 give the spool's absolute path there (or choose it in the app's Settings)",
                path.display(),
                inbox_protocol::text::one_line(spool)
            )));
        }
        return Ok(Sourced::new(
            PathBuf::from(spool),
            Source::SettingsFile { path: path.clone() },
        ));
    }
    default
        .map(|spool| Sourced::new(spool.to_owned(), Source::Default))
        .ok_or(ConfigError::NoDirectory { kind: "data" })
}

/// The database for `spool`: given (flag or variable), else [`db_for_spool`]'s.
pub fn database(
    given: Option<&Sourced<PathBuf>>,
    spool: &Path,
    default_spool: Option<&Path>,
    default_db: Option<&Path>,
) -> Result<Sourced<PathBuf>, ConfigError> {
    if let Some(given) = given.filter(|given| !given.value.as_os_str().is_empty()) {
        return Ok(given.clone());
    }
    let default_db = default_db.ok_or(ConfigError::NoDirectory { kind: "data" })?;
    match default_spool {
        Some(default_spool) if same_spool(spool, default_spool) => {
            Ok(Sourced::new(default_db.to_owned(), Source::Default))
        }
        _ => Ok(Sourced::new(
            per_spool_db(spool, default_db),
            Source::DefaultForSpool,
        )),
    }
}

/// The rule for which database a spool's inbox keeps, the app's and the command line's
/// alike: the default database for the default spool, and a separate file per other spool
/// beside it (`inbox-<digest>.sqlite3`), so switching spools never mixes two inboxes'
/// records.
pub fn db_for_spool(spool: &Path, default_spool: &Path, default_db: &Path) -> PathBuf {
    if same_spool(spool, default_spool) {
        default_db.to_owned()
    } else {
        per_spool_db(spool, default_db)
    }
}

fn same_spool(spool: &Path, default_spool: &Path) -> bool {
    as_absolute(spool) == as_absolute(default_spool)
}

fn per_spool_db(spool: &Path, default_db: &Path) -> PathBuf {
    let spool = as_absolute(spool);
    let digest = inbox_protocol::sha256_hex(spool.as_os_str().as_encoded_bytes());
    default_db.with_file_name(format!("inbox-{}.sqlite3", &digest[..12]))
}

/// A relative spool (`--spool spool`) as the absolute path it names from here, so that it
/// and its absolute spelling share one database. An absolute path is kept byte for byte:
/// its digest names the databases the app has made already.
fn as_absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
    }
}

/// The policy file: given (flag or variable), else the default place (which need not
/// exist: then the shipped policy applies). The settings file holds no policy path.
pub fn policy_file(
    given: Option<&Sourced<PathBuf>>,
    default: Option<&Path>,
) -> Result<Sourced<PathBuf>, ConfigError> {
    if let Some(given) = given.filter(|given| !given.value.as_os_str().is_empty()) {
        return Ok(given.clone());
    }
    default
        .map(|policy| Sourced::new(policy.to_owned(), Source::Default))
        .ok_or(ConfigError::NoDirectory { kind: "config" })
}

/// The team: given (flag or variable), else the settings file's, else none (private).
/// Spaces around a group name are dropped, and an empty one means private.
pub fn team(
    given: Option<&Sourced<String>>,
    file: Option<&SettingsFile>,
) -> Sourced<Option<String>> {
    let group = |name: &str| Some(name.trim().to_owned()).filter(|name| !name.is_empty());
    if let Some(given) = given {
        if let Some(name) = group(&given.value) {
            return Sourced::new(Some(name), given.source.clone());
        }
    }
    if let Some(file) = file {
        if let Some(name) = file
            .settings
            .as_ref()
            .and_then(|settings| group(settings.team.as_deref()?))
        {
            return Sourced::new(
                Some(name),
                Source::SettingsFile {
                    path: file.path.clone(),
                },
            );
        }
    }
    Sourced::new(None, Source::Default)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults(dir: &Path) -> Defaults {
        Defaults {
            spool: Some(dir.join("data/spool")),
            db: Some(dir.join("data/inbox.sqlite3")),
            policy: Some(dir.join("config/policy.toml")),
            settings_file: Some(dir.join("config/settings.json")),
        }
    }

    fn flag(name: &'static str, value: &str) -> Sourced<PathBuf> {
        Sourced::new(PathBuf::from(value), Source::Flag { name })
    }

    fn env(name: &'static str, value: &str) -> Sourced<PathBuf> {
        Sourced::new(PathBuf::from(value), Source::Env { name })
    }

    /// A settings file at `<dir>/config/settings.json` holding `json`, read as the command
    /// line reads it.
    fn file_with(dir: &Path, json: &str) -> SettingsFile {
        let path = dir.join("config/settings.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, json).unwrap();
        SettingsFile::read(&path)
    }

    fn settings_json(spool: &str, team: Option<&str>) -> String {
        serde_json::json!({
            "spool_dir": spool,
            "notifications": true,
            "do_not_disturb": false,
            "team": team,
        })
        .to_string()
    }

    #[test]
    fn a_flag_beats_a_variable_beats_the_settings_file_beats_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let defaults = defaults(dir.path());
        let file = file_with(
            dir.path(),
            &settings_json("/srv/from-settings", Some("ops")),
        );
        let settings_source = Source::SettingsFile {
            path: file.path.clone(),
        };

        // Nothing given, no file: the defaults, private.
        let none = resolve(&Given::default(), &defaults, None);
        assert_eq!(
            none.spool,
            Ok(Sourced::new(dir.path().join("data/spool"), Source::Default))
        );
        assert_eq!(none.team, Sourced::new(None, Source::Default));
        assert_eq!(none.trust(), Trust::Private);

        // The settings file moves the spool and sets the team.
        let from_file = resolve(&Given::default(), &defaults, Some(file.clone()));
        assert_eq!(
            from_file.spool,
            Ok(Sourced::new(
                PathBuf::from("/srv/from-settings"),
                settings_source.clone()
            ))
        );
        assert_eq!(
            from_file.team,
            Sourced::new(Some("ops".to_owned()), settings_source)
        );

        // A variable beats the file; the command line's parser lets a flag beat a variable
        // (it gives whichever won), and either beats the file.
        for given in [
            env(SPOOL_VAR, "/srv/from-env"),
            flag("--spool", "/srv/from-flag"),
        ] {
            let team = Sourced::new(" devs ".to_owned(), given.source.clone());
            let resolved = resolve(
                &Given {
                    spool: Some(given.clone()),
                    team: Some(team),
                    ..Given::default()
                },
                &defaults,
                Some(file.clone()),
            );
            assert_eq!(resolved.spool, Ok(given.clone()));
            assert_eq!(
                resolved.team,
                Sourced::new(Some("devs".to_owned()), given.source.clone())
            );
        }

        // An empty value is "not given": the next in line applies.
        let empty = resolve(
            &Given {
                spool: Some(env(SPOOL_VAR, "")),
                db: Some(env(DB_VAR, "")),
                policy: Some(flag("--policy", "")),
                team: Some(Sourced::new(" ".into(), Source::Env { name: TEAM_VAR })),
            },
            &defaults,
            None,
        );
        assert_eq!(empty.spool.unwrap().source, Source::Default);
        assert_eq!(empty.db.unwrap().source, Source::Default);
        assert_eq!(empty.policy.unwrap().source, Source::Default);
        assert_eq!(empty.team, Sourced::new(None, Source::Default));

        let policy = resolve(
            &Given {
                policy: Some(flag("--policy", "/etc/p.toml")),
                ..Given::default()
            },
            &defaults,
            None,
        );
        assert_eq!(policy.policy, Ok(flag("--policy", "/etc/p.toml")));
    }

    #[test]
    fn the_database_follows_the_spool_unless_given() {
        let dir = tempfile::tempdir().unwrap();
        let defaults = defaults(dir.path());
        let default_db = dir.path().join("data/inbox.sqlite3");

        let default = resolve(&Given::default(), &defaults, None);
        assert_eq!(
            default.db,
            Ok(Sourced::new(default_db.clone(), Source::Default))
        );

        // Another spool, from wherever: its own database beside the default one, the same
        // file for the same spool, another for another.
        let other = file_with(dir.path(), &settings_json("/srv/other", None));
        let from_file = resolve(&Given::default(), &defaults, Some(other));
        let from_env = resolve(
            &Given {
                spool: Some(env(SPOOL_VAR, "/srv/other")),
                ..Given::default()
            },
            &defaults,
            None,
        );
        let db = from_file.db.unwrap();
        assert_eq!(db.source, Source::DefaultForSpool);
        assert_eq!(db.value, from_env.db.unwrap().value);
        assert_eq!(db.value.parent(), default_db.parent());
        let name = db.value.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(
            name.starts_with("inbox-") && name.ends_with(".sqlite3") && name.len() == 26,
            "{name}"
        );
        assert_ne!(
            db_for_spool(Path::new("/srv/third"), Path::new("/d/spool"), &default_db),
            db.value
        );

        // The rule the app has always used: the digest of the spool's path as given, so
        // the databases it made before are found again.
        let digest = inbox_protocol::sha256_hex(b"/srv/other");
        assert_eq!(name, format!("inbox-{}.sqlite3", &digest[..12]));

        // A relative spool names the same directory as its absolute spelling.
        let here = std::env::current_dir().unwrap();
        assert_eq!(
            db_for_spool(Path::new("spool"), Path::new("/d/spool"), &default_db),
            db_for_spool(&here.join("spool"), Path::new("/d/spool"), &default_db)
        );

        // A given database wins, whatever the spool.
        let given = resolve(
            &Given {
                spool: Some(env(SPOOL_VAR, "/srv/other")),
                db: Some(flag("--db", "/var/inbox.sqlite3")),
                ..Given::default()
            },
            &defaults,
            None,
        );
        assert_eq!(given.db, Ok(flag("--db", "/var/inbox.sqlite3")));
    }

    #[test]
    fn an_unreadable_settings_file_is_a_warning_and_is_left_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let file = file_with(dir.path(), "{ not json");
        let FileState::Unreadable { problem } = &file.state else {
            panic!("{:?}", file.state);
        };
        assert!(problem.starts_with("not valid settings"), "{problem}");
        let warning = file.warning().unwrap();
        assert!(
            warning.contains(&file.path.display().to_string()),
            "{warning}"
        );
        assert!(warning.contains("left as it is"), "{warning}");

        let resolved = resolve(&Given::default(), &defaults(dir.path()), Some(file.clone()));
        assert_eq!(resolved.spool.unwrap().source, Source::Default);
        assert_eq!(std::fs::read(&file.path).unwrap(), b"{ not json");
        assert!(!dir.path().join("config/settings.json.unreadable").exists());
    }

    #[test]
    fn a_relative_or_empty_spool_in_the_settings_file_is_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        for spool in ["spool", "~/spool", "  "] {
            let file = file_with(dir.path(), &settings_json(spool, None));
            let resolved = resolve(&Given::default(), &defaults(dir.path()), Some(file.clone()));
            let Err(ConfigError::BadSettings(message)) = &resolved.spool else {
                panic!("{spool:?}: {:?}", resolved.spool);
            };
            assert!(
                message.contains(&file.path.display().to_string()),
                "{message}"
            );
            assert_eq!(resolved.db, Err(ConfigError::BadSettings(message.clone())));

            // A spool given otherwise makes the file's irrelevant.
            let given = resolve(
                &Given {
                    spool: Some(env(SPOOL_VAR, "/srv/x")),
                    ..Given::default()
                },
                &defaults(dir.path()),
                Some(file),
            );
            assert_eq!(given.spool, Ok(env(SPOOL_VAR, "/srv/x")));
        }
    }

    #[test]
    fn no_home_is_an_error_only_for_what_is_not_given() {
        let nowhere = Defaults {
            spool: None,
            db: None,
            policy: None,
            settings_file: None,
        };
        let resolved = resolve(&Given::default(), &nowhere, None);
        assert_eq!(
            resolved.spool,
            Err(ConfigError::NoDirectory { kind: "data" })
        );
        assert_eq!(
            resolved.policy,
            Err(ConfigError::NoDirectory { kind: "config" })
        );
        let given = resolve(
            &Given {
                spool: Some(flag("--spool", "/srv/s")),
                db: Some(flag("--db", "/srv/db")),
                ..Given::default()
            },
            &nowhere,
            None,
        );
        assert!(given.spool.is_ok() && given.db.is_ok());
    }

    #[test]
    fn sources_say_where_in_words() {
        assert_eq!(Source::Flag { name: "--spool" }.to_string(), "flag --spool");
        assert_eq!(
            Source::Env { name: SPOOL_VAR }.to_string(),
            "environment variable ANSWER_INBOX_DIR"
        );
        assert_eq!(
            Source::SettingsFile {
                path: "/c/settings.json".into()
            }
            .to_string(),
            "settings file /c/settings.json"
        );
        assert_eq!(
            serde_json::to_value(Source::Env { name: DB_VAR }).unwrap(),
            serde_json::json!({"kind": "env", "name": "ANSWER_INBOX_DB"})
        );
    }
}
