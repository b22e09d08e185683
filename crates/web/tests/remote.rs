//! The desktop app's "Answer from other devices", on a real inbox (spool, database, loop) and
//! a real listening socket: switched on and off by settings, a port in use reported rather
//! than failed on, pairing links with QR codes, devices revoked.

use std::net::TcpListener;
use std::sync::Arc;

use inbox_app::{Inbox, RemoteSettings};
use inbox_engine::notifier::{NotifierSlot, Silent};
use inbox_engine::Trust;
use inbox_web::{EventFeed, Remote};

struct Fixture {
    dir: tempfile::TempDir,
    remote: Remote,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let inbox = Arc::new(
        Inbox::start(
            &dir.path().join("spool"),
            &dir.path().join("inbox.sqlite3"),
            Trust::Private,
            &dir.path().join("policy.toml"),
            Box::new(Silent),
            Arc::new(|_| {}),
        )
        .unwrap(),
    );
    let remote = Remote::new(
        Arc::new(move || Arc::clone(&inbox)),
        EventFeed::new(),
        NotifierSlot::default(),
        dir.path().to_owned(),
    );
    Fixture { dir, remote }
}

fn on(listen: &str) -> RemoteSettings {
    RemoteSettings {
        enabled: true,
        listen: listen.to_owned(),
        ..RemoteSettings::default()
    }
}

#[test]
fn it_runs_only_while_switched_on_and_pairs_with_a_link_and_a_qr_code() {
    let fx = fixture();
    let off = fx.remote.apply(&RemoteSettings::default());
    assert!(!off.running);
    assert!(fx.remote.pair().is_err(), "no pairing while off");

    let view = fx.remote.apply(&on("127.0.0.1:0"));
    assert!(view.running, "{view:?}");
    let url = view.url.clone().unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert!(view.reach.unwrap().contains("this machine only"));
    assert_eq!(view.fingerprint, None, "plain HTTP on loopback");

    let pairing = fx.remote.pair().unwrap();
    assert!(
        pairing.link.starts_with(&format!("{url}/#pair=")),
        "{}",
        pairing.link
    );
    assert!(pairing.qr_svg.contains("<svg"));

    // The same settings again leave the server alone (same URL, same port).
    assert_eq!(fx.remote.apply(&on("127.0.0.1:0")).url.unwrap(), url);

    let off = fx.remote.apply(&RemoteSettings::default());
    assert!(!off.running);
    let port = url.rsplit(':').next().unwrap();
    assert!(
        TcpListener::bind(format!("127.0.0.1:{port}")).is_ok(),
        "the port is free again once switched off"
    );
}

#[test]
fn a_port_in_use_is_reported_as_the_problem_not_an_error() {
    let fx = fixture();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let listen = taken.local_addr().unwrap().to_string();
    let view = fx.remote.apply(&on(&listen));
    assert!(!view.running);
    let problem = view.problem.unwrap();
    assert!(problem.contains(&listen), "{problem}");
}

#[test]
fn a_bad_ntfy_topic_keeps_the_server_off_and_says_why() {
    let fx = fixture();
    let settings = RemoteSettings {
        ntfy_topic: "ftp://example.org/topic".into(),
        ..on("127.0.0.1:0")
    };
    let view = fx.remote.apply(&settings);
    assert!(!view.running);
    assert!(view.problem.unwrap().contains("ftp"));
}

#[test]
fn off_loopback_it_serves_tls_with_a_certificate_kept_beside_the_database() {
    let fx = fixture();
    let view = fx.remote.apply(&on("0.0.0.0:0"));
    assert!(view.running, "{view:?}");
    assert!(view.url.unwrap().starts_with("https://"));
    let fingerprint = view.fingerprint.unwrap();
    assert_eq!(fingerprint.split(':').count(), 32, "{fingerprint}");
    assert!(fx.dir.path().join("serve-cert.pem").exists());
    let link = fx.remote.pair().unwrap().link;
    assert!(link.contains(&format!("&fp={fingerprint}")), "{link}");
}

#[test]
fn devices_are_listed_renamed_and_revoked() {
    let fx = fixture();
    fx.remote.apply(&on("127.0.0.1:0"));
    let store = inbox_web::DeviceStore::open(&fx.dir.path().join("devices.sqlite3")).unwrap();
    let code = fx.remote.pair().unwrap().link;
    let code = code.split("#pair=").nth(1).unwrap();
    let session = store.pair(code, "Phone", chrono::Utc::now()).unwrap();

    let view = fx.remote.view();
    assert_eq!(view.devices.len(), 1);
    assert_eq!(view.devices[0].name, "Phone");

    let view = fx
        .remote
        .rename_device(&session.device.id, "Work phone")
        .unwrap();
    assert_eq!(view.devices[0].name, "Work phone");
    assert!(fx
        .remote
        .rename_device(&session.device.id, "bad\u{202e}name")
        .is_err());

    let view = fx.remote.revoke_device(&session.device.id).unwrap();
    assert!(view.devices[0].revoked_at.is_some());
    assert!(store
        .authenticate(&session.token, chrono::Utc::now())
        .unwrap()
        .is_none());
    assert!(fx.remote.revoke_device("no-such-device").is_err());
}
