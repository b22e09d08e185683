//! Hostile and malformed requests, through the real binary. The corpus is tests/data/hostile;
//! its manifest, verdicts.json, gives each case its verdict and why. Cases git cannot hold
//! (symlinks out of the spool, a FIFO, a socket, a directory, a name that is not UTF-8) or
//! that are too big for it (10,000-deep nesting, files at and over the 1 MiB cap, a sparse
//! 4 GiB file) are made here at test time.
//!
//! All cases go into one spool at once, as a hostile asker would drop them, while
//! `answer-inbox watch` runs (the event path); then `list --json` scans the same database, and
//! a fresh one (the scan path). After each, every case must have its verdict:
//! - `accepted`: pending, no outcome, and its stored request equal to a fresh parse (nothing
//!   truncated); its markdown, rendered by the desktop app's view models, carries no script,
//!   no event handler and no link but http(s);
//! - `rejected`: an outcome with status `rejected` whose errors name the problem (each
//!   `[pointer, words]` of the manifest);
//! - `problem`: no outcome, not pending, and a spool problem recorded with the reason.
//!
//! A sentinel directory beside the spool is the target of the symlinks and of the traversal
//! ids; it is watched with inotify (opens and accesses included) for the whole run, and must
//! see no event at all. Every wait is bounded, so a hang fails the test.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use inbox_app::RequestView;
use inbox_engine::Store;
use inbox_harness::overflow::{inbox_command, run_with_timeout, Daemon};
use serde_json::Value;

use crate::util;

/// How long any one step may take (a wait for the daemon, one command).
const LIMIT: Duration = Duration::from_secs(20);
/// A valid request placed after every case: once the daemon reports it, it has handled every
/// file event before it (inotify keeps order; the loop handles hints in order).
const MARKER: &str = "zz-marker";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Accepted,
    Rejected,
    Problem,
}

#[derive(Debug)]
struct Case {
    name: String,
    verdict: Verdict,
    why: String,
    /// The name in questions/ (the key unless the manifest says `place_as`).
    place_as: OsString,
    /// How the test makes it, when it is not a file here.
    generated: Option<String>,
    /// For `rejected`: (pointer, words) pairs the outcome's errors must contain.
    errors: Vec<(String, String)>,
    /// For `problem`: words the recorded problem's reason must contain.
    reason: Option<String>,
    markdown: bool,
}

impl Case {
    /// The request id its file name gives, if it gives one.
    fn id(&self) -> Option<&str> {
        inbox_protocol::request_id_from_file_name(&self.place_as).ok()
    }
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/hostile")
}

fn load_cases() -> Vec<Case> {
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(corpus_dir().join("verdicts.json")).unwrap())
            .expect("verdicts.json is JSON");
    let cases = manifest["cases"].as_object().expect("a \"cases\" object");
    cases
        .iter()
        .map(|(name, case)| {
            let text = |key: &str| case[key].as_str().map(str::to_owned);
            let verdict = match text("verdict").as_deref() {
                Some("accepted") => Verdict::Accepted,
                Some("rejected") => Verdict::Rejected,
                Some("problem") => Verdict::Problem,
                other => panic!("{name}: unknown verdict {other:?}"),
            };
            let errors = case["errors"]
                .as_array()
                .map(|pairs| {
                    pairs
                        .iter()
                        .map(|pair| {
                            let part = |i: usize| pair[i].as_str().unwrap().to_owned();
                            (part(0), part(1))
                        })
                        .collect()
                })
                .unwrap_or_default();
            Case {
                name: name.clone(),
                verdict,
                why: text("why").unwrap_or_default(),
                place_as: text("place_as").unwrap_or_else(|| name.clone()).into(),
                generated: text("generated"),
                errors,
                reason: text("reason"),
                markdown: case["markdown"].as_bool().unwrap_or(false),
            }
        })
        .collect()
}

#[test]
fn the_manifest_covers_the_corpus_and_every_kind_of_attack() {
    let cases = load_cases();
    let mut failures = Vec::new();
    let listed: BTreeSet<&str> = cases
        .iter()
        .filter(|c| c.generated.is_none())
        .map(|c| c.name.as_str())
        .collect();
    for entry in std::fs::read_dir(corpus_dir()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        // outcomes/: forged outcome files, with a manifest of their own (hostile_outcomes.rs).
        if name != "verdicts.json" && name != "outcomes" && !listed.contains(name.as_str()) {
            failures.push(format!("{name} has no verdict in verdicts.json"));
        }
    }
    for case in &cases {
        let name = &case.name;
        let exists = corpus_dir().join(name).exists();
        match (&case.generated, exists) {
            (None, false) => failures.push(format!("{name} is listed but missing")),
            (Some(_), true) => failures.push(format!("{name} is generated but also a file")),
            _ => {}
        }
        if case.why.trim().is_empty() {
            failures.push(format!("{name} does not say why"));
        }
        match case.verdict {
            Verdict::Accepted | Verdict::Rejected if case.id().is_none() => failures.push(format!(
                "{name}: only a file named <valid id>.json can be {:?}",
                case.verdict
            )),
            Verdict::Rejected
                if case.errors.is_empty() || case.errors.iter().any(|(_, w)| w.is_empty()) =>
            {
                failures.push(format!("{name}: a rejection must name its problem"))
            }
            Verdict::Problem if case.reason.is_none() => {
                failures.push(format!("{name}: a problem needs its reason"))
            }
            _ => {}
        }
    }
    assert!(cases.len() >= 40, "only {} cases", cases.len());
    // Every kind of attack the issue lists keeps at least one case.
    for kind in [
        "valid-structured",
        "id-traversal",
        "name-",
        "symlink-to-outside-file",
        "symlink-to-outside-dir",
        "fifo",
        "directory",
        "size-over-cap",
        "nesting-10000",
        "invalid-utf8",
        "huge-option-list",
        "wrong-types-envelope",
        "wrong-types-interactive-question",
        "wrong-types-structured-question",
        "redos",
        "regex-compile-blowup",
        "markdown-script",
        "markdown-event-handlers",
        "markdown-javascript",
        "markdown-data-urls",
        "markdown-entities",
        "bom",
        "nul-byte",
        "duplicate-keys",
        "numbers-out-of-range",
        "huge-title",
    ] {
        if !cases.iter().any(|c| c.name.starts_with(kind)) {
            failures.push(format!("no case for {kind}"));
        }
    }
    for verdict in [Verdict::Accepted, Verdict::Rejected, Verdict::Problem] {
        if !cases.iter().any(|c| c.verdict == verdict) {
            failures.push(format!("no {verdict:?} case"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The detectors themselves: a check that cannot see anything passes everything.
#[test]
fn the_sentinel_and_the_html_check_see_what_they_look_for() {
    let root = tempfile::tempdir().unwrap();
    let mut sentinel = Sentinel::create(&root.path().join("sentinel"));
    assert!(sentinel.events().is_empty());
    let link = root.path().join("link.json");
    std::os::unix::fs::symlink(root.path().join("sentinel/secret.json"), &link).unwrap();
    let _ = std::fs::read(&link).unwrap();
    let seen = sentinel.events();
    assert!(
        seen.iter().any(|e| e.contains("OPEN")) && seen.iter().any(|e| e.contains("ACCESS")),
        "a read through a symlink shows as an open and an access: {seen:?}"
    );
    let _ = std::fs::read_dir(root.path().join("sentinel/dir"))
        .unwrap()
        .count();
    assert!(!sentinel.events().is_empty(), "listing the directory shows");
    assert!(sentinel.unchanged().is_empty());
    std::fs::write(root.path().join("sentinel/dropped"), b"x").unwrap();
    assert!(!sentinel.unchanged().is_empty(), "a new file shows");

    for bad in [
        "<p><script>alert(1)</script></p>",
        r#"<img src="https://x.example/p.gif">"#,
        r#"<a href="https://ok.example" onclick="alert(1)">x</a>"#,
        r#"<a href="javascript:alert(1)">x</a>"#,
        r#"<a href=" JavaScript:alert(1)">x</a>"#,
        r#"<a href='data:text/html,x'>x</a>"#,
        r#"<a href=vbscript:x>x</a>"#,
        r#"<p style="background:url(x)">x</p>"#,
        r#"<iframe srcdoc="x"></iframe>"#,
    ] {
        assert!(!unsafe_html(bad).0.is_empty(), "{bad} passed the check");
    }
    let good = r#"<p>&lt;script&gt; <a href="https://ok.example/a?b=1&amp;c=javascript:" rel="noopener noreferrer nofollow">ok</a></p>"#;
    assert_eq!(unsafe_html(good), (vec![], 1));
}

/// Everything one run needs: the directories and the sentinel's watch.
struct World {
    root: tempfile::TempDir,
    binary: PathBuf,
}

impl World {
    fn spool(&self) -> PathBuf {
        self.root.path().join("spool")
    }
    fn questions(&self) -> PathBuf {
        self.spool().join("questions")
    }
    fn sentinel(&self) -> PathBuf {
        self.root.path().join("sentinel")
    }
    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }
    fn command(&self, db: &Path, args: &[&str]) -> std::process::Command {
        let mut cmd = inbox_command(&self.binary, &self.spool(), db, &self.home());
        cmd.args(args);
        cmd
    }
}

#[test]
fn every_hostile_case_gets_its_verdict_and_nothing_outside_the_spool_is_touched() {
    let cases = load_cases();
    let world = World {
        root: tempfile::tempdir().unwrap(),
        binary: util::binary(),
    };
    for dir in ["questions", "answers", "cancel", "tmp"] {
        std::fs::create_dir_all(world.spool().join(dir)).unwrap();
    }
    std::fs::create_dir_all(world.home()).unwrap();
    let mut sentinel = Sentinel::create(&world.sentinel());

    // 1. The event path: the daemon watches while every case arrives.
    let db = world.root.path().join("data/inbox.sqlite3");
    let mut daemon = Daemon::start(
        world.command(&db, &["watch", "--no-notify"]),
        &world.root.path().join("watch.log"),
    )
    .unwrap();
    daemon.wait_line("ready", LIMIT).unwrap();
    let mut made = Vec::new();
    for case in &cases {
        place(&world, case);
        made.push(case.name.as_str());
    }
    place_bytes(
        &world,
        OsStr::new(&format!("{MARKER}.json")),
        &valid_request(),
    );
    let waited = daemon.wait_line(&format!("ingested {MARKER}:"), LIMIT);
    assert!(
        daemon.alive(),
        "the daemon died during the corpus\n{}",
        daemon.log_tail()
    );
    waited.unwrap_or_else(|error| panic!("the daemon did not get through the corpus: {error}"));
    assert_eq!(
        daemon.stop(),
        Some(0),
        "watch exits cleanly after the corpus\n{}",
        daemon.log_tail()
    );
    let mut failures = verify("watch (events)", &world, &cases, &db);
    failures.extend(check_views(&world, &cases, &db));

    // 2. The scan path over the same database, then over a fresh one.
    for (label, db) in [
        ("list, same database (scan)", db.clone()),
        (
            "list, fresh database (scan only)",
            world.root.path().join("data/fresh.sqlite3"),
        ),
    ] {
        let out = run_with_timeout(world.command(&db, &["list", "--json"]), LIMIT).unwrap();
        if !out.status.success() {
            failures.push(format!(
                "{label}: list --json failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        let rows: Vec<Value> = serde_json::from_slice(&out.stdout).expect("list --json is JSON");
        let listed: BTreeSet<&str> = rows.iter().filter_map(|r| r["id"].as_str()).collect();
        let mut accepted: BTreeSet<&str> = cases
            .iter()
            .filter(|c| c.verdict == Verdict::Accepted)
            .filter_map(Case::id)
            .collect();
        accepted.insert(MARKER);
        if listed != accepted {
            failures.push(format!(
                "{label}: list --json shows {listed:?}, expected {accepted:?}"
            ));
        }
        failures.extend(verify(label, &world, &cases, &db));
    }
    let text = run_with_timeout(world.command(&db, &["list", "--all"]), LIMIT).unwrap();
    if !text.status.success() {
        failures.push("list --all (text) failed".into());
    }

    // 3. Nothing outside the spool was read or written.
    for event in sentinel.events() {
        failures.push(format!("outside the spool: {event}"));
    }
    failures.extend(sentinel.unchanged());
    let mut top: Vec<String> = std::fs::read_dir(world.root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    if top != ["data", "home", "sentinel", "spool", "watch.log"] {
        failures.push(format!("unexpected files beside the spool: {top:?}"));
    }

    let table: Vec<String> = cases
        .iter()
        .map(|c| format!("  {:<45} {:?}", c.name, c.verdict))
        .collect();
    eprintln!("{} cases:\n{}", made.len(), table.join("\n"));
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn valid_request() -> Vec<u8> {
    br#"{"inbox": 1, "title": "A valid request", "questions": [{"id": "go", "question": "Go?", "type": "confirm"}]}"#
        .to_vec()
}

/// Puts a file into questions/ the way an asker does: complete in tmp/, then renamed.
fn place_bytes(world: &World, name: &OsStr, bytes: &[u8]) {
    let tmp = world.spool().join("tmp").join("placing");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, world.questions().join(name)).unwrap();
}

fn place(world: &World, case: &Case) {
    let Some(how) = &case.generated else {
        let bytes = std::fs::read(corpus_dir().join(&case.name)).unwrap();
        return place_bytes(world, &case.place_as, &bytes);
    };
    let target = world.questions().join(&case.place_as);
    let sentinel = world.sentinel();
    let padded = |size: u64| {
        let mut bytes = valid_request();
        bytes.resize(size as usize, b' ');
        bytes
    };
    match case.name.as_str() {
        "nesting-10000.json" => {
            let text = "[".repeat(10_000) + &"]".repeat(10_000);
            place_bytes(world, &case.place_as, text.as_bytes());
        }
        "nesting-10000-objects.json" => {
            let text = format!(
                r#"{{"inbox": 1, "questions": [{{"id": "go", "question": "Go?", "type": "confirm"}}], "x": {}1{}}}"#,
                r#"{"a":"#.repeat(10_000),
                "}".repeat(10_000)
            );
            place_bytes(world, &case.place_as, text.as_bytes());
        }
        "huge-description.json" => {
            let text = format!(
                r#"{{"inbox": 1, "questions": [{{"id": "go", "question": "Go?", "type": "confirm", "description": "{}"}}]}}"#,
                "A".repeat(1_000_000)
            );
            assert!(text.len() as u64 <= inbox_protocol::limits::MAX_FILE_BYTES);
            place_bytes(world, &case.place_as, text.as_bytes());
        }
        "size-exactly-cap.json" => {
            place_bytes(
                world,
                &case.place_as,
                &padded(inbox_protocol::limits::MAX_FILE_BYTES),
            );
        }
        "size-over-cap.json" => {
            place_bytes(
                world,
                &case.place_as,
                &padded(inbox_protocol::limits::MAX_FILE_BYTES + 1),
            );
        }
        "size-sparse-4gib.json" => {
            let tmp = world.spool().join("tmp").join("sparse");
            std::fs::File::create(&tmp)
                .unwrap()
                .set_len(4 << 30)
                .unwrap();
            std::fs::rename(&tmp, &target).unwrap();
        }
        "symlink-to-outside-file.json" => {
            std::os::unix::fs::symlink(sentinel.join("secret.json"), &target).unwrap()
        }
        "symlink-to-outside-dir.json" => {
            std::os::unix::fs::symlink(sentinel.join("dir"), &target).unwrap()
        }
        "symlink-relative-traversal.json" => {
            std::os::unix::fs::symlink("../../sentinel/secret.json", &target).unwrap()
        }
        "symlink-dangling.json" => {
            std::os::unix::fs::symlink(sentinel.join("missing.json"), &target).unwrap()
        }
        "fifo.json" => {
            let made = std::process::Command::new("mkfifo").arg(&target).status();
            assert!(made.unwrap().success(), "mkfifo");
        }
        "directory.json" => {
            let tmp = world.spool().join("tmp").join("a-directory");
            std::fs::create_dir(&tmp).unwrap();
            std::fs::write(tmp.join("inner.json"), valid_request()).unwrap();
            std::fs::rename(&tmp, &target).unwrap();
        }
        "socket.json" => {
            std::os::unix::net::UnixListener::bind(&target).unwrap();
        }
        "name-invalid-utf8" => {
            let name = OsString::from_vec(b"\xff\xfe.json".to_vec());
            place_bytes(world, &name, &valid_request());
        }
        other => panic!("no generator for the case {other} ({how})"),
    }
}

/// The path a case has in questions/. Generated cases whose name is not their key say so
/// here (the manifest cannot hold bytes that are not UTF-8).
fn placed_path(world: &World, case: &Case) -> PathBuf {
    if case.name == "name-invalid-utf8" {
        return world
            .questions()
            .join(OsString::from_vec(b"\xff\xfe.json".to_vec()));
    }
    world.questions().join(&case.place_as)
}

/// Every case's verdict as the database `db` and the spool show it; one line per failure.
/// `events`: only the daemon's event path has run on `db` (no full scan since the cases came).
fn verify(label: &str, world: &World, cases: &[Case], db: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    let mut fail = |case: &Case, what: String| {
        failures.push(format!(
            "[{label}] {} (expected {:?}: {}): {what}",
            case.name, case.verdict, case.why
        ))
    };
    let store = Store::open(db).expect("the database opens");
    let pending: BTreeSet<String> = store.pending().unwrap().into_iter().map(|r| r.id).collect();
    let problems: BTreeMap<String, String> = store
        .problems()
        .unwrap()
        .into_iter()
        .map(|(path, reason, _)| (path, reason))
        .collect();
    let answers = world.spool().join("answers");
    let mut expected_outcomes = BTreeSet::new();

    for case in cases {
        let path = placed_path(world, case);
        let problem = problems.get(path.to_string_lossy().as_ref());
        let id = case.id();
        let outcome_path = id.map(|id| answers.join(format!("{id}.json")));
        let outcome = outcome_path
            .as_ref()
            .and_then(|p| std::fs::read(p).ok())
            .map(|bytes| serde_json::from_slice::<Value>(&bytes).unwrap_or(Value::Null));
        let is_pending = id.is_some_and(|id| pending.contains(id));
        match case.verdict {
            Verdict::Accepted => {
                if !is_pending {
                    fail(
                        case,
                        format!("not pending (problem: {problem:?}, outcome: {outcome:?})"),
                    );
                }
                if let Some(outcome) = &outcome {
                    fail(case, format!("has an outcome: {outcome}"));
                }
            }
            Verdict::Rejected => {
                let Some(outcome) = outcome else {
                    fail(
                        case,
                        format!("no outcome file (problem: {problem:?}, pending: {is_pending})"),
                    );
                    continue;
                };
                expected_outcomes.insert(format!("{}.json", id.unwrap()));
                if outcome["status"] != "rejected"
                    || outcome["answered_by"] != "policy:validation"
                    || outcome["id"] != id.unwrap()
                {
                    fail(case, format!("not a rejection by validation: {outcome}"));
                }
                let errors: Vec<(String, String)> = outcome["errors"]
                    .as_array()
                    .map(|errors| {
                        errors
                            .iter()
                            .map(|e| {
                                let field = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
                                (field("pointer"), field("message"))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                for (pointer, words) in &case.errors {
                    let named = errors.iter().any(|(p, message)| {
                        p == pointer && message.to_lowercase().contains(&words.to_lowercase())
                    });
                    if !named {
                        fail(
                            case,
                            format!("no error at {pointer:?} saying {words:?}; errors: {errors:?}"),
                        );
                    }
                }
                if is_pending {
                    fail(case, "also pending".into());
                }
            }
            Verdict::Problem => {
                let wanted = case.reason.as_deref().unwrap_or_default();
                match problem {
                    Some(reason) if reason.to_lowercase().contains(&wanted.to_lowercase()) => {}
                    other => fail(
                        case,
                        format!(
                            "no spool problem saying {wanted:?} for {path:?} (recorded: {other:?})"
                        ),
                    ),
                }
                if let Some(outcome) = outcome {
                    fail(case, format!("has an outcome: {outcome}"));
                }
                if is_pending {
                    fail(case, "is pending".into());
                }
            }
        }
        if case.verdict != Verdict::Problem {
            if let Some(problem) = problem {
                fail(case, format!("recorded as a spool problem: {problem}"));
            }
        }
    }

    let present: BTreeSet<String> = std::fs::read_dir(&answers)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for extra in present.difference(&expected_outcomes) {
        failures.push(format!(
            "[{label}] an outcome nobody should have: answers/{extra}"
        ));
    }
    let mut expected_pending: BTreeSet<String> = cases
        .iter()
        .filter(|c| c.verdict == Verdict::Accepted)
        .filter_map(|c| c.id().map(str::to_owned))
        .collect();
    expected_pending.insert(MARKER.to_owned());
    for extra in pending.difference(&expected_pending) {
        failures.push(format!("[{label}] pending but should not be: {extra}"));
    }
    failures
}

/// Accepted cases as the desktop window would get them: the stored request must equal a fresh
/// parse of the file (nothing truncated or altered on the way), and the view model's HTML
/// must be inert.
fn check_views(world: &World, cases: &[Case], db: &Path) -> Vec<String> {
    let store = Store::open(db).unwrap();
    let mut failures = Vec::new();
    let mut links_seen = 0;
    for case in cases.iter().filter(|c| c.verdict == Verdict::Accepted) {
        let id = case.id().unwrap();
        let Some(detail) = store.detail(id).unwrap() else {
            failures.push(format!("{}: not in the database", case.name));
            continue;
        };
        if let Ok(bytes) = std::fs::read(placed_path(world, case)) {
            let fresh = inbox_protocol::parse_request(&bytes, Some(id)).ok();
            if detail.request != fresh {
                failures.push(format!(
                    "{}: the stored request differs from the file's:\nstored {:?}\nfile   {:?}",
                    case.name, detail.request, fresh
                ));
            }
        }
        let view = serde_json::to_value(RequestView::of(&detail)).unwrap();
        for (field, text) in shown_text(&view) {
            let raw: Vec<String> = raw_hidden(&text)
                .into_iter()
                .filter(|c| c != "\\u{9}")
                .collect();
            if !raw.is_empty() {
                failures.push(format!(
                    "{}: {field} reaches the window with raw {raw:?}",
                    case.name
                ));
            }
        }
        let mut html = Vec::new();
        if let Some(text) = view["confirm_description_html"].as_str() {
            html.push(text.to_owned());
        }
        for question in view["questions"].as_array().into_iter().flatten() {
            if let Some(text) = question["description_html"].as_str() {
                html.push(text.to_owned());
            }
        }
        if case.markdown && html.iter().all(|h| h.trim().is_empty()) {
            failures.push(format!("{}: its markdown rendered to nothing", case.name));
        }
        for text in &html {
            let (bad, links) = unsafe_html(text);
            links_seen += links;
            for what in bad {
                failures.push(format!(
                    "{}: {what} in the rendered HTML: {text}",
                    case.name
                ));
            }
        }
        if let Some(url) = view["row"]["source"]["url"].as_str() {
            if !is_web_url(url) {
                failures.push(format!(
                    "{}: source url {url:?} reaches the window",
                    case.name
                ));
            }
        }
    }
    if links_seen == 0 {
        failures
            .push("no http(s) link survived sanitising: the HTML check looks at nothing".into());
    }
    failures
}

/// The strings of a request's view that the window shows as text (ids and patterns, which
/// it sends back or runs, are not shown text).
fn shown_text(view: &Value) -> Vec<(String, String)> {
    let mut shown = Vec::new();
    let mut take = |field: String, value: &Value| {
        if let Some(text) = value.as_str() {
            shown.push((field, text.to_owned()));
        }
    };
    take("title".into(), &view["row"]["title"]);
    take("confirm_title".into(), &view["confirm_title"]);
    take(
        "confirm_description_html".into(),
        &view["confirm_description_html"],
    );
    for (key, value) in view["row"]["source"].as_object().into_iter().flatten() {
        take(format!("source.{key}"), value);
    }
    for (q, question) in view["questions"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        for key in ["question", "tab_label", "description_html", "required_when"] {
            take(format!("questions[{q}].{key}"), &question[key]);
        }
        for (c, choice) in question["choices"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            for key in ["label", "description"] {
                take(format!("questions[{q}].choices[{c}].{key}"), &choice[key]);
            }
        }
    }
    shown
}

fn is_web_url(url: &str) -> bool {
    let url = url.trim().to_ascii_lowercase();
    url.starts_with("https://") || url.starts_with("http://")
}

/// What makes sanitised HTML unsafe: dangerous elements, `on*` handlers, `style`, and URL
/// attributes that are not http(s). Returns those found and the number of web links seen.
fn unsafe_html(html: &str) -> (Vec<String>, usize) {
    use std::sync::OnceLock;
    static PATTERNS: OnceLock<(regex::Regex, regex::Regex, regex::Regex)> = OnceLock::new();
    let (element, tag, attribute) = PATTERNS.get_or_init(|| {
        (
            regex::Regex::new(
                r"(?i)<\s*/?\s*(script|iframe|frame|object|embed|style|meta|base|form|img|svg|math|link|template|noscript|input|button|body)\b",
            )
            .unwrap(),
            regex::Regex::new(r"<[A-Za-z][^>]*>").unwrap(),
            regex::Regex::new(
                r#"(?i)\s([a-z_:][-a-z0-9_:.]*)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+))?"#,
            )
            .unwrap(),
        )
    });
    let mut bad = Vec::new();
    let mut links = 0;
    for found in element.find_iter(html) {
        bad.push(format!("the element {:?}", found.as_str()));
    }
    for tag in tag.find_iter(html) {
        for attr in attribute.captures_iter(tag.as_str()) {
            let name = attr[1].to_ascii_lowercase();
            let value = attr
                .get(2)
                .map_or("", |v| v.as_str())
                .trim_matches(['"', '\'']);
            if name.starts_with("on") || name == "style" || name == "srcdoc" {
                bad.push(format!("the attribute {name}"));
            } else if matches!(
                name.as_str(),
                "href"
                    | "src"
                    | "action"
                    | "formaction"
                    | "xlink:href"
                    | "background"
                    | "poster"
                    | "data"
                    | "cite"
            ) {
                if is_web_url(value) {
                    links += 1;
                } else {
                    bad.push(format!("the URL {name}={value:?}"));
                }
            }
        }
    }
    (bad, links)
}

/// A directory outside the spool holding what a hostile request points at, watched with
/// inotify from before the daemon starts to the end.
struct Sentinel {
    dir: PathBuf,
    inotify: inotify::Inotify,
    /// Each file's content and modification time as made.
    files: BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)>,
}

impl Sentinel {
    fn create(dir: &Path) -> Sentinel {
        std::fs::create_dir_all(dir.join("dir")).unwrap();
        std::fs::write(dir.join("secret.json"), valid_request()).unwrap();
        std::fs::write(dir.join("dir/inner.json"), valid_request()).unwrap();
        std::fs::write(dir.join("canary"), b"must stay unread").unwrap();
        let mut files = BTreeMap::new();
        for name in ["secret.json", "dir/inner.json", "canary"] {
            let path = dir.join(name);
            let bytes = std::fs::read(&path).unwrap();
            let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
            files.insert(path, (bytes, modified));
        }
        let inotify = inotify::Inotify::init().expect("inotify");
        for watched in [dir.to_owned(), dir.join("dir")] {
            // ALL_EVENTS includes OPEN and ACCESS: a read through a link shows, not only a
            // write.
            inotify
                .watches()
                .add(&watched, inotify::WatchMask::ALL_EVENTS)
                .expect("inotify watch");
        }
        Sentinel {
            dir: dir.to_owned(),
            inotify,
            files,
        }
    }

    /// Every event since the watch began, described.
    fn events(&mut self) -> Vec<String> {
        let mut described = Vec::new();
        let mut buffer = vec![0u8; 64 * 1024];
        // The descriptor is non-blocking: an empty queue ends the loop.
        while let Ok(events) = self.inotify.read_events(&mut buffer) {
            let before = described.len();
            for event in events {
                described.push(format!(
                    "inotify {:?} on {:?} in {}",
                    event.mask,
                    event.name,
                    self.dir.display()
                ));
            }
            if described.len() == before {
                break;
            }
        }
        described
    }

    /// The sentinel's files are as they were made: same content, same modification time,
    /// nothing added. (Access times prove nothing under `relatime`; reads show in
    /// [`Sentinel::events`].)
    fn unchanged(&self) -> Vec<String> {
        let mut changed = Vec::new();
        for (path, (bytes, modified)) in &self.files {
            if std::fs::metadata(path).unwrap().modified().unwrap() != *modified {
                changed.push(format!("{} was modified", path.display()));
            }
            if std::fs::read(path).unwrap() != *bytes {
                changed.push(format!("{} was rewritten", path.display()));
            }
        }
        let mut names: Vec<String> = walk(&self.dir);
        names.sort();
        if names != ["canary", "dir", "dir/inner.json", "secret.json"] {
            changed.push(format!("the sentinel now holds {names:?}"));
        }
        changed
    }
}

fn walk(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().unwrap().is_dir() {
            names.extend(
                walk(&entry.path())
                    .into_iter()
                    .map(|n| format!("{name}/{n}")),
            );
        }
        names.push(name);
    }
    names
}

/// Is `c` something no terminal may get raw from the inbox? The protocol's text policy
/// decides; a newline is the one hidden character output may hold raw (it ends a row).
fn raw_hidden(text: &str) -> Vec<String> {
    text.chars()
        .filter(|&c| c != '\n' && inbox_protocol::text::is_hidden(c))
        .map(|c| c.escape_unicode().to_string())
        .collect()
}

/// The corpus's title and source attacks, through every text surface of the command line:
/// `list` has one row per request whatever the titles hold, `show` one `source:` field and
/// its title on one line, and neither (nor their `--json`) lets a hidden character out raw.
#[test]
fn hidden_characters_and_newlines_neither_reach_the_terminal_nor_forge_rows() {
    let inbox = util::Inbox::new();
    let ids = [
        "hidden-chars-in-title-and-source",
        "newline-in-title-and-source",
        "terminal-escapes",
    ];
    for id in ids {
        let body = std::fs::read_to_string(corpus_dir().join(format!("{id}.json"))).unwrap();
        inbox.place(id, &body);
    }
    let mut failures = Vec::new();
    let mut run = |args: &[&str]| {
        let out = inbox.run(args);
        let (stdout, stderr) = (util::stdout(&out), util::stderr(&out));
        if util::code(&out) != 0 {
            failures.push(format!("{args:?} failed: {stderr}"));
        }
        for (stream, text) in [("stdout", &stdout), ("stderr", &stderr)] {
            let raw = raw_hidden(text);
            if !raw.is_empty() {
                failures.push(format!("{args:?}: raw {raw:?} on {stream}:\n{text}"));
            }
        }
        stdout
    };

    let list = run(&["list"]);
    let rows: Vec<&str> = list.lines().collect();
    let table_ok = rows.len() == ids.len() + 1
        && ids
            .iter()
            .all(|id| rows.iter().filter(|r| r.starts_with(id)).count() == 1);
    let list_json = run(&["list", "--json"]);
    let show_escapes = run(&["show", "hidden-chars-in-title-and-source"]);
    let show_newlines = run(&["show", "newline-in-title-and-source"]);
    let show_json = run(&["show", "newline-in-title-and-source", "--json"]);
    run(&["show", "terminal-escapes"]);

    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(table_ok, "one header and one row per request:\n{list}");
    // Shown, visibly: the reader can see something is there.
    for escaped in [
        r"\u{202e}",
        r"\u{2028}",
        r"\u{61c}",
        r"\u{200f}",
        r"\u{200b}",
    ] {
        assert!(
            show_escapes.contains(escaped),
            "{escaped} in:\n{show_escapes}"
        );
    }
    assert!(
        show_escapes.contains(r"app ci\u{2066}x\u{2069}"),
        "{show_escapes}"
    );
    let first = show_newlines.lines().next().unwrap();
    assert_eq!(
        first, r"Deploy\nforged-row  normal  Fake title  -  1  1s  —\r\ncarriage",
        "the title is the first line, whole"
    );
    let source_fields = show_newlines
        .lines()
        .filter(|l| l.trim_start().starts_with("source:"))
        .count();
    assert_eq!(
        source_fields, 1,
        "a newline forged a field:\n{show_newlines}"
    );
    assert!(
        show_newlines.contains(r"app ci\n  source:   app trusted-app · tool t\tx"),
        "{show_newlines}"
    );
    // The description is text that may span lines: its newline stays.
    assert!(show_newlines.contains("line one\n"), "{show_newlines}");
    // JSON escapes hidden characters its own way, and still means the same strings.
    let rows: Value = serde_json::from_str(&list_json).unwrap();
    let titled = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "hidden-chars-in-title-and-source")
        .unwrap();
    assert_eq!(
        titled["title"],
        "Deploy \u{202e}staging\u{202c} now\u{200f}\u{61c}\u{2028}forged\u{200b}"
    );
    let detail: Value = serde_json::from_str(&show_json).unwrap();
    assert_eq!(detail["source"]["app"], "ci\n  source:   app trusted-app");
}

/// Escape sequences on the error paths: an id typed (or pasted) with one in it, and a
/// decline reason holding one, must come back on standard error escaped and on one line.
#[test]
fn escape_sequences_in_errors_reach_standard_error_escaped() {
    let inbox = util::Inbox::new();
    inbox.place(
        "deploy",
        r#"{"inbox": 1, "title": "Deploy?", "questions": [{"id": "go", "question": "Go?", "type": "confirm"}]}"#,
    );
    let hostile_id = "x\u{1b}[2J\u{1b}]0;pwned\u{7}\nanswer-inbox: forged line";
    let attempts: [&[&str]; 5] = [
        &["answer", hostile_id, "--set", "go=true"],
        &["cancel", hostile_id],
        &["show", hostile_id],
        &["answer", "deploy", "--set", "g\u{1b}[31mo\u{202e}=true"],
        &["answer", "deploy", "--set", "go=y\u{1b}[2Jes"],
    ];
    for args in attempts {
        let out = inbox.run(args);
        let stderr = util::stderr(&out);
        assert_ne!(util::code(&out), 0, "{args:?} should fail");
        assert!(raw_hidden(&stderr).is_empty(), "{args:?}: {stderr:?}");
        assert!(
            stderr.contains(r"\u{1b}"),
            "{args:?} shows the escape: {stderr:?}"
        );
        assert!(
            !stderr
                .lines()
                .any(|l| l.starts_with("answer-inbox: forged")),
            "{args:?} forged a line: {stderr:?}"
        );
    }

    // A reason is the operator's, but it is still text from a file when shown.
    let reason = "not now\u{1b}[2J\nstatus:   answered";
    let out = inbox.run(&["answer", "deploy", "--decline", reason]);
    assert_eq!(util::code(&out), 0, "{}", util::stderr(&out));
    for args in [
        &["show", "deploy"][..],
        &["cancel", "deploy"],
        &["list", "--all"],
    ] {
        let out = inbox.run(args);
        let (stdout, stderr) = (util::stdout(&out), util::stderr(&out));
        assert!(raw_hidden(&stdout).is_empty(), "{args:?}: {stdout}");
        assert!(raw_hidden(&stderr).is_empty(), "{args:?}: {stderr}");
        if args[0] == "show" {
            assert!(
                stdout.contains(r"reason:   not now\u{1b}[2J\nstatus:   answered"),
                "{stdout}"
            );
        }
    }
}
