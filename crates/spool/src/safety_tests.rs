//! The spool is opened safely or not at all: refusals that touch nothing, reaping that
//! never leaves the real `tmp/`, reads that refuse extra names and foreign owners, and the
//! modes of private and team spools.

use std::fs::{self, File};
use std::os::unix::fs::{chown, symlink, MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

use crate::{Area, ReadError, Spool, SpoolError, Trust, MARKER, TMP_LINKED_MAX_AGE, TMP_MAX_AGE};

const NOBODY: u32 = 65534;

fn is_root() -> bool {
    crate::accounts::current_uid() == 0
}

/// Sets a file's modification time `age` into the past.
fn age(path: &Path, age: Duration) {
    File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::now() - age)
        .unwrap();
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

const FIVE_DAYS: Duration = Duration::from_secs(5 * 24 * 3600);

#[test]
fn a_directory_with_other_files_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    fs::create_dir_all(project.join("tmp")).unwrap();
    fs::write(project.join("Cargo.toml"), b"[package]").unwrap();
    fs::write(project.join("tmp/build.o"), b"object").unwrap();
    age(&project.join("tmp/build.o"), FIVE_DAYS);

    let error = Spool::open(&project).unwrap_err();
    match &error {
        SpoolError::NotASpool { root, entry } => {
            assert_eq!(root, &project);
            assert_eq!(entry, "Cargo.toml");
        }
        other => panic!("expected NotASpool, got {other:?}"),
    }
    let message = error.to_string();
    for words in [
        "Cargo.toml",
        "is not a spool",
        "Nothing was touched",
        "new or empty",
    ] {
        assert!(message.contains(words), "{words:?} in {message}");
    }
    assert_eq!(names(&project), ["Cargo.toml", "tmp"], "nothing created");
    assert_eq!(names(&project.join("tmp")), ["build.o"], "nothing reaped");
    assert!(matches!(
        Spool::open_with(&project, Trust::Private),
        Err(SpoolError::NotASpool { .. })
    ));
    assert_eq!(names(&project), ["Cargo.toml", "tmp"]);
}

#[test]
fn a_hidden_file_or_a_stray_directory_is_enough_to_refuse() {
    let dir = tempfile::tempdir().unwrap();
    for stray in [".git", "src"] {
        let root = dir.path().join(stray.trim_start_matches('.'));
        fs::create_dir_all(root.join(stray)).unwrap();
        fs::create_dir(root.join("questions")).unwrap();
        let error = Spool::open(&root).unwrap_err();
        assert!(
            matches!(&error, SpoolError::NotASpool { entry, .. } if entry == stray),
            "{error}"
        );
        let mut expected = vec![stray, "questions"];
        expected.sort();
        assert_eq!(names(&root), expected, "nothing created");
    }
}

#[test]
fn a_new_or_empty_directory_becomes_a_spool_with_its_marker() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("a/b/new");
    Spool::open(&new).unwrap();
    assert_eq!(
        names(&new),
        [MARKER, "answers", "cancel", "questions", "tmp"]
    );

    let empty = dir.path().join("empty");
    fs::create_dir(&empty).unwrap();
    Spool::open(&empty).unwrap();
    assert!(empty.join(MARKER).is_file());
    // And it opens again, marker and all.
    Spool::open(&empty).unwrap();
}

#[test]
fn a_spool_an_asker_made_by_hand_is_still_a_spool() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("spool");
    fs::create_dir_all(root.join("questions")).unwrap();
    fs::write(root.join("questions/r1.json"), b"{}").unwrap();
    let spool = Spool::open(&root).unwrap();
    assert_eq!(names(&root), ["answers", "cancel", "questions", "tmp"]);
    assert_eq!(spool.read(Area::Questions, "r1").unwrap(), b"{}");
}

#[test]
fn a_symlinked_root_is_refused_and_its_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("elsewhere");
    fs::create_dir(&target).unwrap();
    let link = dir.path().join("spool");
    symlink(&target, &link).unwrap();

    let error = Spool::open(&link).unwrap_err();
    assert!(
        matches!(&error, SpoolError::Unsafe { path, .. } if path == &link),
        "{error:?}"
    );
    assert!(error.to_string().contains("symbolic link"), "{error}");
    assert!(
        names(&target).is_empty(),
        "nothing created through the link"
    );
    // A trailing slash does not make the link acceptable either.
    let slashed = format!("{}/", link.display());
    assert!(matches!(
        Spool::open(&slashed),
        Err(SpoolError::Unsafe { .. })
    ));
    assert!(names(&target).is_empty());
}

#[test]
fn a_symlinked_or_non_directory_subdirectory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let secrets = dir.path().join("secrets");
    fs::create_dir(&secrets).unwrap();
    fs::write(secrets.join("token.json"), b"{\"token\":\"s3cret\"}").unwrap();

    let root = dir.path().join("spool");
    fs::create_dir(&root).unwrap();
    symlink(&secrets, root.join("questions")).unwrap();
    let error = Spool::open(&root).unwrap_err();
    assert!(
        matches!(&error, SpoolError::Unsafe { path, .. } if path == &root.join("questions")),
        "{error:?}"
    );
    assert_eq!(names(&root), ["questions"], "nothing created beside it");

    let other = dir.path().join("spool2");
    fs::create_dir(&other).unwrap();
    fs::write(other.join("answers"), b"").unwrap();
    let error = Spool::open(&other).unwrap_err();
    assert!(error.to_string().contains("not a directory"), "{error}");

    let file_root = dir.path().join("file");
    fs::write(&file_root, b"x").unwrap();
    assert!(matches!(
        Spool::open(&file_root),
        Err(SpoolError::Unsafe { .. })
    ));
}

#[test]
fn reaping_never_follows_a_tmp_link() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("spool");
    let spool = Spool::open(&root).unwrap();
    let victim = dir.path().join("victim");
    fs::create_dir(&victim).unwrap();
    fs::write(victim.join("old.txt"), b"keep me").unwrap();
    age(&victim.join("old.txt"), FIVE_DAYS);

    // tmp/ swapped for a link after the spool was opened: the handle still holds the real one.
    fs::rename(root.join("tmp"), dir.path().join("real-tmp")).unwrap();
    symlink(&victim, root.join("tmp")).unwrap();
    assert_eq!(spool.reap_tmp(TMP_MAX_AGE).unwrap(), 0);
    assert!(
        victim.join("old.txt").exists(),
        "the link's target survives"
    );

    // And a spool whose tmp/ is a link is not opened at all.
    assert!(matches!(Spool::open(&root), Err(SpoolError::Unsafe { .. })));
    assert!(victim.join("old.txt").exists());
}

#[test]
fn reaping_removes_only_old_regular_files() {
    let dir = tempfile::tempdir().unwrap();
    let spool = Spool::open(dir.path().join("spool")).unwrap();
    let tmp = spool.tmp_dir();
    fs::create_dir(tmp.join("old-dir")).unwrap();
    fs::write(tmp.join("old-dir/inside"), b"x").unwrap();
    age(&tmp.join("old-dir/inside"), FIVE_DAYS);
    let outside = dir.path().join("outside.txt");
    fs::write(&outside, b"keep").unwrap();
    age(&outside, FIVE_DAYS);
    symlink(&outside, tmp.join("old-link")).unwrap();
    fs::write(tmp.join("stale.tmp"), b"x").unwrap();
    age(&tmp.join("stale.tmp"), FIVE_DAYS);
    fs::write(tmp.join("fresh.tmp"), b"x").unwrap();

    assert_eq!(spool.reap_tmp(TMP_MAX_AGE).unwrap(), 1);
    assert_eq!(names(&tmp), ["fresh.tmp", "old-dir", "old-link"]);
    assert!(
        tmp.join("old-dir/inside").exists(),
        "never into a directory"
    );
    assert!(outside.exists(), "never through a link");
}

#[test]
fn a_placement_cut_off_between_link_and_unlink_is_cleaned_up() {
    let dir = tempfile::tempdir().unwrap();
    let spool = Spool::open(dir.path().join("spool")).unwrap();
    // A writer that died after link(tmp, target), before unlink(tmp).
    let tmp = spool.tmp_dir().join("r1.123.0.0.tmp");
    fs::write(&tmp, b"{}").unwrap();
    fs::hard_link(&tmp, spool.path(Area::Questions, "r1")).unwrap();
    assert!(matches!(
        spool.read_file(Area::Questions, "r1"),
        Err(ReadError::HardLinked { links: 2 })
    ));
    assert_eq!(spool.reap_tmp(TMP_MAX_AGE).unwrap(), 0, "too young yet");
    age(&tmp, TMP_LINKED_MAX_AGE + Duration::from_secs(5));
    assert_eq!(spool.reap_tmp(TMP_MAX_AGE).unwrap(), 1);
    assert_eq!(spool.read(Area::Questions, "r1").unwrap(), b"{}");
}

#[test]
fn a_hard_linked_file_is_never_read() {
    let dir = tempfile::tempdir().unwrap();
    let spool = Spool::open(dir.path().join("spool")).unwrap();
    let secret = dir.path().join("secret.json");
    fs::write(&secret, b"{\"password\":\"hunter2\"}").unwrap();
    fs::hard_link(&secret, spool.path(Area::Questions, "secret")).unwrap();
    match spool.read_file(Area::Questions, "secret") {
        Err(error @ ReadError::HardLinked { links: 2 }) => {
            assert!(error.to_string().contains("2 hard links"), "{error}")
        }
        other => panic!("expected HardLinked, got {other:?}"),
    }
    assert!(spool.read(Area::Questions, "secret").is_err());
    // Once the extra name is gone, the file is an ordinary one.
    fs::remove_file(&secret).unwrap();
    assert!(spool.read(Area::Questions, "secret").is_ok());
}

#[test]
fn a_file_of_another_account_is_never_read_in_a_private_spool() {
    if !is_root() {
        eprintln!("skipped: giving a file to another account (chown) needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spool = Spool::open(dir.path().join("spool")).unwrap();
    let path = spool.path(Area::Questions, "foreign");
    fs::write(&path, b"{}").unwrap();
    chown(&path, Some(NOBODY), None).unwrap();
    match spool.read_file(Area::Questions, "foreign") {
        Err(error @ ReadError::ForeignOwner { uid: NOBODY, .. }) => {
            assert!(error.to_string().contains("65534"), "{error}")
        }
        other => panic!("expected ForeignOwner, got {other:?}"),
    }
    chown(&path, Some(0), None).unwrap();
    let file = spool.read_file(Area::Questions, "foreign").unwrap();
    assert_eq!((file.bytes.as_slice(), file.owner), (&b"{}"[..], 0));
}

/// Runs `f` with the umask set to `mask`, then puts the old one back.
fn with_umask<T>(mask: u32, f: impl FnOnce() -> T) -> T {
    use rustix::fs::Mode;
    let old = rustix::process::umask(Mode::from_raw_mode(mask));
    let result = f();
    rustix::process::umask(old);
    result
}

#[test]
fn a_private_spool_is_0700_and_its_files_0600_whatever_the_umask() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("spool");
    let spool = with_umask(0, || {
        let spool = Spool::open_with(&root, Trust::Private).unwrap();
        spool.place_request("r1", b"{}").unwrap();
        spool.write_outcome("r1", b"{}").unwrap();
        spool.place_tombstone("r2", "gone").unwrap();
        spool
    });
    assert_eq!(spool.trust(), Trust::Private);
    for dir in ["", "tmp", "questions", "answers", "cancel"] {
        assert_eq!(mode(&root.join(dir)), 0o700, "{dir}/");
    }
    for file in [MARKER, "questions/r1.json", "answers/r1.json", "cancel/r2"] {
        assert_eq!(mode(&root.join(file)), 0o600, "{file}");
    }
    assert!(spool.warnings().is_empty(), "{:?}", spool.warnings());
}

#[test]
fn warnings_name_the_directory_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("spool");
    let spool = Spool::open(&root).unwrap();
    fs::set_permissions(&root, fs::Permissions::from_mode(0o777)).unwrap();
    fs::set_permissions(root.join("answers"), fs::Permissions::from_mode(0o770)).unwrap();
    let warnings = spool.warnings();
    let shown = root.display().to_string();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("writable by every account")
                && w.contains(&format!("chmod 700 {shown}"))),
        "{warnings:?}"
    );
    let answers = root.join("answers").display().to_string();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("writable by the group") && w.contains(&answers)),
        "{warnings:?}"
    );
    if is_root() {
        chown(root.join("cancel"), Some(NOBODY), None).unwrap();
        let warnings = spool.warnings();
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("belongs to the account") && w.contains("65534")),
            "{warnings:?}"
        );
    }
}

#[test]
fn an_unknown_team_group_is_refused_before_anything_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("spool");
    let error = Spool::open_with(
        &root,
        Trust::Team {
            group: "no-such-team-group".into(),
        },
    )
    .unwrap_err();
    assert!(
        matches!(&error, SpoolError::UnknownGroup { group } if group == "no-such-team-group"),
        "{error:?}"
    );
    assert!(error.to_string().contains("groupadd"), "{error}");
    assert!(!root.exists());
}

/// A system group made for one test, removed when dropped.
struct TestGroup {
    name: String,
}

impl TestGroup {
    fn create() -> Option<TestGroup> {
        let name = format!("aiq{}", std::process::id());
        let made = Command::new("groupadd").arg(&name).status().ok()?.success();
        made.then_some(TestGroup { name })
    }
}

impl Drop for TestGroup {
    fn drop(&mut self) {
        let _ = Command::new("groupdel").arg(&self.name).status();
    }
}

#[test]
fn a_team_spool_is_setgid_group_readable_and_takes_members_files_only() {
    if !is_root() {
        eprintln!("skipped: making a group for the test (groupadd) needs root");
        return;
    }
    let group = TestGroup::create().expect("groupadd works as root");
    let gid = crate::accounts::group_id(&group.name).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("spool");
    let trust = Trust::Team {
        group: group.name.clone(),
    };
    // umask 077 would make 02770 into 02700: the mode is set explicitly.
    let spool = with_umask(0o077, || {
        let spool = Spool::open_with(&root, trust.clone()).unwrap();
        spool.write_outcome("r1", b"{}").unwrap();
        spool
    });
    assert_eq!(spool.trust(), trust);
    for sub in ["", "tmp", "questions", "answers", "cancel"] {
        let meta = fs::metadata(root.join(sub)).unwrap();
        assert_eq!((meta.mode() & 0o7777, meta.gid()), (0o2770, gid), "{sub}/");
    }
    for file in [MARKER, "answers/r1.json"] {
        let meta = fs::metadata(root.join(file)).unwrap();
        assert_eq!((meta.mode() & 0o7777, meta.gid()), (0o640, gid), "{file}");
    }
    assert!(spool.warnings().is_empty(), "{:?}", spool.warnings());

    // An asker's plain open follows the directory: team files, group readable.
    let asker = Spool::open(&root).unwrap();
    assert_eq!(asker.trust(), trust);
    with_umask(0o077, || asker.place_request("r2", b"{}").unwrap());
    let meta = fs::metadata(asker.path(Area::Questions, "r2")).unwrap();
    assert_eq!((meta.mode() & 0o7777, meta.gid()), (0o640, gid));

    // A member's file is read; an outsider's is not.
    assert!(Command::new("gpasswd")
        .args(["-a", "nobody", &group.name])
        .output()
        .unwrap()
        .status
        .success());
    let inbox = Spool::open_with(&root, trust.clone()).unwrap();
    let member = inbox.path(Area::Questions, "member");
    fs::write(&member, b"{}").unwrap();
    chown(&member, Some(NOBODY), None).unwrap();
    assert_eq!(
        inbox.read_file(Area::Questions, "member").unwrap().owner,
        NOBODY
    );
    let outsider = inbox.path(Area::Questions, "outsider");
    fs::write(&outsider, b"{}").unwrap();
    chown(&outsider, Some(NOBODY - 1), None).unwrap();
    assert!(matches!(
        inbox.read_file(Area::Questions, "outsider"),
        Err(ReadError::ForeignOwner { uid, .. }) if uid == NOBODY - 1
    ));
    // The same files in a private inbox: neither is read.
    let private = Spool::open_with(&root, Trust::Private).unwrap();
    assert!(matches!(
        private.read_file(Area::Questions, "member"),
        Err(ReadError::ForeignOwner { .. })
    ));
    assert!(
        private
            .warnings()
            .iter()
            .any(|w| w.contains("writable by the group")),
        "{:?}",
        private.warnings()
    );
}
