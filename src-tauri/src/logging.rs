//! Where the app's log lines go: standard error, as before, and the daily log file in the
//! state directory (`inbox_desk::logs`), which Settings shows.

use std::path::PathBuf;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, EnvFilter, Layer};

/// The log file's directory, and the guard that flushes it: kept for the app's life.
pub struct Logging {
    pub dir: Option<PathBuf>,
    _flush_on_exit: Option<WorkerGuard>,
}

/// Starts logging. A log directory that cannot be made costs the file, not the app: the
/// lines still go to standard error, with one saying why there is no file.
pub fn init() -> Logging {
    let filter = || {
        EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| EnvFilter::new("info,rusqlite_migration=warn"))
    };
    let stderr = fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(filter());
    let dir = inbox_desk::logs::default_log_dir();
    let opened = dir.as_deref().map(inbox_desk::logs::file_appender);
    match opened {
        Some(Ok(appender)) => {
            let (writer, guard) = tracing_appender::non_blocking(appender);
            let file = fmt::layer()
                .with_writer(writer)
                .with_ansi(false)
                .with_filter(filter());
            tracing_subscriber::registry()
                .with(stderr)
                .with(file)
                .init();
            Logging {
                dir,
                _flush_on_exit: Some(guard),
            }
        }
        problem => {
            tracing_subscriber::registry().with(stderr).init();
            match problem {
                Some(Err(error)) => tracing::warn!("no log file: {error}"),
                _ => tracing::warn!("no log file: the state directory is unknown (is HOME set?)"),
            }
            Logging {
                dir: None,
                _flush_on_exit: None,
            }
        }
    }
}
