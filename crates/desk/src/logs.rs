//! The app's log file: what it also says on standard error, kept in the XDG state directory
//! so that a desktop session, which shows standard error to no one, leaves a trace.
//!
//! One file a day (`answer-inbox-desktop.YYYY-MM-DD.log`), the last [`KEEP_FILES`] kept, the
//! older ones removed by the appender as it rolls over. Written from a thread of its own
//! (tracing-appender's non-blocking writer), so a slow disk never holds up the engine's loop
//! or the window.

use std::path::{Path, PathBuf};

use tracing_appender::rolling::{RollingFileAppender, Rotation};

/// How many daily files are kept: a week of history.
pub const KEEP_FILES: usize = 7;

/// The file names' start; the date and `.log` follow.
pub const FILE_PREFIX: &str = "answer-inbox-desktop";

/// `$XDG_STATE_HOME/answer-inbox/logs` (`~/.local/state/answer-inbox/logs`).
pub fn default_log_dir() -> Option<PathBuf> {
    dirs::state_dir().map(|dir| dir.join("answer-inbox").join("logs"))
}

/// The daily-rolling appender in `dir`, creating it (private: logs may name requests).
pub fn file_appender(dir: &Path) -> Result<RollingFileAppender, String> {
    create_private_dir(dir)
        .map_err(|error| format!("cannot create the log directory {}: {error}", dir.display()))?;
    RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix(FILE_PREFIX)
        .filename_suffix("log")
        .max_log_files(KEEP_FILES)
        .build(dir)
        .map_err(|error| format!("cannot open a log file in {}: {error}", dir.display()))
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::layer::SubscriberExt;

    #[test]
    fn a_line_logged_lands_in_todays_file_in_a_private_directory() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("state/answer-inbox/logs");
        let (writer, guard) = tracing_appender::non_blocking(file_appender(&dir).unwrap());
        let subscriber = tracing_subscriber::registry().with(
            tracing_subscriber::fmt::layer()
                .with_writer(writer)
                .with_ansi(false),
        );
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!("the spool went away");
        });
        // Dropping the guard flushes the writer's thread.
        drop(guard);

        let files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
        let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
        assert_eq!(name, format!("{FILE_PREFIX}.{today}.log"));
        let text = std::fs::read_to_string(&files[0]).unwrap();
        assert!(
            text.contains("WARN") && text.contains("the spool went away"),
            "{text}"
        );
        assert!(
            !text.contains('\u{1b}'),
            "no colour codes in a file: {text:?}"
        );

        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }

    #[test]
    fn a_log_directory_that_cannot_be_made_is_named() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("a-file");
        std::fs::write(&file, b"").unwrap();
        let error = file_appender(&file.join("logs")).unwrap_err();
        assert!(
            error.starts_with("cannot create the log directory") && error.contains("a-file"),
            "{error}"
        );
    }
}
