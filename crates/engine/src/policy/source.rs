//! Where the operator's policy comes from, and noticing when it changes.
//!
//! The policy is a TOML file in the XDG config dir (`inbox_policy`'s language), shared by
//! the CLI and the app. Without the file, the shipped policy applies. A broken file never
//! means "allow everything": the last good policy stays, or, when there never was one,
//! every request is held for a person ([`Policy::hold_everything`]); either way the
//! trouble is reported until the file is fixed.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use inbox_policy::{LoadError, Policy};

/// What a file's change looks like without reading it: modification time, size, inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    inode: u64,
}

fn stamp_of(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some(Stamp {
        modified: meta.modified().ok(),
        len: meta.len(),
        inode: meta.ino(),
    })
}

/// What a refresh found.
#[derive(Debug, Clone, PartialEq)]
pub enum PolicyChange {
    /// A new policy is in force (the file was created, changed or removed).
    Changed {
        /// Where it came from: the file, or "the shipped policy".
        origin: String,
        digest: String,
        rules: Vec<String>,
    },
    /// The file is broken; the policy in force (named) stays.
    Broken { message: String },
}

/// The policy in force and the file it comes from.
#[derive(Debug, Clone)]
pub struct PolicySource {
    /// `None`: the shipped policy, and no file is looked at (tests, benchmarks).
    path: Option<PathBuf>,
    current: Policy,
    /// The file as last looked at (`None`: there was none).
    stamp: Option<Stamp>,
    /// Set while the file is broken: what is wrong and what stands instead.
    trouble: Option<String>,
    /// For a team's policy file (docs/TEAMS.md): the spool owner's uid, whose file (or
    /// root's) alone it may be.
    team_owner: Option<u32>,
}

impl PolicySource {
    /// The shipped policy, with no file behind it.
    pub fn shipped() -> PolicySource {
        PolicySource {
            path: None,
            current: Policy::shipped(),
            stamp: None,
            trouble: None,
            team_owner: None,
        }
    }

    /// A fixed policy with no file behind it (tests).
    pub fn fixed(policy: Policy) -> PolicySource {
        PolicySource {
            path: None,
            current: policy,
            stamp: None,
            trouble: None,
            team_owner: None,
        }
    }

    /// The policy in the file at `path` (the shipped policy while there is no file).
    /// A broken file holds every request for a person until it is fixed; see
    /// [`PolicySource::trouble`].
    pub fn file(path: &Path) -> PolicySource {
        let mut source = PolicySource {
            path: Some(path.to_owned()),
            current: Policy::hold_everything(),
            stamp: None,
            trouble: None,
            team_owner: None,
        };
        source.load(true);
        source
    }

    /// The team's policy file at `path` (`<spool>/team-policy.toml`), which only `owner`
    /// (the spool's owner) or root may have written; every member's inbox judges by it.
    pub fn team(path: &Path, owner: u32) -> PolicySource {
        let mut source = PolicySource {
            path: Some(path.to_owned()),
            current: Policy::hold_everything(),
            stamp: None,
            trouble: None,
            team_owner: Some(owner),
        };
        source.load(true);
        source
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn current(&self) -> &Policy {
        &self.current
    }

    /// What is wrong with the file, and what stands instead, while it is broken.
    pub fn trouble(&self) -> Option<&str> {
        self.trouble.as_deref()
    }

    /// Looks at the file again (a `stat`, and a read only when it changed).
    pub fn refresh(&mut self) -> Option<PolicyChange> {
        let path = self.path.as_ref()?;
        let stamp = stamp_of(path);
        if stamp == self.stamp && (stamp.is_some() || self.trouble.is_none()) {
            return None;
        }
        self.load(false)
    }

    fn load(&mut self, first: bool) -> Option<PolicyChange> {
        let path = self.path.clone()?;
        self.stamp = stamp_of(&path);
        let loaded = match self.team_owner {
            Some(owner) => Policy::load_team(&path, owner),
            None => Policy::load(&path),
        };
        let (loaded, origin) = match loaded {
            Ok(policy) => (Ok(policy), path.display().to_string()),
            // A team's file that went away is no reason to judge by less: a member could
            // remove it (the spool's root is the team's to write), so it is a broken file.
            Err(LoadError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound && self.team_owner.is_none() =>
            {
                (Ok(Policy::shipped()), "the shipped policy".to_owned())
            }
            Err(error) => (Err(error), String::new()),
        };
        match loaded {
            Ok(policy) => {
                self.trouble = None;
                if !first && policy.digest() == self.current.digest() {
                    return None;
                }
                let change = PolicyChange::Changed {
                    origin,
                    digest: policy.digest().to_owned(),
                    rules: policy.rule_names().into_iter().map(str::to_owned).collect(),
                };
                self.current = policy;
                Some(change)
            }
            Err(error) => {
                let stands = if first {
                    "every request is held for a person until it is fixed"
                } else {
                    "the last good policy stays in force until it is fixed"
                };
                let message = format!("the policy file is broken; {stands}: {error}");
                if self.trouble.as_deref() == Some(message.as_str()) {
                    return None;
                }
                self.trouble = Some(message.clone());
                Some(PolicyChange::Broken { message })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_file_is_the_shipped_policy_and_a_broken_one_never_allows_everything() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.toml");
        let mut source = PolicySource::file(&path);
        assert_eq!(source.current().digest(), Policy::shipped().digest());
        assert!(source.trouble().is_none());
        assert_eq!(source.refresh(), None, "nothing changed");

        std::fs::write(&path, "[[rule]]\nname = \"x\"\nautonomous = \"honour\"\n").unwrap();
        assert!(
            matches!(source.refresh(), Some(PolicyChange::Changed { rules, .. }) if rules == ["x"])
        );

        std::fs::write(&path, "[[rule]]\nname = \"x\"\nbogus = 1\n").unwrap();
        let Some(PolicyChange::Broken { message }) = source.refresh() else {
            panic!("a broken file is reported")
        };
        assert!(message.contains("last good policy"), "{message}");
        assert!(message.contains("line 3"), "{message}");
        assert_eq!(
            source.current().rule_names(),
            ["x"],
            "the last good one stays"
        );

        // Broken from the start: everything waits for a person.
        let held = PolicySource::file(&path);
        assert!(held.trouble().unwrap().contains("held for a person"));
        assert_eq!(held.current().digest(), Policy::hold_everything().digest());

        std::fs::remove_file(&path).unwrap();
        assert!(
            matches!(source.refresh(), Some(PolicyChange::Changed { origin, .. }) if origin == "the shipped policy")
        );
        assert!(source.trouble().is_none());
    }

    /// Another account that may write the policy's folder removes the operator's stricter
    /// file: that is a broken file (the last good policy stays), never the shipped one.
    #[test]
    fn a_file_removed_from_a_folder_others_may_write_is_no_reason_for_the_shipped_policy() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("answer-inbox");
        std::fs::create_dir(&folder).unwrap();
        let path = folder.join("policy.toml");
        std::fs::write(&path, "[[rule]]\nname = \"strict\"\n").unwrap();
        let mut source = PolicySource::file(&path);
        assert_eq!(source.current().rule_names(), ["strict"]);

        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::remove_file(&path).unwrap();
        let Some(PolicyChange::Broken { message }) = source.refresh() else {
            panic!(
                "the shipped policy took over: {:?}",
                source.current().rule_names()
            )
        };
        assert!(message.contains(&folder.display().to_string()), "{message}");
        assert_eq!(source.current().rule_names(), ["strict"]);
        // Started so: every request waits for a person.
        let held = PolicySource::file(&path);
        assert_eq!(held.current().digest(), Policy::hold_everything().digest());
    }
}
