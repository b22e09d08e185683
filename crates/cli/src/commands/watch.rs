//! `watch [--poll] [--no-notify] [--json]`: the headless inbox. The engine's loop runs in the
//! service's [`LoopHost`], as the desktop app's does; a printer thread writes one line per
//! event to standard output, flushed at once so that a reader (a log, a test) sees each change
//! as it happens.

use std::io::Write;
use std::thread;

use anyhow::{Context, Result};
use chrono::{Local, SecondsFormat};
use crossbeam_channel::Receiver;
use inbox_app::LoopHost;
use inbox_engine::notifier::{Notifier, Silent};
use inbox_engine::{Event, WatchOptions};
use inbox_notifications::Notifications;

use crate::args::{LocationArgs, WatchArgs};
use crate::{exit, locations};

/// The name notifications are sent under.
const APP_NAME: &str = "Answer Inbox";

pub fn run(locations: &LocationArgs, args: &WatchArgs) -> Result<u8> {
    let (events_tx, events) = crossbeam_channel::unbounded();
    let notifier: Box<dyn Notifier> = if args.no_notify {
        Box::new(Silent)
    } else {
        // The notifier logs "notified" itself, once a bubble is really shown. Its clone of
        // the event sender keeps the printer going until its thread ends too, which it does
        // when the engine drops it (after at most one call's timeout, if a daemon hangs).
        match Notifications::builder(APP_NAME)
            .events(events_tx.clone())
            .start()
        {
            Ok(notifications) => Box::new(notifications),
            // No thread for them: the inbox runs on without bubbles.
            Err(error) => {
                tracing::warn!("desktop notifications are off: {error}");
                Box::new(Silent)
            }
        }
    };
    let engine = locations::open_engine(locations)?
        .with_events(events_tx)
        .with_notifier(notifier);
    let watching = format!(
        "watching {} (db {})",
        engine.spool().root().display(),
        locations::db_path(locations)?.display()
    );
    // Which rules decide, so the log says what the operator agreed to.
    let policy = engine.policy();
    let origin = match policy.path().filter(|path| path.exists()) {
        Some(path) => path.display().to_string(),
        None => "the shipped policy".to_owned(),
    };
    let rules = format!(
        "policy: {origin}, rules {}",
        policy.current().rule_names().join(", ")
    );

    let printer = thread::Builder::new()
        .name("event-log".into())
        .spawn({
            let json = args.json;
            move || print_events(&events, json)
        })
        .context("cannot start the event printer")?;
    let options = WatchOptions {
        poll: args.poll,
        ..WatchOptions::default()
    };
    // No commands: the headless inbox is answered by one-shot commands writing files.
    let host = LoopHost::start(engine, options, crossbeam_channel::never(), |_| {})
        .context("cannot start the engine's loop")?;
    // SIGINT, SIGTERM (and SIGHUP): stop between two batches, never inside one.
    let stopper = host.stopper();
    ctrlc::set_handler(move || stopper.stop())
        .context("cannot install the SIGINT/SIGTERM handler")?;
    eprintln!("{watching}");
    eprintln!("{rules}");
    // The loop's end drops the engine, which closes the event channel: the printer drains
    // it and ends.
    let result = host.wait();
    let _ = printer.join();
    result.context("the inbox stopped")?;
    eprintln!("stopped");
    Ok(exit::OK)
}

/// `<RFC 3339 time> <what happened>`, one line per event, until the engine is gone; with
/// `json`, the event itself as one JSON object per line, with `at`.
fn print_events(events: &Receiver<Event>, json: bool) {
    let stdout = std::io::stdout();
    for event in events {
        let now = Local::now().to_rfc3339_opts(SecondsFormat::Millis, false);
        let line = if json {
            // serde_json escapes every control character: one object per line, always.
            let mut value = serde_json::to_value(&event).unwrap_or_default();
            if let Some(object) = value.as_object_mut() {
                object.insert("at".into(), now.into());
            }
            value.to_string()
        } else {
            // One entry per line, whatever the request or file name contains.
            format!(
                "{now} {}",
                crate::output::terminal_safe(&event.log_line(), false)
            )
        };
        let mut out = stdout.lock();
        // A closed standard output must not stop the inbox: it keeps working without a log.
        let _ = writeln!(out, "{line}").and_then(|()| out.flush());
    }
}
