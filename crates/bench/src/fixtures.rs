//! Request and outcome bodies, and how a benchmark drops them into a spool the way an asker
//! does: write the whole file somewhere unwatched, then `rename` it into place.

use std::fs;
use std::path::{Path, PathBuf};

use chrono::Utc;
use inbox_protocol::{parse_request, sha256_hex, AnswerSet, Outcome, OutcomeStatus};
use serde_json::Value;

/// A distinct, valid request id.
pub fn id(prefix: &str, n: usize) -> String {
    format!("{prefix}-{n:06}")
}

/// A small interactive request in the envelope dialect (about 450 bytes, like the samples in
/// the design examples): one choice question and one confirm, no deadline.
pub fn interactive_request(id: &str) -> Vec<u8> {
    request_from(
        id,
        &format!("Deploy build {id}"),
        "bench",
        &format!("run-{id}"),
    )
}

/// Like [`interactive_request`], with a title and source that vary with `n`, so that a
/// search in the desktop app's list narrows 10,000 rows to many different counts: five
/// verbs (a fifth each), eight objects (an eighth each, independent of the verb), three
/// source apps (4/7, 2/7, 1/7) and runs of 50 requests each.
pub fn varied_request(id: &str, n: usize) -> Vec<u8> {
    const VERBS: [&str; 5] = ["Deploy", "Approve", "Migrate", "Release", "Rotate"];
    const OBJECTS: [&str; 8] = [
        "the orders table",
        "the payments service",
        "the search index",
        "the billing cron",
        "the auth keys",
        "the build cache",
        "the mobile app",
        "the docs site",
    ];
    const APPS: [&str; 7] = [
        "planu",
        "planu",
        "planu",
        "planu",
        "ops-pipeline",
        "ops-pipeline",
        "crush",
    ];
    let title = format!("{} {}", VERBS[n % 5], OBJECTS[(n / 5) % 8]);
    request_from(id, &title, APPS[n % 7], &format!("run-{}", n / 50))
}

/// Like [`interactive_request`], titled `Visible probe <id>` and `critical`, so that it
/// sorts to the top of the desktop app's Pending list (most urgent first), in view whatever
/// else is pending.
pub fn visible_probe(id: &str) -> Vec<u8> {
    String::from_utf8_lossy(&request_from(
        id,
        &probe_title(id),
        "bench",
        &format!("run-{id}"),
    ))
    .replace(r#""priority": "normal""#, r#""priority": "critical""#)
    .into_bytes()
}

/// The title of [`visible_probe`].
pub fn probe_title(id: &str) -> String {
    format!("Visible probe {id}")
}

fn request_from(id: &str, title: &str, app: &str, run: &str) -> Vec<u8> {
    format!(
        r#"{{
  "inbox": 1,
  "id": "{id}",
  "title": "{title}",
  "source": {{"app": "{app}", "run": "{run}", "tool": "deploy"}},
  "priority": "normal",
  "questions": [
    {{"id": "target", "question": "Which environment should this deploy to?", "type": "choice",
      "options": ["staging", "production"], "default": "staging"}},
    {{"id": "migrate", "question": "Run the database migrations first?", "type": "confirm"}}
  ]
}}
"#
    )
    .into_bytes()
}

/// An autonomous request whose every question has a default: the engine answers it at once.
pub fn autonomous_request(id: &str) -> Vec<u8> {
    format!(
        r#"{{
  "inbox": 1,
  "id": "{id}",
  "title": "Nightly cleanup {id}",
  "source": {{"app": "bench", "run": "run-{id}", "tool": "cleanup"}},
  "mode": "autonomous",
  "timeout_seconds": 900,
  "questions": [
    {{"id": "prune", "question": "Prune merged branches?", "type": "confirm", "default": true}},
    {{"id": "retention", "question": "Keep build artifacts for how long?", "type": "choice",
      "options": ["7 days", "30 days", "90 days"], "default": "30 days", "required": false}}
  ]
}}
"#
    )
    .into_bytes()
}

/// An operator's outcome for [`interactive_request`]`(id)`, as `answer-inbox answer` would
/// write it: the answers checked, the version of the request they answer, and named for the
/// account that writes the file, as the inbox and the askers require of a person's answer
/// (an outcome that falls short of any of these is refused and blocks its request).
pub fn answered_outcome(id: &str) -> Vec<u8> {
    let by = format!("operator:{}", inbox_spool::current_account());
    let answers = AnswerSet {
        answers: [
            ("target".to_owned(), Value::from("staging")),
            ("migrate".to_owned(), Value::from(false)),
        ]
        .into(),
        custom: Vec::new(),
        defaulted: Vec::new(),
    };
    Outcome::new(
        id,
        OutcomeStatus::Answered,
        &by,
        "bench/0000000000",
        Utc::now(),
    )
    .with_answers(answers)
    .with_request_sha256(Some(sha256_hex(&interactive_request(id))))
    .to_file_bytes()
}

/// Fails early if a fixture would not be ingested as a valid request.
pub fn check_fixtures() -> anyhow::Result<()> {
    for (name, body) in [
        ("interactive", interactive_request("check-1")),
        ("varied", varied_request("check-1", 123)),
        ("autonomous", autonomous_request("check-1")),
        ("visible probe", visible_probe("check-1")),
    ] {
        if let Err(errors) = parse_request(&body, Some("check-1")) {
            anyhow::bail!("the {name} fixture is not a valid request: {errors:?}");
        }
    }
    let request = parse_request(&interactive_request("check-1"), Some("check-1"))
        .map_err(|errors| anyhow::anyhow!("the interactive fixture: {errors:?}"))?;
    let outcome: Outcome = serde_json::from_slice(&answered_outcome("check-1"))?;
    if let Err(problems) = inbox_protocol::verify_outcome_for(&outcome, &request) {
        anyhow::bail!("the answered outcome fixture would be refused: {problems:?}");
    }
    Ok(())
}

/// A file written in an unwatched directory, ready to be renamed into place.
pub struct Staged {
    pub from: PathBuf,
    pub to: PathBuf,
}

impl Staged {
    /// Writes `bytes` to `tmp_dir/<file name>.staged`, to be renamed to `target`.
    pub fn write(tmp_dir: &Path, target: PathBuf, bytes: &[u8]) -> anyhow::Result<Staged> {
        let name = target
            .file_name()
            .ok_or_else(|| anyhow::anyhow!("no file name in {}", target.display()))?;
        let mut from = tmp_dir.join(name);
        from.as_mut_os_string().push(".staged");
        fs::write(&from, bytes)?;
        Ok(Staged { from, to: target })
    }

    /// The moment of placement: one `rename` into the watched directory.
    pub fn place(&self) -> anyhow::Result<()> {
        fs::rename(&self.from, &self.to)?;
        Ok(())
    }
}
