//! The failed-attempt limit over real sockets from several loopback addresses: every one of
//! 127.0.0.0/8 is this machine, so moving to another gains no new budget, and a paired
//! device is answered whatever was guessed from them.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use inbox_engine::notifier::Silent;
use inbox_engine::Trust;
use inbox_web::server::FAILURE_LIMIT;
use inbox_web::{DeviceStore, EventFeed, ServeOptions, WebServer};

/// The status of `GET /api/session` with `cookie`, sent from the loopback address `from`.
fn session_status(server: SocketAddr, from: Ipv4Addr, cookie: &str) -> u16 {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(SocketAddr::new(from.into(), 0)).unwrap();
        socket.connect(server).await.unwrap()
    });
    let mut stream = stream.into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    write!(
        stream,
        "GET /api/session HTTP/1.1\r\nHost: {server}\r\nCookie: inbox_device={cookie}\r\n\
         Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    let status = reply.split(' ').nth(1).unwrap_or_default();
    status
        .parse()
        .unwrap_or_else(|_| panic!("no status: {reply}"))
}

#[test]
fn every_loopback_address_shares_one_budget_and_a_paired_device_is_never_locked_out() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("inbox.sqlite3");
    let inbox = Arc::new(
        inbox_app::Inbox::start(
            &dir.path().join("spool"),
            &db,
            Trust::Private,
            &dir.path().join("policy.toml"),
            Box::new(Silent),
            Arc::new(|_| {}),
        )
        .unwrap(),
    );
    let devices = Arc::new(DeviceStore::open(&DeviceStore::path_beside(&db)).unwrap());
    let code = devices
        .new_pairing_code(chrono::Duration::minutes(10), chrono::Utc::now())
        .unwrap();
    let phone = devices.pair(&code, "phone", chrono::Utc::now()).unwrap();
    let options = ServeOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        tls: None,
        hosts: Vec::new(),
        public_url: None,
    };
    let server = WebServer::start(
        options,
        Arc::new(move || Arc::clone(&inbox)),
        EventFeed::new(),
        devices,
    )
    .unwrap();
    let at = server.listen();

    // One guess from each of ten loopback addresses...
    for n in 0..FAILURE_LIMIT {
        let from = Ipv4Addr::new(127, 0, 0, 2 + n as u8);
        assert_eq!(
            session_status(at, from, "guessed"),
            401,
            "a guess from {from}"
        );
    }
    // ...and an eleventh address is the same source, over its limit.
    let next = Ipv4Addr::new(127, 0, 0, 2 + FAILURE_LIMIT as u8);
    assert_eq!(
        session_status(at, next, "guessed"),
        429,
        "a guess from {next}"
    );
    assert_eq!(session_status(at, Ipv4Addr::LOCALHOST, "guessed"), 429);
    // The paired phone, from any of them, is answered.
    for from in [Ipv4Addr::LOCALHOST, Ipv4Addr::new(127, 0, 0, 2), next] {
        assert_eq!(
            session_status(at, from, &phone.token),
            200,
            "the phone from {from}"
        );
    }
    server.stop();
}
