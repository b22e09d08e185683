//! Who may write into a spool and who may read it: the file-level half of the trust model.
//!
//! - [`Trust::Private`] (the default): the spool belongs to one account. Directories are
//!   0700 and files 0600 whatever the umask, and a file is read only if that account owns
//!   it: another account's file is a problem, never content.
//! - [`Trust::Team`]: several operators' inboxes share one spool through a group. The
//!   directories are setgid and group-owned (02770), files are group-readable (0640) with
//!   the group set explicitly (setgid does not propagate on every filesystem, e.g. sshfs),
//!   and a file is read only if its owner belongs to the group.
//!
//! The modes are enforced on what this process creates; what already exists is never
//! changed, only warned about ([`crate::Spool::warnings`]).

use std::collections::HashMap;
use std::os::fd::AsFd;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustix::fs::{Gid, Mode};

use crate::accounts;
use crate::error::SpoolError;
use crate::facts::{Facts, SETGID};

/// Who a spool is for. See the module docs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Trust {
    /// One account: files of other accounts are refused.
    #[default]
    Private,
    /// The members of `group` (a group name, or a gid as digits).
    Team { group: String },
}

/// How long a team member check is remembered: a scan of thousands of files asks the
/// account database once per owner, and a change of membership is seen within a minute.
const MEMBERSHIP_TTL: Duration = Duration::from_secs(60);

/// A [`Trust`] resolved to numbers, with what this process needs to apply it.
#[derive(Debug)]
pub(crate) enum Policy {
    Private {
        uid: u32,
    },
    Team {
        group: String,
        gid: u32,
        members: Mutex<HashMap<u32, (bool, Instant)>>,
    },
}

impl Policy {
    /// Resolves the group of a team spool; an unknown group is an error naming it.
    pub(crate) fn resolve(trust: &Trust) -> Result<Policy, SpoolError> {
        match trust {
            Trust::Private => Ok(Policy::private()),
            Trust::Team { group } => match accounts::group_id(group) {
                Some(gid) => Ok(Policy::team(group.clone(), gid)),
                None => Err(SpoolError::UnknownGroup {
                    group: group.clone(),
                }),
            },
        }
    }

    pub(crate) fn private() -> Policy {
        Policy::Private {
            uid: accounts::current_uid(),
        }
    }

    pub(crate) fn team(group: String, gid: u32) -> Policy {
        Policy::Team {
            group,
            gid,
            members: Mutex::new(HashMap::new()),
        }
    }

    /// The policy an asker follows in an existing spool: a team directory (setgid, group
    /// rwx) gets team files, so the group's inboxes can read them; anything else private.
    pub(crate) fn detect(root: &Facts) -> Policy {
        if is_team_dir(root) {
            let group = accounts::group_name(root.gid).unwrap_or_else(|| root.gid.to_string());
            Policy::team(group, root.gid)
        } else {
            Policy::private()
        }
    }

    pub(crate) fn trust(&self) -> Trust {
        match self {
            Policy::Private { .. } => Trust::Private,
            Policy::Team { group, .. } => Trust::Team {
                group: group.clone(),
            },
        }
    }

    pub(crate) fn dir_mode(&self) -> u32 {
        match self {
            Policy::Private { .. } => 0o700,
            Policy::Team { .. } => 0o2770,
        }
    }

    /// The mode of a missing directory above the spool that opening it creates: private
    /// for a private spool (it is the operator's data directory); a team's members must
    /// pass through it to reach their spool, and nobody but its owner may write it.
    pub(crate) fn parent_mode(&self) -> u32 {
        match self {
            Policy::Private { .. } => crate::locations::PRIVATE_DIR_MODE,
            Policy::Team { .. } => 0o755,
        }
    }

    pub(crate) fn file_mode(&self) -> u32 {
        match self {
            Policy::Private { .. } => 0o600,
            Policy::Team { .. } => 0o640,
        }
    }

    fn gid(&self) -> Option<u32> {
        match self {
            Policy::Private { .. } => None,
            Policy::Team { gid, .. } => Some(*gid),
        }
    }

    /// Gives a directory or file this process just created its group and mode, whatever
    /// the umask and whether or not the filesystem honours setgid. The group first: a
    /// change of owner may clear the setgid bit.
    pub(crate) fn apply(&self, fd: impl AsFd, mode: u32, current: &Facts) -> std::io::Result<()> {
        let mut regrouped = false;
        if let Some(gid) = self.gid() {
            if current.gid != gid {
                rustix::fs::fchown(&fd, None, Some(Gid::from_raw(gid)))?;
                regrouped = true;
            }
        }
        // Usually the umask left the mode as asked: one system call saved per file.
        if regrouped || current.mode != mode {
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))?;
        }
        Ok(())
    }

    /// Whether a file owned by `uid` may be read as content.
    pub(crate) fn allows(&self, uid: u32) -> bool {
        match self {
            Policy::Private { uid: own } => uid == *own,
            Policy::Team { gid, members, .. } => {
                if uid == accounts::current_uid() {
                    return true;
                }
                let now = Instant::now();
                let mut cache = members.lock().unwrap_or_else(|e| e.into_inner());
                match cache.get(&uid) {
                    Some(&(member, at)) if now.duration_since(at) < MEMBERSHIP_TTL => member,
                    _ => {
                        let member = accounts::is_member(uid, *gid);
                        cache.insert(uid, (member, now));
                        member
                    }
                }
            }
        }
    }

    /// What is unsafe about a spool directory, in words a person acts on.
    pub(crate) fn warnings(&self, path: &Path, facts: &Facts) -> Vec<String> {
        let shown = path.display();
        let mut warnings = Vec::new();
        let fix = match self {
            Policy::Private { .. } => format!("chmod 700 {shown}"),
            Policy::Team { group, .. } => format!("chgrp {group} {shown} && chmod 2770 {shown}"),
        };
        if facts.mode & 0o002 != 0 {
            warnings.push(format!(
                "{shown} is writable by every account on this machine (mode {:04o}): anyone \
                 can place, replace or delete requests and answers there. Run: {fix}",
                facts.mode
            ));
        }
        match self {
            Policy::Private { uid } => {
                if facts.mode & 0o020 != 0 {
                    let group =
                        accounts::group_name(facts.gid).unwrap_or_else(|| facts.gid.to_string());
                    warnings.push(format!(
                        "{shown} is writable by the group {group} (mode {:04o}), but this inbox \
                         is private: the group's members can place or delete files there, and \
                         their requests are refused. Run: {fix} (or use team mode for a \
                         shared spool)",
                        facts.mode
                    ));
                }
                if facts.uid != *uid {
                    warnings.push(format!(
                        "{shown} belongs to the account {}, not to {}: that account can \
                         change what this inbox reads. Use a spool of your own (the default \
                         location, or --spool DIR), or run: chown {} {shown}",
                        accounts::describe_account(facts.uid),
                        accounts::current_account(),
                        accounts::current_account(),
                    ));
                }
            }
            Policy::Team { group, gid, .. } => {
                if facts.gid != *gid || !is_team_dir(facts) {
                    let actual =
                        accounts::group_name(facts.gid).unwrap_or_else(|| facts.gid.to_string());
                    warnings.push(format!(
                        "{shown} is not a team directory of the group {group} (it belongs to \
                         the group {actual}, mode {:04o}): the team's other operators may not \
                         be able to read or write it. Run: {fix}",
                        facts.mode
                    ));
                }
            }
        }
        warnings
    }
}

/// A directory set up for a team: setgid, and readable, writable and searchable by its group.
fn is_team_dir(facts: &Facts) -> bool {
    facts.mode & (SETGID | 0o070) == SETGID | 0o070
}
