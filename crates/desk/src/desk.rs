//! The running app without its window: the inbox, the background loop, notifications,
//! settings and the policy file, and the rules for changing them while the app runs. The Tauri shell holds one
//! [`Desk`] and forwards every command and tray click to it.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};

use inbox_engine::notifier::{Fanout, NotifierSlot};
use inbox_protocol::Surface;
use serde_json::{Map, Value};

use inbox_app::config;
use inbox_app::settings::{check_settings, load_settings_file, save_settings, trust_in_words};
use inbox_app::{
    operator_shown, ErrorCode, Inbox, IpcError, PolicyProblemView, PolicyView, Settings,
    StatusView, SubmitResult, UiEvent,
};

use crate::notify::{ActionNotifier, Chosen, NotifySwitches};

/// Where things are, decided once at start-up from the environment.
#[derive(Debug, Clone)]
pub struct DeskConfig {
    /// `ANSWER_INBOX_DIR`: overrides the spool in the settings file.
    pub spool_override: Option<PathBuf>,
    /// `ANSWER_INBOX_DB`: one database whatever the spool.
    pub db_override: Option<PathBuf>,
    pub default_spool: PathBuf,
    pub default_db: PathBuf,
    pub settings_path: PathBuf,
    /// `ANSWER_INBOX_POLICY`, else `<XDG config>/answer-inbox/policy.toml`: the operator's
    /// policy, shared with the command line (the shipped policy while it does not exist).
    pub policy_path: PathBuf,
    /// Shown by the notification daemon.
    pub app_name: &'static str,
}

impl DeskConfig {
    /// From `ANSWER_INBOX_DIR`, `ANSWER_INBOX_DB`, `ANSWER_INBOX_POLICY` and the XDG
    /// directories, by the rules the command line follows too ([`inbox_app::config`]).
    pub fn from_env(app_name: &'static str) -> Result<DeskConfig, IpcError> {
        let given = config::Given::from_env();
        let defaults = config::Defaults::from_dirs();
        let missing = || {
            IpcError::bad_input(
                "cannot find the user's data and config directories (is HOME set?); \
                 set ANSWER_INBOX_DIR and ANSWER_INBOX_DB",
            )
        };
        let policy = config::policy_file(given.policy.as_ref(), defaults.policy.as_deref())
            .map_err(|_| missing())?;
        Ok(DeskConfig {
            spool_override: given.spool.map(|spool| spool.value),
            db_override: given.db.map(|db| db.value),
            default_spool: defaults.spool.ok_or_else(missing)?,
            default_db: defaults.db.ok_or_else(missing)?,
            settings_path: defaults.settings_file.ok_or_else(missing)?,
            policy_path: policy.value,
            app_name,
        })
    }

    /// The database for a spool: the override, else the shared rule
    /// ([`config::db_for_spool`]): the default one for the default spool, and a separate
    /// file per other spool, so switching spools never mixes two inboxes' records.
    pub fn db_for(&self, spool: &Path) -> PathBuf {
        match &self.db_override {
            Some(db) => db.clone(),
            None => config::db_for_spool(spool, &self.default_spool, &self.default_db),
        }
    }

    /// The spool to open at start: `ANSWER_INBOX_DIR`, else the settings file's, else the
    /// default, as the command line decides it ([`config::spool_dir`]). A settings file
    /// whose spool is not an absolute path is an error naming the file.
    fn spool(&self, settings: Option<&Settings>) -> Result<PathBuf, IpcError> {
        let given = self.spool_override.as_ref().map(|spool| {
            config::Sourced::new(
                spool.clone(),
                config::Source::Env {
                    name: config::SPOOL_VAR,
                },
            )
        });
        let file = settings.map(|settings| config::SettingsFile {
            path: self.settings_path.clone(),
            state: config::FileState::Read,
            settings: Some(settings.clone()),
        });
        config::spool_dir(given.as_ref(), file.as_ref(), Some(&self.default_spool))
            .map(|spool| spool.value)
            .map_err(|error| IpcError::bad_input(error.to_string()))
    }
}

/// The two things the shell does for the desk: show events in the window, and raise the
/// window on a request.
pub struct ShellHooks {
    pub emit: Arc<dyn Fn(UiEvent) + Send + Sync>,
    pub show_window: Arc<dyn Fn() + Send + Sync>,
    /// Told of new requests besides the desktop's bubbles (pushes to a phone); empty
    /// until the shell puts a notifier in it.
    pub also_notify: NotifierSlot,
}

pub struct Desk {
    config: DeskConfig,
    hooks: ShellHooks,
    settings: Mutex<Settings>,
    /// The inbox and its one loop; a settings change may swap it for another spool's.
    inbox: RwLock<Arc<Inbox>>,
    switches: Arc<NotifySwitches>,
    /// Said once at start-up (an unreadable settings file, ...); shown by the window.
    pub warnings: Vec<String>,
    this: Weak<Desk>,
}

impl Desk {
    /// Opens the inbox and starts the background loop with notifications.
    pub fn start(config: DeskConfig, hooks: ShellHooks) -> Result<Arc<Desk>, IpcError> {
        // An invalid file is moved aside here (the app writes the file; the command line
        // only reads it) and the defaults apply.
        let (from_file, warning) = load_settings_file(&config.settings_path);
        let spool = config.spool(from_file.as_ref())?;
        let mut settings = from_file.unwrap_or_else(|| Settings::with_spool(&spool));
        settings.spool_dir = spool.display().to_string();
        let settings = settings.tidied();
        let switches = NotifySwitches::new(settings.notifications, settings.do_not_disturb);
        // The notification buttons call back into the desk, which exists only once its
        // inbox runs: they find it through this cell, set as soon as it does.
        let this_cell: Arc<OnceLock<Weak<Desk>>> = Arc::new(OnceLock::new());
        let inbox = start_inbox(&config, &switches, &hooks, &settings, &this_cell)?;
        let desk = Arc::new_cyclic(|this| {
            let _ = this_cell.set(this.clone());
            Desk {
                config,
                hooks,
                settings: Mutex::new(settings),
                inbox: RwLock::new(Arc::new(inbox)),
                switches,
                warnings: warning.into_iter().collect(),
                this: this.clone(),
            }
        });
        Ok(desk)
    }

    /// The inbox as it is now (a settings change may swap it).
    pub fn inbox(&self) -> Arc<Inbox> {
        Arc::clone(&self.inbox.read().unwrap_or_else(|p| p.into_inner()))
    }

    pub fn settings(&self) -> Settings {
        self.settings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn status(&self) -> Result<StatusView, IpcError> {
        let inbox = self.inbox();
        let mut warnings = inbox.spool_warnings();
        warnings.extend(self.warnings.iter().cloned());
        Ok(StatusView {
            pending: inbox.pending_count()?,
            spool_dir: inbox.spool_dir().display().to_string(),
            db_path: inbox.db_path().display().to_string(),
            notifications: self.switches.describe().to_owned(),
            operator: operator_shown(),
            trust: trust_in_words(inbox.trust()),
            warnings,
            policy_trouble: inbox.policy_trouble(),
        })
    }

    /// The policy file as the Settings view edits it, with the inbox's report of trouble.
    pub fn policy(&self) -> Result<PolicyView, IpcError> {
        inbox_app::policy::read_policy(&self.config.policy_path, self.inbox().policy_trouble())
    }

    /// The problems of policy text, each with its line; none when it may be saved.
    pub fn check_policy(&self, text: &str) -> Vec<PolicyProblemView> {
        inbox_app::policy::check_policy(text)
    }

    /// Saves the policy file, if `text` is valid (see [`inbox_app::policy::save_policy`]). The
    /// loop takes the new policy at its next turn, within seconds, and judges every pending
    /// request again by it.
    pub fn save_policy(&self, text: &str) -> Result<PolicyView, IpcError> {
        inbox_app::policy::save_policy(&self.config.policy_path, text)
    }

    /// Opens the policy file in the operator's editor through `open`, writing the shipped
    /// policy first when there is no file yet.
    pub fn open_policy(
        &self,
        open: impl FnOnce(&Path) -> Result<(), String>,
    ) -> Result<(), IpcError> {
        let path = inbox_app::policy::ensure_policy_file(&self.config.policy_path)?;
        open(&path).map_err(|e| {
            IpcError::new(
                ErrorCode::Storage,
                format!("cannot open {} in an editor: {e}", path.display()),
            )
        })
    }

    /// Applies and saves new settings. A new spool (or the same one with another trust) is
    /// opened, and its loop started, before the old one is let go, and the settings file is
    /// written only then: a directory the spool refuses (one that holds other things) is
    /// reported, nothing in it is touched, and everything stays as it was.
    pub fn save_settings(&self, new: Settings) -> Result<Settings, IpcError> {
        let mut current = self.settings.lock().unwrap_or_else(|p| p.into_inner());
        let new = new.tidied();
        if let Some(spool) = &self.config.spool_override {
            if Path::new(&new.spool_dir) != spool {
                return Err(IpcError::bad_input(format!(
                    "the spool is set by ANSWER_INBOX_DIR={}; unset it to choose another",
                    spool.display()
                )));
            }
        }
        check_settings(&new)?;
        let reopen = new.spool_dir != current.spool_dir || new.team != current.team;
        let started = if reopen {
            let this_cell = Arc::new(OnceLock::from(self.this.clone()));
            let inbox = start_inbox(&self.config, &self.switches, &self.hooks, &new, &this_cell)
                .map_err(|error| {
                    IpcError::bad_input(format!(
                        "{}. Nothing was changed: the inbox still watches {}",
                        error.message, current.spool_dir
                    ))
                })?;
            Some(inbox)
        } else {
            None
        };
        // A new inbox that cannot be kept (the file would not save) is dropped here, which
        // stops its loop; the old one runs on.
        save_settings(&self.config.settings_path, &new)?;
        if let Some(inbox) = started {
            // The old inbox's loop stops once the last command still using it is done.
            *self.inbox.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(inbox);
        }
        self.switches
            .enabled
            .store(new.notifications, Ordering::Relaxed);
        self.switches
            .do_not_disturb
            .store(new.do_not_disturb, Ordering::Relaxed);
        *current = new.clone();
        drop(current);
        self.changed();
        Ok(new)
    }

    /// Flips do-not-disturb (the tray's switch).
    pub fn set_do_not_disturb(&self, on: bool) -> Result<Settings, IpcError> {
        let settings = Settings {
            do_not_disturb: on,
            ..self.settings()
        };
        self.save_settings(settings)
    }

    /// The window's answer. `version`: the `RequestView::version` the operator answered
    /// (see [`Inbox::answer`]).
    pub fn answer(
        &self,
        id: &str,
        answers: &Map<String, Value>,
        version: &str,
    ) -> Result<SubmitResult, IpcError> {
        self.inbox().answer(id, answers, version, Surface::Window)
    }

    /// The window's decline.
    pub fn decline(&self, id: &str, reason: &str, version: &str) -> Result<SubmitResult, IpcError> {
        self.inbox().decline(id, reason, version, Surface::Window)
    }

    /// The window's answer to a group of alike requests (see [`Inbox::answer_alike`]).
    pub fn answer_alike(
        &self,
        members: &[inbox_app::AlikeTarget],
        answers: &Map<String, Value>,
    ) -> Result<Vec<inbox_app::AlikeAnswerView>, IpcError> {
        self.inbox().answer_alike(members, answers, Surface::Window)
    }

    /// Opens a web link from a request in the system browser, through `open`.
    pub fn open_link(
        &self,
        url: &str,
        open: impl FnOnce(&str) -> Result<(), String>,
    ) -> Result<(), IpcError> {
        if !inbox_app::links::is_web_link(url) {
            return Err(IpcError::bad_input(format!(
                "only http and https links open in the browser, not \"{url}\""
            )));
        }
        open(url).map_err(|e| IpcError::new(ErrorCode::Storage, format!("cannot open {url}: {e}")))
    }

    /// What a press in a notification does: open the window on the request, or write the
    /// answer the button stands for. A failure is told to the window, never dropped.
    pub fn handle_choice(&self, chosen: Chosen) {
        match chosen {
            Chosen::Open(id) => {
                (self.hooks.show_window)();
                (self.hooks.emit)(UiEvent::Focus { id });
            }
            Chosen::Answer {
                id,
                answers,
                version,
            } => match self
                .inbox()
                .answer(&id, &answers, &version, Surface::Bubble)
            {
                Ok(SubmitResult::Settled { .. }) => {}
                // The engine's `Unwritten` event has told the window already.
                Ok(SubmitResult::Kept { .. }) => {}
                // One approval of several: recorded; the window's list shows the progress.
                Ok(SubmitResult::Approved { .. }) => self.changed(),
                Ok(SubmitResult::AlreadySettled { outcome }) => (self.hooks.emit)(UiEvent::Error {
                    message: format!(
                        "your answer from the notification was not written: \"{id}\" was already {} by {}",
                        outcome.status, outcome.answered_by
                    ),
                }),
                Err(error) => (self.hooks.emit)(UiEvent::Error {
                    message: format!(
                        "your answer from the notification to \"{id}\" was not written: {}",
                        error.message
                    ),
                }),
            },
        }
    }

    /// Tells the window (and the tray, through the shell) that the lists changed.
    fn changed(&self) {
        if let Ok(pending) = self.inbox().pending_count() {
            (self.hooks.emit)(UiEvent::refetch(pending));
        }
    }
}

/// Opens the inbox on the settings' spool, with their trust, and starts its loop, with
/// notifications whose buttons answer through the desk that `this` will hold.
fn start_inbox(
    config: &DeskConfig,
    switches: &Arc<NotifySwitches>,
    hooks: &ShellHooks,
    settings: &Settings,
    this: &Arc<OnceLock<Weak<Desk>>>,
) -> Result<Inbox, IpcError> {
    let spool = Path::new(&settings.spool_dir);
    let db = config.db_for(spool);
    let this = Arc::clone(this);
    let notifier = ActionNotifier::start(
        config.app_name,
        Arc::clone(switches),
        Arc::new(move |chosen| {
            if let Some(desk) = this.get().and_then(Weak::upgrade) {
                desk.handle_choice(chosen);
            }
        }),
    );
    let notifier = Fanout(vec![
        Box::new(notifier),
        Box::new(hooks.also_notify.clone()),
    ]);
    Inbox::start(
        spool,
        &db,
        settings.trust(),
        &config.policy_path,
        Box::new(notifier),
        Arc::clone(&hooks.emit),
    )
}
