//! Forged and broken outcome files, through the real binary. The corpus is
//! tests/data/hostile/outcomes (its README.md says how it is laid out); its manifest,
//! verdicts.json, gives each file its verdict and why. Anyone who can write `answers/` can
//! drop such a file; none of them may count as an answer. The askers read the same corpus
//! (crates/client/tests/corpus.rs, clients/python/tests/test_corpus.py): a check made where
//! outcomes are written is made where they are read.
//!
//! Each case is one request (`requests/<name>.json`, `confirm` unless the case names another)
//! whose id is the file's stem, placed and ingested, then the case's outcome written into
//! `answers/` as a forger would, with `{{id}}`, `{{sha256}}` (the request file's),
//! `{{operator}}` (this account's `operator:<name>`) and `{{writer}}` (`operator:<the writer's
//! account>`) filled in, and given to the case's `writer`: this account, or another member of
//! the spool's team, or an account outside it (the inbox runs in team mode for that; the
//! accounts are those of crates/client/tests/accounts.rs). Then, for this inbox's database
//! and for a fresh one (another inbox on the same spool):
//! - `answered`, `declined`, `defaulted`, `expired`: the request is settled so, and `answer`
//!   says it is settled;
//! - `blocked`: the request stays pending and blocked, its reason names the problem, `answer`
//!   on it exits 6 without touching the file, and nothing shown carries a hidden character
//!   raw.
//!
//! The inbox knows everything a check needs, so `needs` (what an asker must know to refuse a
//! case) does not change its verdict here; only that it is one of the known words.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use serde_json::Value;

use crate::team::accounts;
use crate::util::{self, Inbox};

#[derive(Debug)]
struct Verdict {
    verdict: String,
    why: String,
    /// For `blocked`: words the block's reason must contain.
    reason: Option<String>,
    /// For `blocked`: what a reader must know to refuse it (`outcome` when not given).
    needs: Option<String>,
    /// The request the case answers: a file in `requests/`, without `.json`.
    request: String,
    /// Who owns the outcome file: `asker`, `member`, `second-member` or `outsider` (see
    /// the README).
    writer: String,
    /// The approval files placed before the outcome: (`by`, `owner`, template in
    /// `approvals/` without `.json`), roles as `writer`.
    approvals: Vec<(String, String, String)>,
}

/// Every verdict a case may have: the statuses a genuine outcome settles a request with, or
/// `blocked`.
const VERDICTS: [&str; 5] = ["answered", "declined", "defaulted", "expired", "blocked"];
/// What a reader may need to know to refuse a case (see the corpus' README.md).
const NEEDS: [&str; 6] = [
    "outcome",
    "questions",
    "dialect",
    "validity",
    "owner",
    "approvals",
];
/// Who may own a case's outcome file (and its approval files).
const WRITERS: [&str; 4] = ["asker", "member", "second-member", "outsider"];
/// The request of a case that names none.
const DEFAULT_REQUEST: &str = "confirm";

fn corpus_dir() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/hostile/outcomes")
}

/// The request file `name` for request `id`, as placed.
fn request(name: &str, id: &str) -> String {
    let path = corpus_dir().join("requests").join(format!("{name}.json"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
        .replace("{{id}}", id)
}

fn cases() -> BTreeMap<String, Verdict> {
    let manifest = std::fs::read(corpus_dir().join("verdicts.json")).unwrap();
    let manifest: BTreeMap<String, Value> = serde_json::from_slice(&manifest).unwrap();
    let text = |entry: &Value, key: &str| entry[key].as_str().map(str::to_owned);
    let cases: BTreeMap<String, Verdict> = manifest
        .into_iter()
        .map(|(name, entry)| {
            let verdict = Verdict {
                verdict: text(&entry, "verdict").unwrap_or_default(),
                why: text(&entry, "why").unwrap_or_default(),
                reason: text(&entry, "reason"),
                needs: text(&entry, "needs"),
                request: text(&entry, "request").unwrap_or_else(|| DEFAULT_REQUEST.into()),
                writer: text(&entry, "writer").unwrap_or_else(|| "asker".into()),
                approvals: entry["approvals"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|a| {
                        let by = text(a, "by").unwrap_or_default();
                        let owner = text(a, "owner").unwrap_or_else(|| by.clone());
                        (by, owner, text(a, "file").unwrap_or_default())
                    })
                    .collect(),
            };
            (name, verdict)
        })
        .collect();
    // Every file has a verdict and every verdict a file: nothing in the corpus goes untested.
    for entry in std::fs::read_dir(corpus_dir()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(
            ["verdicts.json", "README.md", "requests", "approvals"].contains(&name.as_str())
                || cases.contains_key(&name),
            "{name} has no verdict in verdicts.json"
        );
    }
    for (name, case) in &cases {
        assert!(
            corpus_dir().join(name).exists(),
            "{name} is listed but missing"
        );
        assert!(!case.why.trim().is_empty(), "{name} does not say why");
        assert!(
            VERDICTS.contains(&case.verdict.as_str()),
            "{name}: unknown verdict {}",
            case.verdict
        );
        let blocked = case.verdict == "blocked";
        assert_eq!(
            case.reason.is_some(),
            blocked,
            "{name}: a reason goes with blocked, and only with it"
        );
        if let Some(needs) = &case.needs {
            assert!(blocked, "{name}: needs goes with blocked only");
            assert!(
                NEEDS.contains(&needs.as_str()),
                "{name}: unknown needs {needs}"
            );
        }
        assert!(
            WRITERS.contains(&case.writer.as_str()),
            "{name}: unknown writer {}",
            case.writer
        );
        for (by, owner, file) in &case.approvals {
            assert!(
                WRITERS.contains(&by.as_str()) && WRITERS.contains(&owner.as_str()),
                "{name}: unknown approver {by} or owner {owner}"
            );
            assert!(
                corpus_dir()
                    .join("approvals")
                    .join(format!("{file}.json"))
                    .is_file(),
                "{name}: no approval template {file}"
            );
        }
        assert!(
            corpus_dir()
                .join("requests")
                .join(format!("{}.json", case.request))
                .is_file(),
            "{name}: no request {}",
            case.request
        );
    }
    // And every request is asked by some case.
    let asked: BTreeSet<&str> = cases.values().map(|case| case.request.as_str()).collect();
    for entry in std::fs::read_dir(corpus_dir().join("requests")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let stem = name.strip_suffix(".json").unwrap_or(&name);
        assert!(asked.contains(stem), "requests/{name} is asked by no case");
    }
    cases
}

/// The writer's uid and account name, if not this account's; `Err` when there are no other
/// accounts here (for the outcome's writer or the owner of any of its approval files).
fn writer(case: &Verdict) -> Result<Option<(u32, &'static str)>, String> {
    for (by, owner, _) in &case.approvals {
        role(by)?;
        role(owner)?;
    }
    role(&case.writer)
}

/// A role's uid and account name, if not this account's.
fn role(name: &str) -> Result<Option<(u32, &'static str)>, String> {
    Ok(match name {
        "member" => Some((accounts::crew()?.members[0], accounts::MEMBERS[0])),
        "second-member" => Some((accounts::crew()?.members[1], accounts::MEMBERS[1])),
        "outsider" => Some((accounts::crew()?.outsider, accounts::OUTSIDER)),
        _ => None,
    })
}

/// `operator:<the account of a role>`.
fn operator_of(name: &str) -> String {
    match role(name).ok().flatten() {
        Some((_, account)) => format!("operator:{account}"),
        None => util::operator(),
    }
}

/// A template of a case with its names filled in (the corpus' README lists them).
fn fill(template: &str, id: &str, case: &Verdict) -> String {
    let sha = inbox_protocol::sha256_hex(request(&case.request, id).as_bytes());
    template
        .replace("{{id}}", id)
        .replace("{{sha256}}", &sha)
        .replace("{{operator}}", &util::operator())
        .replace("{{writer}}", &operator_of(&case.writer))
        .replace("{{member}}", &operator_of("member"))
        .replace("{{second-member}}", &operator_of("second-member"))
}

/// Places a file at `path` as a forger would, 0640, and gives it to `owner` (a role).
fn forge(path: &std::path::Path, bytes: &str, owner: &str) {
    std::fs::write(path, bytes).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o640)).unwrap();
    if let Some((uid, _)) = role(owner).unwrap() {
        std::os::unix::fs::chown(path, Some(uid), None).unwrap();
    }
}

/// Runs the inbox, in team mode when it has a team.
fn run(inbox: &Inbox, team: bool, args: &[&str]) -> std::process::Output {
    let mut cmd = inbox.cmd(args);
    if team {
        cmd.env("ANSWER_INBOX_TEAM", accounts::GROUP);
    }
    cmd.output().unwrap()
}

/// `list --all --json` rows by id.
fn rows(inbox: &Inbox, team: bool, db: Option<&str>) -> BTreeMap<String, Value> {
    let mut args = vec!["list", "--all", "--json"];
    if let Some(db) = db {
        args.extend(["--db", db]);
    }
    let out = run(inbox, team, &args);
    assert_eq!(util::code(&out), 0, "{}", util::stderr(&out));
    let rows: Vec<Value> = serde_json::from_str(&util::stdout(&out)).unwrap();
    rows.into_iter()
        .map(|row| (row["id"].as_str().unwrap().to_owned(), row))
        .collect()
}

fn has_hidden(text: &str) -> bool {
    text.chars()
        .any(|c| c != '\n' && c != '\t' && inbox_protocol::text::is_hidden(c))
}

#[test]
fn no_forged_outcome_counts_as_an_answer() {
    let inbox = Inbox::new();
    // A team spool, so that the files of another member are read and an outsider's are not.
    let team = match accounts::crew() {
        Ok(crew) => {
            let root = inbox.spool();
            std::fs::create_dir(&root).unwrap();
            std::os::unix::fs::chown(&root, None, Some(crew.gid)).unwrap();
            std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o2770)).unwrap();
            true
        }
        Err(why) => {
            eprintln!("SKIPPED: the cases written by other accounts ({why})");
            false
        }
    };
    let cases: BTreeMap<String, Verdict> = cases()
        .into_iter()
        .filter(|(_, case)| writer(case).is_ok())
        .collect();
    let ids: Vec<String> = cases
        .keys()
        .map(|name| name.trim_end_matches(".json").to_owned())
        .collect();
    for (case, id) in cases.values().zip(&ids) {
        inbox.place(id, &request(&case.request, id));
    }
    // Ingested before any outcome exists: the outcomes arrive as a forger's would, later.
    let pending = rows(&inbox, team, None);
    assert_eq!(pending.len(), ids.len());
    for row in pending.values() {
        assert_eq!(
            row["state"], "pending",
            "settled before any outcome was forged: {row}"
        );
    }
    for ((name, case), id) in cases.iter().zip(&ids) {
        // The approvals first, as their inboxes place them before the outcome, in
        // approvals/ as an inbox makes it (the spool's group and mode).
        for (by, owner, file) in &case.approvals {
            let dir = inbox.spool().join("approvals");
            if !dir.exists() {
                std::fs::create_dir(&dir).unwrap();
                let root = std::fs::metadata(inbox.spool()).unwrap();
                std::fs::set_permissions(&dir, root.permissions()).unwrap();
            }
            let template = corpus_dir().join("approvals").join(format!("{file}.json"));
            let template = std::fs::read_to_string(template).unwrap();
            let approver = operator_of(by);
            let account = approver.trim_start_matches("operator:");
            let bytes = fill(&template, id, case).replace("{{approver}}", &approver);
            forge(&dir.join(format!("{id}+{account}.json")), &bytes, owner);
        }
        let template = std::fs::read_to_string(corpus_dir().join(name)).unwrap();
        forge(
            &inbox.outcome_path(id),
            &fill(&template, id, case),
            &case.writer,
        );
    }

    let fresh = inbox.dir.path().join("fresh.sqlite3");
    for db in [None, Some(fresh.to_str().unwrap())] {
        let rows = rows(&inbox, team, db);
        for ((name, case), id) in cases.iter().zip(&ids) {
            let row = &rows[id];
            let state = row["state"].as_str().unwrap();
            let blocked = row["blocked"].as_str();
            match case.verdict.as_str() {
                "blocked" => {
                    assert_eq!(state, "pending", "{name} ({db:?}): {row}");
                    let reason = blocked.unwrap_or_else(|| panic!("{name} is not blocked: {row}"));
                    assert!(
                        reason.starts_with("an invalid outcome file blocks this request"),
                        "{name}: {reason}"
                    );
                    let words = case.reason.as_deref().unwrap();
                    assert!(reason.contains(words), "{name}: {reason:?} lacks {words:?}");
                    assert!(
                        !has_hidden(reason),
                        "{name}: a hidden character in {reason:?}"
                    );
                }
                settled => {
                    assert_eq!(state, settled, "{name} ({db:?}): {row}");
                    assert!(blocked.is_none(), "{name}: {row}");
                }
            }
        }
    }

    for ((name, case), id) in cases.iter().zip(&ids) {
        let before = std::fs::read(inbox.outcome_path(id)).unwrap();
        let out = run(&inbox, team, &["answer", id, "--set", "go=yes"]);
        let expected = if case.verdict == "blocked" { 6 } else { 3 };
        assert_eq!(util::code(&out), expected, "{name}: {}", util::stderr(&out));
        assert_eq!(
            std::fs::read(inbox.outcome_path(id)).unwrap(),
            before,
            "{name}"
        );
        let shown = run(&inbox, team, &["show", id]);
        let text = format!(
            "{}{}{}",
            util::stderr(&out),
            util::stdout(&shown),
            util::stderr(&shown)
        );
        assert!(
            !has_hidden(&text),
            "{name}: a raw hidden character reached the terminal"
        );
        if case.verdict == "blocked" {
            assert!(util::stdout(&shown).contains("blocked:"), "{name}");
        }
    }
}
