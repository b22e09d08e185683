use std::os::unix::fs::PermissionsExt;

use super::*;
use std::sync::{Arc, Barrier};

fn store() -> (tempfile::TempDir, DeviceStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = DeviceStore::open(&dir.path().join("devices.sqlite3")).unwrap();
    (dir, store)
}

fn at(seconds: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_750_000_000 + seconds, 0).unwrap()
}

fn action() -> PendingAction {
    let mut answers = serde_json::Map::new();
    answers.insert("approve".into(), Value::Bool(true));
    PendingAction {
        request_id: "deploy-7".into(),
        version: "ab".repeat(32),
        answers,
        label: "Approve".into(),
    }
}

#[test]
fn migrations_are_valid() {
    migrations().validate().unwrap();
}

#[test]
fn the_store_is_send_and_sync() {
    fn shared<T: Send + Sync>() {}
    shared::<DeviceStore>();
}

#[test]
fn a_pairing_code_pairs_once_and_is_refused_on_replay() {
    let (_dir, store) = store();
    let code = store
        .new_pairing_code(Duration::minutes(10), at(0))
        .unwrap();
    let session = store.pair(&code, "  Phone  ", at(5)).unwrap();
    assert_eq!(session.device.name, "Phone");
    assert_eq!(session.device.created_at, at(5));

    let again = store.pair(&code, "Laptop", at(6)).unwrap_err();
    assert!(
        matches!(again, DeviceError::PairingRefused(PAIRING_USED)),
        "{again:?}"
    );
    let unknown = store.pair("not-a-code", "Laptop", at(6)).unwrap_err();
    assert!(
        matches!(unknown, DeviceError::PairingRefused(PAIRING_UNKNOWN)),
        "{unknown:?}"
    );
    assert_eq!(store.list().unwrap().len(), 1);

    let auth = store.authenticate(&session.token, at(7)).unwrap().unwrap();
    assert_eq!(auth.device.id, session.device.id);
    assert_eq!(auth.csrf, session.csrf);
    assert_ne!(session.token, session.csrf);
    assert!(store
        .authenticate("someone else's", at(7))
        .unwrap()
        .is_none());
}

#[test]
fn a_bad_name_does_not_spend_the_code() {
    let (_dir, store) = store();
    let code = store
        .new_pairing_code(Duration::minutes(10), at(0))
        .unwrap();
    assert!(matches!(
        store.pair(&code, "  ", at(1)),
        Err(DeviceError::BadName(_))
    ));
    store.pair(&code, "Phone", at(2)).unwrap();
}

#[test]
fn an_expired_pairing_code_is_refused() {
    let (_dir, store) = store();
    let code = store
        .new_pairing_code(Duration::minutes(10), at(0))
        .unwrap();
    let error = store.pair(&code, "Phone", at(600)).unwrap_err();
    assert!(
        matches!(error, DeviceError::PairingRefused(PAIRING_EXPIRED)),
        "{error:?}"
    );
    assert!(store.list().unwrap().is_empty());
    // Still expired, not unknown, for a day; gone once a new code is made after that.
    store
        .new_pairing_code(Duration::minutes(10), at(600 + 86_401))
        .unwrap();
    let later = store.pair(&code, "Phone", at(600 + 86_402)).unwrap_err();
    assert!(
        matches!(later, DeviceError::PairingRefused(PAIRING_UNKNOWN)),
        "{later:?}"
    );
}

#[test]
fn a_revoked_device_authenticates_nothing() {
    let (_dir, store) = store();
    let code = store
        .new_pairing_code(Duration::minutes(10), at(0))
        .unwrap();
    let session = store.pair(&code, "Phone", at(1)).unwrap();
    assert!(store.authenticate(&session.token, at(2)).unwrap().is_some());

    let revoked = store.revoke(&session.device.id, at(3)).unwrap();
    assert_eq!(revoked.revoked_at, Some(at(3)));
    assert!(store.authenticate(&session.token, at(4)).unwrap().is_none());
    // Revoking again keeps the first time.
    assert_eq!(
        store.revoke(&session.device.id, at(9)).unwrap().revoked_at,
        Some(at(3))
    );
    assert_eq!(store.list().unwrap(), vec![revoked]);
    assert!(matches!(
        store.revoke("nope", at(5)),
        Err(DeviceError::UnknownDevice(id)) if id == "nope"
    ));
}

#[test]
fn last_seen_is_written_at_most_once_a_minute() {
    let (_dir, store) = store();
    let code = store
        .new_pairing_code(Duration::minutes(10), at(0))
        .unwrap();
    let session = store.pair(&code, "Phone", at(0)).unwrap();
    store.authenticate(&session.token, at(10)).unwrap();
    store.authenticate(&session.token, at(50)).unwrap();
    assert_eq!(store.list().unwrap()[0].last_seen_at, Some(at(10)));
    store.authenticate(&session.token, at(70)).unwrap();
    assert_eq!(store.list().unwrap()[0].last_seen_at, Some(at(70)));
}

#[test]
fn list_is_newest_first() {
    let (_dir, store) = store();
    for (second, name) in [(1, "Old"), (2, "New")] {
        let code = store
            .new_pairing_code(Duration::minutes(10), at(0))
            .unwrap();
        store.pair(&code, name, at(second)).unwrap();
    }
    let names: Vec<_> = store.list().unwrap().into_iter().map(|d| d.name).collect();
    assert_eq!(names, ["New", "Old"]);
}

#[test]
fn rename_checks_the_name() {
    let (_dir, store) = store();
    let code = store
        .new_pairing_code(Duration::minutes(10), at(0))
        .unwrap();
    let session = store.pair(&code, "Phone", at(1)).unwrap();
    let id = &session.device.id;

    assert_eq!(store.rename(id, " Work phone ").unwrap().name, "Work phone");
    for bad in [
        "",
        "   ",
        &"x".repeat(41),
        "evil\u{202e}name",
        "tab\there",
        "zero\u{200b}width",
    ] {
        assert!(
            matches!(store.rename(id, bad), Err(DeviceError::BadName(_))),
            "{bad:?} was accepted"
        );
    }
    assert_eq!(store.list().unwrap()[0].name, "Work phone");
    assert!(matches!(
        store.rename("nope", "Phone"),
        Err(DeviceError::UnknownDevice(_))
    ));
}

#[test]
fn device_names_are_checked_and_problems_named() {
    assert_eq!(
        check_device_name("  Pixel 8 ❤\u{fe0f} ").unwrap(),
        "Pixel 8 ❤\u{fe0f}"
    );
    assert_eq!(check_device_name(&"é".repeat(40)).unwrap(), "é".repeat(40));
    let long = check_device_name(&"é".repeat(41)).unwrap_err().to_string();
    assert!(long.contains("at most 40") && long.contains("41"), "{long}");
    let empty = check_device_name("\n ").unwrap_err().to_string();
    assert!(empty.contains("empty"), "{empty}");
    let bidi = check_device_name("a\u{2066}b").unwrap_err().to_string();
    assert!(bidi.contains("\\u{2066}"), "{bidi}");
    let control = check_device_name("a\u{1b}[2Jb").unwrap_err().to_string();
    assert!(control.contains("\\u{1b}"), "{control}");
}

#[test]
fn an_action_is_redeemed_once_then_refused() {
    let (_dir, store) = store();
    let token = store.new_action(&action(), at(3600), at(0)).unwrap();
    assert_eq!(store.redeem_action(&token, at(10)).unwrap(), action());
    let again = store.redeem_action(&token, at(11)).unwrap_err();
    assert!(
        matches!(again, DeviceError::ActionRefused(ACTION_USED)),
        "{again:?}"
    );
    let unknown = store.redeem_action("made-up", at(11)).unwrap_err();
    assert!(
        matches!(unknown, DeviceError::ActionRefused(ACTION_UNKNOWN)),
        "{unknown:?}"
    );
}

#[test]
fn an_expired_action_is_refused() {
    let (_dir, store) = store();
    let token = store.new_action(&action(), at(3600), at(0)).unwrap();
    let error = store.redeem_action(&token, at(3600)).unwrap_err();
    assert!(
        matches!(error, DeviceError::ActionRefused(ACTION_EXPIRED)),
        "{error:?}"
    );
    // Refusing it did not spend it as "used": it stays expired.
    let again = store.redeem_action(&token, at(3700)).unwrap_err();
    assert!(
        matches!(again, DeviceError::ActionRefused(ACTION_EXPIRED)),
        "{again:?}"
    );
}

#[test]
fn two_connections_redeeming_one_action_get_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("devices.sqlite3");
    let first = DeviceStore::open(&path).unwrap();
    let second = DeviceStore::open(&path).unwrap();
    let token = first.new_action(&action(), at(3600), at(0)).unwrap();
    assert!(first.redeem_action(&token, at(1)).is_ok());
    assert!(matches!(
        second.redeem_action(&token, at(1)),
        Err(DeviceError::ActionRefused(ACTION_USED))
    ));
}

#[test]
fn two_threads_pairing_with_one_code_get_one_session() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("devices.sqlite3");
    let code = DeviceStore::open(&path)
        .unwrap()
        .new_pairing_code(Duration::minutes(10), at(0))
        .unwrap();
    // Each thread has its own store, so its own connection: the race is decided by the
    // database's transaction, not by the mutex inside one store.
    let stores: Vec<_> = (0..2).map(|_| DeviceStore::open(&path).unwrap()).collect();
    let start = Arc::new(Barrier::new(stores.len()));
    let results: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = stores
            .iter()
            .enumerate()
            .map(|(n, store)| {
                let start = Arc::clone(&start);
                let code = code.clone();
                scope.spawn(move || {
                    start.wait();
                    store.pair(&code, &format!("Browser {n}"), at(1))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let won = results.iter().filter(|r| r.is_ok()).count();
    let refused = results
        .iter()
        .filter(|r| matches!(r, Err(DeviceError::PairingRefused(PAIRING_USED))))
        .count();
    assert_eq!((won, refused), (1, 1), "{results:?}");
    assert_eq!(stores[0].list().unwrap().len(), 1);
}

#[test]
fn the_file_is_private() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state").join("devices.sqlite3");
    let store = DeviceStore::open(&path).unwrap();
    store.set_meta("url", "https://example:8443").unwrap();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&path.with_extension("sqlite3-wal")), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
}

#[test]
fn an_existing_readable_file_is_made_private() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("devices.sqlite3");
    std::fs::write(&path, b"").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    DeviceStore::open(&path).unwrap();
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

/// The device store decides who may answer: a link (into the spool, to another file) or a
/// file others could write is refused, and nothing behind the link is touched.
#[test]
fn a_linked_or_writable_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("elsewhere.sqlite3");
    std::fs::write(&target, b"").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
    let link = dir.path().join("devices.sqlite3");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let error = DeviceStore::open(&link).err().unwrap().to_string();
    assert!(error.contains("symbolic link"), "{error}");
    assert_eq!(
        std::fs::metadata(&target).unwrap().permissions().mode() & 0o777,
        0o644,
        "the file behind the link is not chmodded"
    );

    let writable = dir.path().join("open.sqlite3");
    std::fs::write(&writable, b"").unwrap();
    std::fs::set_permissions(&writable, std::fs::Permissions::from_mode(0o666)).unwrap();
    let error = DeviceStore::open(&writable).err().unwrap().to_string();
    assert!(error.contains("chmod 600"), "{error}");
}

#[test]
fn a_store_that_cannot_be_opened_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("devices.sqlite3");
    std::fs::write(
        &path,
        b"this is not a database, and it is long enough to tell",
    )
    .unwrap();
    let error = DeviceStore::open(&path).err().unwrap().to_string();
    assert!(error.contains(&path.display().to_string()), "{error}");
}

#[test]
fn the_file_holds_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("devices.sqlite3");
    let store = DeviceStore::open(&path).unwrap();
    let code = store
        .new_pairing_code(Duration::minutes(10), at(0))
        .unwrap();
    let unused_code = store
        .new_pairing_code(Duration::minutes(10), at(0))
        .unwrap();
    let session = store.pair(&code, "Phone", at(1)).unwrap();
    let action_token = store.new_action(&action(), at(3600), at(0)).unwrap();
    let unused_action = store.new_action(&action(), at(3600), at(0)).unwrap();
    store.redeem_action(&action_token, at(2)).unwrap();

    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend(std::fs::read(path.with_extension("sqlite3-wal")).unwrap_or_default());
    let holds = |needle: &str| bytes.windows(needle.len()).any(|w| w == needle.as_bytes());
    // The search sees the rows: the hashes and the plain CSRF token are there.
    assert!(holds(&secret_hash(&session.token)));
    assert!(holds(&session.csrf));
    for secret in [
        &code,
        &unused_code,
        &session.token,
        &action_token,
        &unused_action,
    ] {
        assert!(!holds(secret), "the file holds a secret");
    }
}

#[test]
fn meta_is_set_and_replaced() {
    let (_dir, store) = store();
    assert_eq!(store.meta("url").unwrap(), None);
    store.set_meta("url", "http://a").unwrap();
    store.set_meta("url", "https://b").unwrap();
    assert_eq!(store.meta("url").unwrap().as_deref(), Some("https://b"));
}

#[test]
fn secrets_are_32_random_bytes_base64url() {
    let one = new_secret().unwrap();
    assert_eq!(URL_SAFE_NO_PAD.decode(&one).unwrap().len(), 32);
    assert_eq!(one.len(), 43);
    assert_ne!(one, new_secret().unwrap());
}

#[test]
fn the_default_file_is_beside_the_database() {
    assert_eq!(
        DeviceStore::path_beside(Path::new("/state/inbox.sqlite3")),
        Path::new("/state/devices.sqlite3")
    );
}
