//! Who is who: the accounts and groups a spool's trust decisions are about.
//!
//! Names come from the system's account database (NSS: `/etc/passwd`, `/etc/group`, LDAP,
//! ...) through `nix`, so a spool on a machine with directory-service accounts sees the same
//! names `id` and `ls -l` show. Every lookup can fail or find nothing (an account deleted
//! since it wrote a file); callers then fall back to the number.

use nix::unistd::{Gid, Group, Uid, User};

/// The effective uid of this process: the account whose files a private spool accepts.
pub fn current_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The name of the account this process runs as, or its uid as text when it has no name.
pub fn current_account() -> String {
    let uid = current_uid();
    account_name(uid).unwrap_or_else(|| uid.to_string())
}

/// The name of the account `uid`, if the account database knows it.
pub fn account_name(uid: u32) -> Option<String> {
    User::from_uid(Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(|user| user.name)
}

/// The name of the group `gid`, if the account database knows it.
pub fn group_name(gid: u32) -> Option<String> {
    Group::from_gid(Gid::from_raw(gid))
        .ok()
        .flatten()
        .map(|group| group.name)
}

/// The gid of the group called `name`, if there is one. A name made of digits only that
/// names no group is taken as a gid, as `chgrp` does.
pub fn group_id(name: &str) -> Option<u32> {
    match Group::from_name(name) {
        Ok(Some(group)) => Some(group.gid.as_raw()),
        _ => name
            .parse::<u32>()
            .ok()
            .filter(|&gid| group_name(gid).is_some()),
    }
}

/// Whether the account `uid` belongs to the group `gid`: as its primary group, or listed as
/// a member. An account the database does not know belongs to no group.
pub fn is_member(uid: u32, gid: u32) -> bool {
    let Ok(Some(user)) = User::from_uid(Uid::from_raw(uid)) else {
        return false;
    };
    if user.gid.as_raw() == gid {
        return true;
    }
    match Group::from_gid(Gid::from_raw(gid)) {
        Ok(Some(group)) => group.mem.contains(&user.name),
        _ => false,
    }
}

/// `name (uid N)`, or `uid N` for an account without a name: how messages name an owner.
pub fn describe_account(uid: u32) -> String {
    match account_name(uid) {
        Some(name) => format!("{name} (uid {uid})"),
        None => format!("uid {uid}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_account_has_a_name_or_a_number() {
        let name = current_account();
        assert!(!name.is_empty());
        assert_eq!(
            account_name(current_uid()).unwrap_or(current_uid().to_string()),
            name
        );
    }

    #[test]
    fn root_is_known_and_an_unknown_uid_is_not() {
        assert_eq!(account_name(0).as_deref(), Some("root"));
        assert_eq!(group_id("root"), Some(0));
        assert!(is_member(0, 0), "root's primary group");
        assert_eq!(account_name(4_000_000_000), None);
        assert!(!is_member(4_000_000_000, 0));
        assert_eq!(group_id("no-such-group-anywhere"), None);
        assert_eq!(describe_account(4_000_000_000), "uid 4000000000");
    }
}
