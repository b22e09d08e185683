//! `serve`: the inbox's page for other devices, with the engine's loop running here. The
//! server, the pairing and the API are inbox-web's; this wires them to the same `Inbox` the
//! desktop app runs, with desktop notifications and (optionally) ntfy pushes, and prints
//! the pairing link for a first device.

use std::io::Write;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use inbox_app::{Inbox, UiEvent};
use inbox_engine::inbox_policy::capped_read;
use inbox_engine::notifier::{Fanout, Notifier};
use inbox_notifications::ntfy::{NtfyConfig, NtfyPublisher};
use inbox_notifications::Notifications;
use inbox_web::{DeviceStore, EventFeed, ServeOptions, WebServer};

use crate::args::{LocationArgs, ServeArgs};
use crate::locations;

const APP_NAME: &str = "Answer Inbox";

pub fn run(location: &LocationArgs, args: &ServeArgs) -> Result<u8> {
    let (shutdown_tx, shutdown) = crossbeam_channel::bounded::<()>(1);
    ctrlc::set_handler(move || {
        let _ = shutdown_tx.try_send(());
    })
    .context("cannot install the SIGINT/SIGTERM handler")?;

    let spool = locations::spool_path(location)?;
    let db = locations::db_path(location)?;
    let devices = Arc::new(DeviceStore::open(&DeviceStore::path_beside(&db))?);
    let tls = if args.tls || !args.listen.ip().is_loopback() {
        let dir = db
            .parent()
            .context("the database path has no directory for the certificate")?;
        Some(inbox_web::tls::load_or_make(
            dir,
            &inbox_web::server::certificate_names(args.listen, &args.hosts),
        )?)
    } else {
        None
    };
    let options = ServeOptions {
        listen: args.listen,
        tls,
        hosts: args.hosts.clone(),
        public_url: args.public_url.clone(),
    };
    let listening = WebServer::bind(options, Arc::clone(&devices))?;

    let mut notifiers: Vec<Box<dyn Notifier>> = Vec::new();
    if !args.no_notify {
        match Notifications::builder(APP_NAME).start() {
            Ok(notifications) => notifiers.push(Box::new(notifications)),
            Err(error) => tracing::warn!("desktop notifications are off: {error}"),
        }
    }
    if let Some(topic) = &args.ntfy {
        let config = NtfyConfig::parse(topic, ntfy_token(args)?, args.ntfy_titles_only)?;
        eprintln!(
            "publishing new requests to ntfy topic {} on {}{}",
            config.topic(),
            config.server_url(),
            if args.ntfy_titles_only {
                " (titles only)"
            } else {
                " (title, who asks and the question leave this machine; --ntfy-titles-only sends titles only)"
            }
        );
        notifiers.push(Box::new(NtfyPublisher::start(config, listening.links())?));
    }

    let feed = EventFeed::new();
    // Standard output is the log, and its first line is `open: <link>` (scripts read it):
    // what the loop says before the link exists is held, then logged after it.
    let held: Arc<Mutex<Option<Vec<UiEvent>>>> = Arc::new(Mutex::new(Some(Vec::new())));
    let sink = {
        let (feed, held) = (feed.clone(), Arc::clone(&held));
        Arc::new(move |event: UiEvent| {
            match held.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
                Some(early) => early.push(event.clone()),
                None => log_event(&event),
            }
            feed.send(event);
        })
    };
    let inbox = Arc::new(
        Inbox::start(
            &spool,
            &db,
            locations::trust(location),
            &locations::policy_path(location)?,
            Box::new(Fanout(notifiers)),
            sink,
        )
        .map_err(|e| anyhow::anyhow!(e.message))?,
    );
    let source = {
        let inbox = Arc::clone(&inbox);
        Arc::new(move || Arc::clone(&inbox))
    };
    let server = listening.serve(source, feed)?;
    eprintln!(
        "serving {} (db {}) at {}",
        spool.display(),
        db.display(),
        server.url()
    );
    eprintln!("{}", server.who_can_reach());
    if let Some(fingerprint) = server.fingerprint() {
        eprintln!("certificate fingerprint (SHA-256): {fingerprint}");
    }
    let link = server.pairing_link()?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "open: {link}")?;
    stdout.flush()?;
    drop(stdout);
    let early = held.lock().unwrap_or_else(|p| p.into_inner()).take();
    early
        .into_iter()
        .flatten()
        .for_each(|event| log_event(&event));
    if !args.no_qr {
        // On standard error: standard output is the log, its first line `open: <link>`.
        eprint!("{}", terminal_qr(&link)?);
    }
    eprintln!("open the link on the device to pair (once, within 10 minutes, or scan the code); `answer-inbox devices pair` makes another");

    let _ = shutdown.recv();
    server.stop();
    drop(inbox);
    eprintln!("stopped");
    Ok(0)
}

/// The pairing link as a QR code drawn with half blocks (two rows of modules a line), light
/// on dark as a phone reads it from a terminal of either background: the quiet zone is drawn
/// light too.
fn terminal_qr(link: &str) -> Result<String> {
    use qrcode::render::unicode::Dense1x2;
    let code = qrcode::QrCode::with_error_correction_level(link, qrcode::EcLevel::L)
        .context("the pairing link is too long for a QR code")?;
    let mut drawn = code
        .render::<Dense1x2>()
        .dark_color(Dense1x2::Light)
        .light_color(Dense1x2::Dark)
        .build();
    drawn.push('\n');
    Ok(drawn)
}

/// The largest ntfy token file read: a token is a few dozen characters (`tk_` and 29
/// more), so 64 KiB is room for any token and its comments, not for a runaway file.
const MAX_TOKEN_BYTES: u64 = 64 * 1024;

/// The token for a protected ntfy topic: the file given, or ANSWER_INBOX_NTFY_TOKEN.
fn ntfy_token(args: &ServeArgs) -> Result<Option<String>> {
    if let Some(file) = &args.ntfy_token_file {
        // A plain file only, opened without blocking, at most MAX_TOKEN_BYTES
        // (inbox_policy::capped_read): a FIFO there must not stall the server's start.
        let token = capped_read::read_text(file, MAX_TOKEN_BYTES).map_err(|error| {
            anyhow::anyhow!(
                "cannot read the ntfy token file {}: {}",
                file.display(),
                error.problem()
            )
        })?;
        return Ok(Some(token.trim().to_owned()));
    }
    Ok(std::env::var("ANSWER_INBOX_NTFY_TOKEN")
        .ok()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty()))
}

/// One line per change on standard output, flushed at once (a log, a test reads it).
fn log_event(event: &UiEvent) {
    let line = match event {
        UiEvent::Changed { pending, .. } => format!("changed: {pending} pending"),
        UiEvent::Settled {
            id,
            status,
            answered_by,
        } => format!("settled {id}: {status} by {answered_by}"),
        UiEvent::Cancelled { id } => format!("cancelled {id}"),
        UiEvent::Error { message } => format!("error: {message}"),
        UiEvent::Policy { trouble: Some(t) } => format!("policy trouble: {t}"),
        UiEvent::Policy { trouble: None } => "policy in force".to_owned(),
        // The window's own business: `serve` has no window to focus or close.
        UiEvent::Focus { .. } | UiEvent::ClosingQuits => return,
    };
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}
