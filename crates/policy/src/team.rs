//! Who answers a rule's requests in a team (docs/TEAMS.md): `assign` names accounts and
//! `@group`s, `takeover` lets another member take a request over (recorded), `approvals`
//! asks for that many distinct assignees to approve the same version with the same
//! answers, and `if_unassigned` says what happens when no assignee exists on this machine
//! (unknown accounts, empty groups).
//!
//! Names are looked up in the system's account database through a [`Directory`], so the
//! parse's checks (more approvals than assignees) and the engine's (is this account an
//! assignee?) are tested without real accounts.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::unistd::{Group, User};
use serde::{Deserialize, Serialize};

/// What happens to a request whose rule names assignees of whom none exists here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IfUnassigned {
    /// The safe default: it expires at once, without answers, saying why; the asker learns
    /// that nobody can decide it.
    Expire,
    /// It waits for its own expiry, answerable by nobody (but by take-over, where allowed).
    Hold,
    /// Its rule's escalation steps run at once (one critical re-notification when it has
    /// none), and any member may answer it, as if it named nobody.
    Escalate,
}

/// The accounts and groups the system knows.
pub trait Directory {
    /// Whether an account of this name exists.
    fn account_exists(&self, name: &str) -> bool;
    /// The accounts of a group (listed members, and accounts whose primary group it is,
    /// where the directory can tell), or `None` when there is no such group.
    fn group_members(&self, group: &str) -> Option<Vec<String>>;
    /// Whether `account` belongs to `group` (as its primary group or listed).
    fn in_group(&self, account: &str, group: &str) -> bool {
        self.group_members(group)
            .is_some_and(|members| members.iter().any(|m| m == account))
    }
}

/// The system's account database (NSS), through `nix`.
pub struct System;

impl Directory for System {
    fn account_exists(&self, name: &str) -> bool {
        matches!(User::from_name(name), Ok(Some(_)))
    }

    fn group_members(&self, group: &str) -> Option<Vec<String>> {
        let Ok(Some(group)) = Group::from_name(group) else {
            return None;
        };
        // Listed members, then the accounts whose primary group it is: a group made with
        // `useradd -g ops` lists nobody, and without these it would name nobody, so its
        // requests would be treated as unassigned.
        let mut members = group.mem;
        for account in primary_members(group.gid.as_raw()) {
            if !members.contains(&account) {
                members.push(account);
            }
        }
        Some(members)
    }

    fn in_group(&self, account: &str, group: &str) -> bool {
        let (Ok(Some(user)), Ok(Some(group))) = (User::from_name(account), Group::from_name(group))
        else {
            return false;
        };
        user.gid == group.gid || group.mem.contains(&user.name)
    }
}

/// How long one walk of the account database stands for it: the engine resolves a rule's
/// assignees for each request it judges, and a burst must not start a process per request.
/// An account added to a group's primary members is seen within this long.
pub const ACCOUNTS_FRESH_FOR: Duration = Duration::from_secs(60);

/// The accounts whose primary group is `gid`, from `getent passwd`: every account NSS
/// enumerates (local files, and LDAP or SSSD where they allow enumeration). A process, not
/// `getpwent`: that walk is global state in libc, unsafe beside the engine's other threads.
/// Nothing when `getent` cannot run; listed members and `in_group` still hold.
fn primary_members(gid: u32) -> Vec<String> {
    /// The last walk: when, and each account's name and primary gid.
    type Walk = (Instant, Vec<(String, u32)>);
    static WALKED: Mutex<Option<Walk>> = Mutex::new(None);
    let mut walked = WALKED.lock().unwrap_or_else(|p| p.into_inner());
    let stale = walked
        .as_ref()
        .is_none_or(|(at, _)| at.elapsed() > ACCOUNTS_FRESH_FOR);
    if stale {
        *walked = Some((Instant::now(), walk_accounts()));
    }
    walked.as_ref().map_or_else(Vec::new, |(_, accounts)| {
        accounts
            .iter()
            .filter(|(_, primary)| *primary == gid)
            .map(|(name, _)| name.clone())
            .collect()
    })
}

/// Every account's name and primary gid, as `getent passwd` lists them.
fn walk_accounts() -> Vec<(String, u32)> {
    // By its absolute path, not $PATH: who is in a group decides whether a request counts
    // as assigned to anyone, so no program planted earlier on the PATH may answer that.
    let Some(getent) = ["/usr/bin/getent", "/bin/getent"]
        .into_iter()
        .find(|path| std::path::Path::new(path).is_file())
    else {
        return Vec::new();
    };
    let listed = std::process::Command::new(getent)
        .arg("passwd")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    match listed {
        Ok(listed) if listed.status.success() => {
            parse_passwd(&String::from_utf8_lossy(&listed.stdout))
        }
        // No getent, or it failed: no primary members are listed (said in the doc above).
        _ => Vec::new(),
    }
}

/// `name:password:uid:gid:...` lines: each valid account name with its primary gid.
fn parse_passwd(text: &str) -> Vec<(String, u32)> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split(':');
            let name = fields.next()?;
            let gid = fields.nth(2)?.parse().ok()?;
            inbox_protocol::approval::is_valid_account(name).then(|| (name.to_owned(), gid))
        })
        .collect()
}

/// Who a rule assigns, as written: accounts and `@group`s, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Assign(pub Vec<String>);

/// A rule's assignees, as the account database has them now.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Assignees {
    /// Every account that may answer, named or in a named group, each once, in order.
    pub accounts: Vec<String>,
    /// Entries that name nobody: accounts that do not exist, groups that do not exist or
    /// have no members.
    pub unknown: Vec<String>,
}

impl Assign {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The accounts the entries stand for now.
    pub fn resolve(&self, directory: &dyn Directory) -> Assignees {
        let mut resolved = Assignees::default();
        for entry in &self.0 {
            let found = match entry.strip_prefix('@') {
                Some(group) => directory.group_members(group).unwrap_or_default(),
                None if directory.account_exists(entry) => vec![entry.clone()],
                None => Vec::new(),
            };
            if found.is_empty() {
                resolved.unknown.push(entry.clone());
            }
            for account in found {
                if !resolved.accounts.contains(&account) {
                    resolved.accounts.push(account);
                }
            }
        }
        resolved
    }

    /// Whether `account` is an assignee: named, or in a named group.
    pub fn includes(&self, account: &str, directory: &dyn Directory) -> bool {
        self.0.iter().any(|entry| match entry.strip_prefix('@') {
            Some(group) => directory.in_group(account, group),
            None => entry == account,
        })
    }

    /// "alice, @ops": for messages and views.
    pub fn describe(&self) -> String {
        self.0.join(", ")
    }
}

/// Whether an `assign` entry is well formed: an account name, or `@` and a group name.
pub(crate) fn well_formed(entry: &str) -> bool {
    inbox_protocol::approval::is_valid_account(entry.strip_prefix('@').unwrap_or(entry))
}

#[cfg(test)]
pub(crate) mod fake {
    use super::Directory;

    /// A directory of a few accounts and groups, for tests.
    pub struct Fake {
        pub accounts: Vec<&'static str>,
        pub groups: Vec<(&'static str, Vec<&'static str>)>,
    }

    impl Directory for Fake {
        fn account_exists(&self, name: &str) -> bool {
            self.accounts.contains(&name)
        }

        fn group_members(&self, group: &str) -> Option<Vec<String>> {
            self.groups
                .iter()
                .find(|(name, _)| *name == group)
                .map(|(_, members)| members.iter().map(|m| m.to_string()).collect())
        }
    }

    pub fn team() -> Fake {
        Fake {
            accounts: vec!["alice", "bob", "carol"],
            groups: vec![("ops", vec!["bob", "carol"]), ("empty", vec![])],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_expand_and_unknown_names_are_kept_apart() {
        let assign = Assign(vec![
            "alice".into(),
            "@ops".into(),
            "bob".into(),
            "zed".into(),
            "@empty".into(),
            "@nogroup".into(),
        ]);
        let resolved = assign.resolve(&fake::team());
        assert_eq!(resolved.accounts, ["alice", "bob", "carol"]);
        assert_eq!(resolved.unknown, ["zed", "@empty", "@nogroup"]);
        assert!(assign.includes("carol", &fake::team()));
        assert!(!assign.includes("mallory", &fake::team()));
    }

    #[test]
    fn the_system_directory_knows_root() {
        assert!(System.account_exists("root"));
        assert!(System.in_group("root", "root"), "root's primary group");
        assert!(!System.account_exists("no-such-account-anywhere"));
        assert_eq!(System.group_members("no-such-group-anywhere"), None);
        // root is root's primary group, and /etc/group lists nobody in it: the group still
        // names root.
        let members = System.group_members("root").unwrap();
        assert!(members.iter().any(|m| m == "root"), "{members:?}");
    }

    #[test]
    fn passwd_lines_give_names_and_primary_gids() {
        let text = "root:x:0:0:root:/root:/bin/bash\n\
                    alice:x:1000:1001:Alice,,,:/home/alice:/bin/bash\n\
                    broken line\n\
                    bad name:x:1:2::/:/bin/sh\n\
                    nogid:x:5:\n";
        assert_eq!(
            parse_passwd(text),
            [("root".to_owned(), 0), ("alice".to_owned(), 1001)]
        );
    }
}

#[cfg(test)]
mod parse_tests {
    use crate::{Policy, PolicyProblem};

    fn parse(text: &str) -> Result<Policy, Vec<PolicyProblem>> {
        Policy::parse_with(text, &super::fake::team())
    }

    fn problems(text: &str) -> String {
        parse(text)
            .err()
            .unwrap_or_default()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn every_team_key_is_read() {
        let policy = parse(
            "[[rule]]\nname = \"deploys\"\nassign = [\"alice\", \"@ops\"]\ntakeover = true\n\
             approvals = 2\nif_unassigned = \"hold\"\n",
        )
        .unwrap();
        let verdict = policy.verdicts()[0].clone();
        assert_eq!(verdict.assign.0, ["alice", "@ops"]);
        assert!(verdict.takeover);
        assert_eq!(verdict.approvals, 2);
        assert_eq!(verdict.if_unassigned, super::IfUnassigned::Hold);
        assert!(policy.warnings().is_empty());
        assert!(verdict
            .describe()
            .contains("assigned to alice, @ops, needs 2 approvals"));
    }

    #[test]
    fn unassigned_rules_keep_todays_defaults() {
        let policy = parse("[[rule]]\nname = \"r\"\n").unwrap();
        let verdict = policy.verdicts()[0];
        assert!(verdict.assign.is_empty() && !verdict.takeover);
        assert_eq!(verdict.approvals, 1);
        assert_eq!(verdict.if_unassigned, super::IfUnassigned::Expire);
    }

    #[test]
    fn more_approvals_than_assignees_is_refused() {
        // @ops is bob and carol; with alice that is three, and bob counts once.
        let text = "[[rule]]\nname = \"r\"\nassign = [\"alice\", \"bob\", \"@ops\"]\n\
                    approvals = 4\n";
        let said = problems(text);
        assert!(
            said.contains("line 4")
                && said
                    .contains("more approvals than the rule has assignees (3: alice, bob, carol)"),
            "{said}"
        );
        assert!(parse(&text.replace("approvals = 4", "approvals = 3")).is_ok());
        // Assignees that do not exist do not count.
        let said =
            problems("[[rule]]\nname = \"r\"\nassign = [\"alice\", \"zed\"]\napprovals = 2\n");
        assert!(said.contains("(1: alice)"), "{said}");
    }

    #[test]
    fn unknown_assignees_are_warnings() {
        let policy =
            parse("[[rule]]\nname = \"r\"\nassign = [\"zed\", \"@empty\", \"@nogroup\"]\n")
                .unwrap();
        let warnings: Vec<String> = policy.warnings().iter().map(ToString::to_string).collect();
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(
            warnings[0].contains("account \"zed\" does not exist"),
            "{warnings:?}"
        );
        assert!(warnings[1].contains("group \"empty\" does not exist or has no members"));
    }

    #[test]
    fn bad_team_keys_are_refused_with_their_line() {
        let said = problems("[[rule]]\nname = \"r\"\napprovals = 2\ntakeover = true\n");
        assert!(
            said.contains("line 3") && said.contains("approvals is about a rule's assignees"),
            "{said}"
        );
        assert!(
            said.contains("line 4") && said.contains("takeover is about"),
            "{said}"
        );
        let said = problems("[[rule]]\nname = \"r\"\nassign = []\n");
        assert!(said.contains("assign is an empty list"), "{said}");
        let said = problems("[[rule]]\nname = \"r\"\nassign = [\"al/ice\"]\n");
        assert!(
            said.contains("neither an account name nor @group"),
            "{said}"
        );
        let said = problems("[[rule]]\nname = \"r\"\nassign = \"alice\"\napprovals = 0\n");
        assert!(said.contains("from 1 to 16"), "{said}");
        let said =
            problems("[[rule]]\nname = \"r\"\nassign = \"alice\"\nif_unassigned = \"ask\"\n");
        assert!(
            said.contains("\"escalate\", \"expire\", \"hold\""),
            "{said}"
        );
    }

    #[test]
    fn a_team_policy_is_the_spool_owners_and_runs_no_program() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("team-policy.toml");
        std::fs::write(
            &path,
            "[[rule]]\nname = \"r\"\nafter = \"1m\"\nthen = \"escalate\"\n\
             [[rule.escalate]]\nafter = \"0s\"\nrun = [\"/bin/true\"]\n",
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let me = rustix::process::geteuid().as_raw();
        let error = Policy::load_team(&path, me).unwrap_err().to_string();
        assert!(error.contains("may not run programs"), "{error}");
        std::fs::write(&path, "[[rule]]\nname = \"r\"\n").unwrap();
        assert!(Policy::load_team(&path, me).is_ok());
        if me == 0 {
            // Root's file is trusted whoever owns the spool; another owner's is not.
            assert!(Policy::load_team(&path, 4242).is_ok());
            std::os::unix::fs::chown(&path, Some(4243), None).unwrap();
            let error = Policy::load_team(&path, 4242).unwrap_err().to_string();
            assert!(
                error.contains("owned by another account (uid 4243)"),
                "{error}"
            );
        }
    }
}
