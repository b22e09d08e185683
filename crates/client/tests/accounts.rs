//! The OS accounts of the tests about who wrote an outcome file: two members of one team
//! group and an account outside it, created when missing (with `groupadd` and `useradd`,
//! which needs root) and reused afterwards. The client's corpus test uses them, and so do
//! the black-box tests (tests/tests/team.rs includes this file), so that there is one list
//! of these accounts, not one per test. The Python client's tests create the same ones
//! (clients/python/tests/conftest.py).
//!
//! They are not the team harness's accounts (crates/harness/src/team.rs): those log in over
//! SSH and are made for it; these never log in, they only own files and run processes.

use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// The team group.
pub const GROUP: &str = "inbox-crew";
/// Two members of [`GROUP`].
pub const MEMBERS: [&str; 2] = ["inbox-crew-ann", "inbox-crew-bob"];
/// An account outside [`GROUP`].
pub const OUTSIDER: &str = "inbox-stranger";

/// The accounts, as this machine numbers them.
#[derive(Debug, Clone)]
pub struct Crew {
    /// The gid of [`GROUP`].
    pub gid: u32,
    /// The uids of [`MEMBERS`].
    pub members: [u32; 2],
    /// The uid of [`OUTSIDER`].
    pub outsider: u32,
}

/// The accounts, created when missing; `Err` says why there are none: not root (only root
/// can create accounts and give files away). As root, failing to create them fails the test:
/// the cases that need them are never left out quietly.
pub fn crew() -> Result<&'static Crew, String> {
    if number(&["id", "-u"], 0) != Ok(0) {
        return Err("not running as root, so it cannot create accounts or give files away".into());
    }
    static CREW: OnceLock<Crew> = OnceLock::new();
    Ok(CREW.get_or_init(|| {
        ensure().unwrap_or_else(|why| panic!("cannot set up the test accounts: {why}"))
    }))
}

fn ensure() -> Result<Crew, String> {
    // -f: the group may exist already, or another test process may create it meanwhile.
    retried(&["groupadd", "-f", GROUP])?;
    let gid = number(&["getent", "group", GROUP], 2)?;
    let member = |name: &str| ensure_account(name, true);
    let members = [member(MEMBERS[0])?, member(MEMBERS[1])?];
    let outsider = ensure_account(OUTSIDER, false)?;
    if in_group(OUTSIDER)? {
        return Err(format!(
            "{OUTSIDER} is in the group {GROUP}; it must stay outside"
        ));
    }
    Ok(Crew {
        gid,
        members,
        outsider,
    })
}

fn ensure_account(name: &str, member: bool) -> Result<u32, String> {
    if number(&["id", "-u", name], 0).is_err() {
        // No home, no login: these accounts only own files and run processes.
        let mut args = vec![
            "useradd",
            "--no-create-home",
            "--home-dir",
            "/nonexistent",
            "--shell",
            "/usr/sbin/nologin",
            "--user-group",
        ];
        if member {
            args.extend(["--groups", GROUP]);
        }
        args.push(name);
        if let Err(error) = retried(&args) {
            // Another test process may have created it meanwhile.
            number(&["id", "-u", name], 0).map_err(|_| error)?;
        }
    }
    let uid = number(&["id", "-u", name], 0)?;
    if member && !in_group(name)? {
        retried(&["usermod", "--append", "--groups", GROUP, name])?;
    }
    Ok(uid)
}

/// Whether the account `name` is in [`GROUP`]. (Std and the tools only: the black-box
/// tests include this file without the spool crate.)
fn in_group(name: &str) -> Result<bool, String> {
    Ok(run(&["id", "-Gn", name])?
        .split_whitespace()
        .any(|group| group == GROUP))
}

/// Field `field` (0-based, `:`-separated) of a tool's one-line output, as a number.
fn number(args: &[&str], field: usize) -> Result<u32, String> {
    let out = run(args)?;
    out.trim()
        .split(':')
        .nth(field)
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("{}: unexpected output {out:?}", args.join(" ")))
}

/// Runs an account tool, again a few times when it fails: `useradd` and `groupadd` refuse
/// to work while another process holds the account database's lock.
fn retried(args: &[&str]) -> Result<String, String> {
    let mut result = run(args);
    for _ in 0..10 {
        if result.is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
        result = run(args);
    }
    result
}

fn run(args: &[&str]) -> Result<String, String> {
    // Root's tools are in the sbin directories, which are not always on PATH.
    let program = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        .iter()
        .map(|dir| std::path::Path::new(dir).join(args[0]))
        .find(|path| path.is_file())
        .ok_or_else(|| format!("{} is not installed", args[0]))?;
    let out = Command::new(&program)
        .args(&args[1..])
        .stdin(Stdio::null())
        .output()
        .map_err(|error| format!("cannot run {}: {error}", program.display()))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{} failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
