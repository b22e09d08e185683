//! The operator's policy file as the Settings view edits it: read (the shipped policy while
//! there is no file), checked by the policy's own parser (every problem with its line),
//! and saved atomically, only when valid.
//!
//! The file is shared with the command line (`<XDG config>/answer-inbox/policy.toml`) and
//! the running loop notices a saved file by itself at its next turn (within seconds).
//!
//! A policy can run programs (an escalation step's `run`). The window may keep or remove
//! those, never add or change one: a page that could write them could make the app run any
//! program as the operator, so a new program is written into the file with an editor, by
//! hand. Nothing else the window sends is ever executed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use inbox_engine::inbox_policy::{problems_of, Policy, StepAction, SHIPPED};

use crate::errors::{ErrorCode, IpcError};
use crate::views::{PolicyProblemView, PolicyView, ProblemView};

/// The largest policy text the window may save: far above any real policy, and a bound on
/// what the parser is handed.
pub const MAX_POLICY_BYTES: usize = 256 * 1024;

/// The policy file and what the inbox says of it.
///
/// `trouble` is the running inbox's report of a broken file (what stands instead); the
/// problems are found afresh in the file's text.
pub fn read_policy(path: &Path, trouble: Option<String>) -> Result<PolicyView, IpcError> {
    // Never blocking on a FIFO, never reading a device or a huge file to its end.
    let (text, exists) = match inbox_engine::inbox_policy::read_to_show(path) {
        Ok(Some(text)) => (text, true),
        Ok(None) => (SHIPPED.to_owned(), false),
        Err(error) => {
            return Err(IpcError::new(
                ErrorCode::Storage,
                format!("cannot read the policy file {}: {error}", path.display()),
            ))
        }
    };
    Ok(view(path, text, exists, trouble))
}

fn view(path: &Path, text: String, exists: bool, trouble: Option<String>) -> PolicyView {
    let (problems, rules) = match Policy::parse(&text) {
        Ok(policy) => (
            Vec::new(),
            policy.rule_names().into_iter().map(str::to_owned).collect(),
        ),
        Err(problems) => (
            problems.iter().map(PolicyProblemView::of).collect(),
            Vec::new(),
        ),
    };
    PolicyView {
        path: path.display().to_string(),
        exists,
        text,
        shipped: SHIPPED.to_owned(),
        problems,
        rules,
        trouble: trouble.map(|t| inbox_protocol::text::one_line(&t).into_owned()),
    }
}

/// Every problem with policy text, each with its line; empty when it could be saved as far
/// as the language goes (see [`save_policy`] for what the window may not write).
pub fn check_policy(text: &str) -> Vec<PolicyProblemView> {
    if text.len() > MAX_POLICY_BYTES {
        return vec![too_long(text)];
    }
    problems_of(text)
        .iter()
        .map(PolicyProblemView::of)
        .collect()
}

fn too_long(text: &str) -> PolicyProblemView {
    PolicyProblemView {
        line: 0,
        column: 0,
        message: format!(
            "the policy is {} bytes; the most the window saves is {MAX_POLICY_BYTES}",
            text.len()
        ),
    }
}

/// Writes `text` as the policy file, if it is a valid policy that runs no program the file
/// on disk does not already run; otherwise nothing is written and the error says why
/// (`invalid`, with each problem's line as its `pointer`, or `bad_input`). The file is
/// written beside itself and renamed into place (a symbolic link is followed, so a file
/// kept elsewhere stays there), private to the operator (0600): it may name programs to
/// run. Returns the policy as now saved.
pub fn save_policy(path: &Path, text: &str) -> Result<PolicyView, IpcError> {
    let problems = check_policy(text);
    if !problems.is_empty() {
        return Err(refused(&problems));
    }
    let new_programs = Policy::parse(text)
        .map(|p| programs(&p))
        .unwrap_or_default();
    let allowed = programs_on_disk(path);
    let added: Vec<String> = new_programs
        .difference(&allowed)
        .map(|argv| format!("[{}]", quoted(argv)))
        .collect();
    if !added.is_empty() {
        return Err(IpcError::bad_input(format!(
            "the policy was not saved: the window does not add or change programs a policy \
             runs ({}). Edit {} in a text editor to do that",
            added.join(", "),
            path.display()
        )));
    }
    write_atomically(path, text)?;
    // Valid, and written: the inbox's report of a broken file ends at its next turn.
    Ok(view(path, text.to_owned(), true, None))
}

/// Writes the shipped policy as the file if there is none yet (so an editor has something
/// to open); returns the file's path, symbolic links followed.
pub fn ensure_policy_file(path: &Path) -> Result<PathBuf, IpcError> {
    if !path.exists() {
        write_atomically(path, SHIPPED)?;
    }
    Ok(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned()))
}

fn refused(problems: &[PolicyProblemView]) -> IpcError {
    let count = problems.len();
    IpcError {
        code: ErrorCode::Invalid,
        message: format!(
            "the policy was not saved: {count} problem{} to fix first",
            if count == 1 { "" } else { "s" }
        ),
        problems: problems
            .iter()
            .map(|problem| ProblemView {
                pointer: if problem.line == 0 {
                    String::new()
                } else {
                    format!("line {}, column {}", problem.line, problem.column)
                },
                message: problem.message.clone(),
            })
            .collect(),
    }
}

/// Every program (argv) the policy's escalation steps run.
fn programs(policy: &Policy) -> BTreeSet<Vec<String>> {
    policy
        .verdicts()
        .into_iter()
        .flat_map(|verdict| verdict.escalate.iter())
        .filter_map(|step| match &step.action {
            StepAction::Run(argv) => Some(argv.clone()),
            StepAction::Notify(_) => None,
        })
        .collect()
}

/// The programs the file on disk runs: none when there is no file, or it cannot be read
/// or parsed (the shipped policy runs none).
fn programs_on_disk(path: &Path) -> BTreeSet<Vec<String>> {
    // Read as the inbox reads it (`Policy::load`: the operator's own file, no other writer,
    // no FIFO, capped): a program in a file another account could write is no program the
    // operator put there, and must not be saved into their own file as if it were.
    Policy::load(path)
        .map(|policy| programs(&policy))
        .unwrap_or_default()
}

fn quoted(argv: &[String]) -> String {
    argv.iter()
        .map(|arg| format!("{arg:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Writes the policy whole or not at all ([`crate::atomic_file`]), private. A link at
/// `path` is followed, so an operator who keeps the policy elsewhere keeps it there.
fn write_atomically(path: &Path, text: &str) -> Result<(), IpcError> {
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let storage = |error: std::io::Error| {
        IpcError::new(
            ErrorCode::Storage,
            format!("cannot save the policy to {}: {error}", target.display()),
        )
    };
    if let Some(dir) = target.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        // Private whatever the umask: the folder holds what decides who may answer.
        inbox_spool::locations::create_private_dirs(dir, 0o700).map_err(storage)?;
    }
    crate::atomic_file::write_atomically(&target, text.as_bytes(), 0o600).map_err(storage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    const ONE_RULE: &str = "[[rule]]\nname = \"everything\"\nautonomous = \"honour\"\n";

    fn with_run(program: &str) -> String {
        format!(
            "[[rule]]\nname = \"page\"\nafter = \"10m\"\nthen = \"escalate\"\n\n\
             [[rule.escalate]]\nafter = \"0s\"\nrun = [\"{program}\"]\n"
        )
    }

    #[test]
    fn no_file_shows_the_shipped_policy_and_saving_creates_a_private_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("answer-inbox/policy.toml");
        let shown = read_policy(&path, None).unwrap();
        assert!(!shown.exists);
        assert_eq!(shown.text, SHIPPED);
        assert!(shown.problems.is_empty());
        assert_eq!(shown.rules[0], "critical-needs-a-person");

        let saved = save_policy(&path, ONE_RULE).unwrap();
        assert!(saved.exists);
        assert_eq!(saved.rules, ["everything"]);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), ONE_RULE);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // Nothing but the policy is left in its directory.
        assert_eq!(
            std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
            1
        );
    }

    /// The Settings view never hangs on a FIFO where the policy should be, nor reads a
    /// device to its end: it says what is there instead.
    #[test]
    fn a_policy_path_that_is_no_plain_file_is_named_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("policy.toml");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let error = read_policy(&fifo, None).unwrap_err();
        assert!(
            error.message.contains("not a plain file"),
            "{}",
            error.message
        );
        let error = read_policy(Path::new("/dev/zero"), None).unwrap_err();
        assert!(
            error.message.contains("not a plain file"),
            "{}",
            error.message
        );
    }

    #[test]
    fn an_invalid_policy_is_refused_with_its_lines_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.toml");
        std::fs::write(&path, ONE_RULE).unwrap();
        let broken = "[[rule]]\nname = \"x\"\nbogus = 1\n";
        let problems = check_policy(broken);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].line, 3, "{problems:?}");

        let error = save_policy(&path, broken).unwrap_err();
        assert_eq!(error.code, ErrorCode::Invalid);
        assert_eq!(error.problems[0].pointer, "line 3, column 1");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), ONE_RULE);

        let shown = read_policy(&path, Some("broken".into())).unwrap();
        assert_eq!(shown.trouble.as_deref(), Some("broken"));
    }

    #[test]
    fn the_window_keeps_or_removes_programs_but_never_adds_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.toml");
        let error = save_policy(&path, &with_run("/usr/bin/page-me")).unwrap_err();
        assert_eq!(error.code, ErrorCode::BadInput);
        assert!(
            error.message.contains("/usr/bin/page-me"),
            "{}",
            error.message
        );
        assert!(!path.exists(), "nothing was written");

        // Written by hand: the window may then keep it, and remove it. (A program the inbox
        // would run: root's, in root's folders; a policy naming any other is not in force,
        // so nothing of it counts as already there.)
        std::fs::write(&path, with_run("/bin/true")).unwrap();
        let kept = format!("# a comment\n{}", with_run("/bin/true"));
        save_policy(&path, &kept).unwrap();
        let changed = save_policy(&path, &with_run("/tmp/evil")).unwrap_err();
        assert!(changed.message.contains("/tmp/evil"), "{}", changed.message);
        save_policy(&path, ONE_RULE).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), ONE_RULE);
    }

    #[test]
    fn a_linked_policy_file_is_written_where_it_lives() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles/policy.toml");
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        std::fs::write(&real, SHIPPED).unwrap();
        let link = dir.path().join("policy.toml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        save_policy(&link, ONE_RULE).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), ONE_RULE);
    }
}
