//! Who may withdraw a request, as an asker sees it: only the account that placed it, as the
//! inbox decides. A team member's tombstone on another's request leaves it pending in every
//! inbox, so the asker must not take it for a withdrawal and stop waiting.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use inbox_client::{AskOptions, Asker, Reply};
use inbox_spool::Area;

use crate::accounts;

const REQUEST: &str =
    r#"{"inbox": 1, "questions": [{"id": "go", "type": "confirm", "question": "Deploy?"}]}"#;

#[test]
fn only_the_placers_tombstone_ends_a_wait() {
    let crew = match accounts::crew() {
        Ok(crew) => crew,
        Err(why) => {
            eprintln!("SKIPPED: tombstones of other accounts need other accounts ({why})");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("spool");
    std::fs::create_dir(&root).unwrap();
    std::os::unix::fs::chown(&root, None, Some(crew.gid)).unwrap();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o2770)).unwrap();
    let asker = Asker::open(&root).unwrap();
    let [ann, bob] = crew.members;
    let give = |area: Area, id: &str, uid: u32| {
        std::os::unix::fs::chown(asker.spool().path(area, id), Some(uid), None).unwrap();
    };
    let look = AskOptions::default().with_timeout(Duration::ZERO);

    // Ann's request, and Bob's tombstone on it: still pending.
    asker.place(REQUEST, Some("anns")).unwrap();
    give(Area::Questions, "anns", ann);
    asker.spool().place_tombstone("anns", "not needed").unwrap();
    give(Area::Cancel, "anns", bob);
    let got = asker.wait("anns", &look).unwrap();
    assert!(
        matches!(got, Reply::TimedOut { .. }),
        "Bob's tombstone ended the wait for Ann's request: {got:?}"
    );

    // Ann's own tombstone withdraws it.
    give(Area::Cancel, "anns", ann);
    let got = asker.wait("anns", &look).unwrap();
    assert!(
        matches!(&got, Reply::CancelledByAsker { reason, .. } if reason.as_deref() == Some("not needed")),
        "{got:?}"
    );
}
