//! Ask the operator from Rust: place a request in an Answer Inbox spool and wait for its
//! outcome, blocking or async, with a timeout and cancellation.
//!
//! The spool protocol is files (docs/PROTOCOL.md): a request goes into `questions/<id>.json`,
//! the inbox writes exactly one outcome into `answers/<id>.json`, and the asker withdraws a
//! question with a tombstone, `cancel/<id>`. This crate is the asker's side of it, the one
//! `answer-inbox ask` and `answer-inbox mcp` are built on:
//!
//! - [`Asker`]: a spool, opened by path ([`Asker::open`]) or from `$ANSWER_INBOX_DIR` and the
//!   default ([`Asker::from_env`]).
//! - [`Asker::ask`] / [`Asker::ask_async`]: validate, place, wait; [`Reply`] says how it
//!   ended: [settled](Reply::Settled) (the [`Outcome`]: answered, defaulted, declined,
//!   expired or rejected), [withdrawn](Reply::CancelledByAsker), or
//!   [timed out](Reply::TimedOut) (the question stays pending).
//! - [`AskOptions`]: a timeout, a [`CancelToken`] that withdraws the question, and
//!   [`require_person`](AskOptions::require_person): a policy's defaults are not an answer
//!   ([`AskError::SettledByPolicy`]).
//! - [`prepare`], [`Asker::place`], [`Asker::wait`], [`Asker::withdraw`]: the steps one by
//!   one, for callers that do something between placing and waiting.
//!
//! An invalid request is never placed: it is refused with every problem found
//! ([`AskError::Invalid`]).
//!
//! # Example
//!
//! Here a thread stands in for the operator and writes the outcome itself, as an inbox
//! would: bound to the request file placed (its SHA-256) and attributed to the account that
//! writes it. In real use an inbox (`answer-inbox watch`, the desktop app, `answer-inbox
//! answer`) does.
//!
//! ```
//! use std::time::Duration;
//!
//! use inbox_client::{AskOptions, Asker, Outcome, OutcomeStatus, Reply};
//! use inbox_spool::Area;
//!
//! let dir = tempfile::tempdir()?;
//! let asker = Asker::open(dir.path().join("spool"))?;
//!
//! let operator = {
//!     let spool = asker.spool().clone();
//!     std::thread::spawn(move || {
//!         while !spool.exists(Area::Questions, "deploy-42") {
//!             std::thread::sleep(Duration::from_millis(10));
//!         }
//!         let placed = spool.read(Area::Questions, "deploy-42").unwrap();
//!         let mut outcome = Outcome::new(
//!             "deploy-42",
//!             OutcomeStatus::Answered,
//!             format!("operator:{}", inbox_spool::current_account()),
//!             "example/1",
//!             chrono::Utc::now(),
//!         );
//!         outcome.request_sha256 = Some(inbox_protocol::sha256_hex(&placed));
//!         outcome.answers.insert("go".into(), true.into());
//!         spool.write_outcome("deploy-42", &outcome.to_file_bytes()).unwrap();
//!     })
//! };
//!
//! let request = r#"{"inbox": 1, "id": "deploy-42", "title": "Deploy billing 2.14",
//!   "questions": [{"id": "go", "question": "Deploy to production now?", "type": "confirm"}]}"#;
//! let options = AskOptions::default().with_timeout(Duration::from_secs(60));
//! match asker.ask(request, &options)? {
//!     Reply::Settled(outcome) if outcome.status == OutcomeStatus::Answered => {
//!         assert_eq!(outcome.answers["go"], true);
//!         assert!(outcome.answered_by.starts_with("operator:"));
//!     }
//!     other => panic!("not answered: {other:?}"),
//! }
//! operator.join().unwrap();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod cancel;
mod request;
mod wait;

use std::path::{Path, PathBuf};
use std::time::Duration;

use inbox_spool::{locations, Area, SpoolError};

pub use cancel::CancelToken;
pub use inbox_protocol::{DecidedBy, Outcome, OutcomeStatus, Problem, Surface};
pub use inbox_spool::Spool;
pub use request::{prepare, Prepared, RequestBody};
pub use wait::POLL;

/// The environment variable naming the spool directory, as for every `answer-inbox` command.
pub const SPOOL_ENV: &str = "ANSWER_INBOX_DIR";

/// Why a question could not be asked, or its outcome not be learnt.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// The request is invalid and was not placed; every problem found, each with a JSON
    /// pointer into the request.
    #[error("the request is invalid and was not placed:{}", problem_lines(.0))]
    Invalid(Vec<Problem>),
    /// The id given to [`prepare`] / [`Asker::place`] cannot name a request.
    #[error(
        "\"{0}\" is not a valid request id: use letters, digits, '.', '_' or '-', starting \
         with a letter or digit, at most 128 characters"
    )]
    InvalidId(String),
    /// The request's body has an `id` and a different one was given.
    #[error(
        "the request's body has id \"{body}\" but \"{given}\" was given; give one of them, or \
         make them equal"
    )]
    IdMismatch { body: String, given: String },
    /// No spool was named and there is no default (no data directory: is HOME set?).
    #[error("cannot find the user's data directory (is HOME set?); set {SPOOL_ENV}")]
    NoSpool,
    /// The spool directory cannot be opened or created.
    #[error("{0}")]
    Spool(String),
    /// Requests are immutable: the id is taken.
    #[error(
        "a request with id \"{id}\" is already in the spool {}; use a new id for a new question",
        spool.display()
    )]
    Exists { id: String, spool: PathBuf },
    /// Writing the request file failed.
    #[error("cannot place request \"{id}\": {error}")]
    Place { id: String, error: SpoolError },
    /// Writing the tombstone failed; the request is still pending.
    #[error("cannot withdraw request \"{id}\": {error}")]
    Withdraw { id: String, error: SpoolError },
    /// The outcome file exists but cannot be read, is not an outcome of this request, or
    /// says a person answered whose account does not own it (docs/PROTOCOL.md, "Trusting an
    /// outcome"). Never an answer.
    #[error("the outcome file of \"{id}\" cannot be used: {reason}")]
    BadOutcome { id: String, reason: String },
    /// [`AskOptions::require_person`] was set and a policy (autonomous mode, expiry), not a
    /// person, settled the request with its defaults. The outcome is here to inspect; its
    /// answers are the defaults, not anyone's decision.
    #[error(
        "request \"{}\" was {} by {}, not by a person, and a person's answer was required",
        .outcome.id, .outcome.status, .outcome.answered_by
    )]
    SettledByPolicy { outcome: Box<Outcome> },
    /// The Tokio runtime shut down while an async call was waiting.
    #[error("the async runtime shut down while waiting")]
    RuntimeShutDown,
}

fn problem_lines(problems: &[Problem]) -> String {
    problems.iter().map(|p| format!("\n  {p}")).collect()
}

/// How a question ended, as far as the asker is concerned.
// Returned once per call, never stored in bulk: boxing the outcome would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The request has its outcome. Look at [`Outcome::status`]: `answered` and `defaulted`
    /// carry answers; `declined` (with a reason), `expired` and `rejected` do not.
    Settled(Outcome),
    /// The request was withdrawn with a tombstone: by this call's [`CancelToken`], or by
    /// anyone else (`answer-inbox cancel`). There is no outcome.
    CancelledByAsker { id: String, reason: Option<String> },
    /// The timeout passed first. The request stays pending: wait again, or withdraw it.
    TimedOut { id: String },
}

impl Reply {
    /// The request's id.
    pub fn id(&self) -> &str {
        match self {
            Reply::Settled(outcome) => &outcome.id,
            Reply::CancelledByAsker { id, .. } | Reply::TimedOut { id } => id,
        }
    }

    /// The outcome, when settled.
    pub fn outcome(&self) -> Option<&Outcome> {
        match self {
            Reply::Settled(outcome) => Some(outcome),
            _ => None,
        }
    }
}

/// How long to wait, and how to stop waiting.
#[derive(Debug, Clone, Default)]
pub struct AskOptions {
    /// Give up after this long with [`Reply::TimedOut`]; the request stays pending. `None`
    /// waits until the request is settled or withdrawn, however long that takes.
    pub timeout: Option<Duration>,
    /// Cancelling this token withdraws the request (see [`CancelToken`]). A token already
    /// cancelled when [`Asker::ask`] is called means nothing is placed at all.
    pub cancel: Option<CancelToken>,
    /// Only a person's decision counts: an outcome a policy settled with defaults
    /// (`defaulted` by autonomous mode or expiry) is returned as
    /// [`AskError::SettledByPolicy`] instead of [`Reply::Settled`]. An `expired` or
    /// `rejected` outcome carries no answers and is returned as usual.
    pub require_person: bool,
}

impl AskOptions {
    pub fn with_timeout(mut self, timeout: Duration) -> AskOptions {
        self.timeout = Some(timeout);
        self
    }

    pub fn with_cancel(mut self, token: CancelToken) -> AskOptions {
        self.cancel = Some(token);
        self
    }

    /// See [`AskOptions::require_person`].
    pub fn with_require_person(mut self) -> AskOptions {
        self.require_person = true;
        self
    }

    /// The reply as this caller wants it: with [`AskOptions::require_person`], answers a
    /// policy gave are refused.
    fn judge(&self, reply: Reply) -> Result<Reply, AskError> {
        match reply {
            Reply::Settled(outcome) if self.require_person && settled_by_policy(&outcome) => {
                Err(AskError::SettledByPolicy {
                    outcome: Box::new(outcome),
                })
            }
            reply => Ok(reply),
        }
    }

    fn cancelled_before(&self, id: &str) -> Option<Reply> {
        let reason = self.cancel.as_ref()?.reason()?;
        Some(Reply::CancelledByAsker {
            id: id.to_owned(),
            reason: Some(reason).filter(|r| !r.is_empty()),
        })
    }
}

/// Whether a policy, not a person, gave the outcome's answers. An outcome without
/// `decided_by` (from an older inbox) is judged by its `answered_by`.
pub fn settled_by_policy(outcome: &Outcome) -> bool {
    matches!(
        outcome.status,
        OutcomeStatus::Answered | OutcomeStatus::Defaulted
    ) && outcome.decider() != Some(DecidedBy::Person)
}

/// The spool directory an asker uses when given none: `$ANSWER_INBOX_DIR` when set and not
/// empty, else `<XDG data dir>/answer-inbox/spool`. Unlike the command line, it does not read
/// the app's settings file (its rules live in the desktop crate, which an asker does not
/// link): where Settings moved the spool, set `ANSWER_INBOX_DIR` or open the spool by path.
pub fn default_spool_dir() -> Result<PathBuf, AskError> {
    match std::env::var_os(SPOOL_ENV).filter(|dir| !dir.is_empty()) {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => locations::default_spool().ok_or(AskError::NoSpool),
    }
}

/// The asker's handle on a spool. Cheap to clone; every method may be called from many
/// threads or tasks at once, each question with its own id.
#[derive(Debug, Clone)]
pub struct Asker {
    spool: Spool,
}

impl Asker {
    /// Opens the spool at `dir`, creating its directories if needed.
    pub fn open(dir: impl AsRef<Path>) -> Result<Asker, AskError> {
        locations::open_spool(dir.as_ref())
            .map(Asker::from_spool)
            .map_err(|error| AskError::Spool(error.0))
    }

    /// Opens the spool [`default_spool_dir`] names.
    pub fn from_env() -> Result<Asker, AskError> {
        Asker::open(default_spool_dir()?)
    }

    pub fn from_spool(spool: Spool) -> Asker {
        Asker { spool }
    }

    pub fn spool(&self) -> &Spool {
        &self.spool
    }

    /// Validates and places a request, without waiting; returns its id (see [`prepare`] for
    /// where the id comes from).
    pub fn place(
        &self,
        request: impl Into<RequestBody>,
        id: Option<&str>,
    ) -> Result<String, AskError> {
        let prepared = prepare(request, id)?;
        self.place_prepared(&prepared)?;
        Ok(prepared.id().to_owned())
    }

    /// Places a prepared request; returns the path of its file.
    pub fn place_prepared(&self, prepared: &Prepared) -> Result<PathBuf, AskError> {
        self.spool
            .place_request(prepared.id(), prepared.bytes())
            .map_err(|error| match error {
                SpoolError::RequestExists(id) => AskError::Exists {
                    id,
                    spool: self.spool.root().to_owned(),
                },
                error => AskError::Place {
                    id: prepared.id().to_owned(),
                    error,
                },
            })
    }

    /// Validates and places a request, then blocks until it is settled, withdrawn, or the
    /// timeout passes.
    pub fn ask(
        &self,
        request: impl Into<RequestBody>,
        options: &AskOptions,
    ) -> Result<Reply, AskError> {
        self.ask_prepared(&prepare(request, None)?, options)
    }

    /// [`Asker::ask`] for a request already [prepared](prepare).
    pub fn ask_prepared(
        &self,
        prepared: &Prepared,
        options: &AskOptions,
    ) -> Result<Reply, AskError> {
        if let Some(reply) = options.cancelled_before(prepared.id()) {
            return Ok(reply);
        }
        self.place_prepared(prepared)?;
        // Checked against the bytes placed, not whatever questions/ holds later.
        let expected = wait::Expected::placed(prepared.bytes(), prepared.id());
        options.judge(wait::wait_blocking(
            &self.spool,
            prepared.id(),
            options,
            Some(expected),
        )?)
    }

    /// [`Asker::ask`] as a future, for Tokio (it must run inside a Tokio runtime with the
    /// time driver enabled). File work runs on the blocking pool, so waiting holds no worker
    /// thread; cancelling the token wakes it at once. Dropping the future stops waiting but
    /// leaves the request pending; cancel the token to withdraw it.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use inbox_client::{AskOptions, Asker, CancelToken, Reply};
    /// use inbox_spool::Area;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let asker = Asker::open(dir.path())?;
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    ///
    /// let token = CancelToken::new();
    /// let options = AskOptions::default().with_cancel(token.clone());
    /// let request = r#"[{"question": "Which region?", "type": "single_choice",
    ///     "choices": [{"id": "eu", "label": "Europe"}, {"id": "us", "label": "US"}]}]"#;
    /// let reply = runtime.block_on(async {
    ///     // Nobody answers; the asker gives up after 50 ms.
    ///     tokio::spawn(async move {
    ///         tokio::time::sleep(Duration::from_millis(50)).await;
    ///         token.cancel("the run was aborted");
    ///     });
    ///     asker.ask_async(request, &options).await
    /// })?;
    /// let Reply::CancelledByAsker { id, reason } = reply else { panic!("{reply:?}") };
    /// assert_eq!(reason.as_deref(), Some("the run was aborted"));
    /// assert!(asker.spool().exists(Area::Cancel, &id), "the tombstone is placed");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub async fn ask_async(
        &self,
        request: impl Into<RequestBody>,
        options: &AskOptions,
    ) -> Result<Reply, AskError> {
        let prepared = prepare(request, None)?;
        self.ask_prepared_async(&prepared, options).await
    }

    /// [`Asker::ask_async`] for a request already [prepared](prepare).
    pub async fn ask_prepared_async(
        &self,
        prepared: &Prepared,
        options: &AskOptions,
    ) -> Result<Reply, AskError> {
        if let Some(reply) = options.cancelled_before(prepared.id()) {
            return Ok(reply);
        }
        let (asker, placing) = (self.clone(), prepared.clone());
        wait::off_runtime(move || asker.place_prepared(&placing)).await??;
        let expected = wait::Expected::placed(prepared.bytes(), prepared.id());
        options.judge(wait::wait_async(&self.spool, prepared.id(), options, Some(expected)).await?)
    }

    /// Blocks until the placed request `id` is settled, withdrawn, or the timeout passes.
    /// Cancelling the options' token withdraws it.
    pub fn wait(&self, id: &str, options: &AskOptions) -> Result<Reply, AskError> {
        check_id(id)?;
        options.judge(wait::wait_blocking(&self.spool, id, options, None)?)
    }

    /// [`Asker::wait`] as a future (see [`Asker::ask_async`]).
    pub async fn wait_async(&self, id: &str, options: &AskOptions) -> Result<Reply, AskError> {
        check_id(id)?;
        options.judge(wait::wait_async(&self.spool, id, options, None).await?)
    }

    /// Withdraws the request `id` by placing its tombstone with `reason`, unless it already
    /// has an outcome. Returns what stands: [`Reply::Settled`] when an outcome was written
    /// first (it always wins), else [`Reply::CancelledByAsker`].
    pub fn withdraw(&self, id: &str, reason: &str) -> Result<Reply, AskError> {
        check_id(id)?;
        wait::withdraw(
            &self.spool,
            id,
            reason,
            &wait::Expected::of(&self.spool, id),
        )
    }

    /// Where the outcome of `id` appears once settled.
    pub fn outcome_path(&self, id: &str) -> Result<PathBuf, AskError> {
        check_id(id)?;
        Ok(self.spool.path(Area::Answers, id))
    }
}

/// Ids build paths: refuse any that is not one.
fn check_id(id: &str) -> Result<(), AskError> {
    if inbox_protocol::is_valid_id(id) {
        Ok(())
    } else {
        Err(AskError::InvalidId(id.to_owned()))
    }
}
