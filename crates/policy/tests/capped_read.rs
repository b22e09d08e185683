//! The shared reader of local files (inbox_policy::capped_read): a plain file only, opened
//! without blocking, at most the caller's cap, each refusal naming the file and the problem.
//! The surfaces' own tests (tests/tests/capped_reads.rs) run the commands that use it.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use inbox_policy::capped_read::{self, Problem, ReadError};

/// `read` on another thread, which must finish within a deadline: a reader that blocks
/// again fails the test instead of hanging it.
fn within_deadline<T: Send + 'static>(read: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || sender.send(read()).unwrap());
    receiver
        .recv_timeout(Duration::from_secs(10))
        .expect("the read blocked")
}

fn read_text(path: &Path, cap: u64) -> Result<String, ReadError> {
    let path = path.to_owned();
    within_deadline(move || capped_read::read_text(&path, cap))
}

#[test]
fn a_fifo_is_refused_at_once_naming_the_path_and_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("settings.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // Nobody writes to it: a blocking open or read would wait here forever.
    let error = read_text(&fifo, 1024).unwrap_err();
    assert!(
        matches!(error.kind(), Problem::NotPlain("a FIFO")),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "cannot read {}: it is a FIFO, not a plain file: reading it could wait forever or \
             never end",
            fifo.display()
        )
    );
    assert!(!error.is_missing());
}

#[test]
fn a_device_or_a_directory_is_refused_for_what_it_is() {
    let error = read_text(Path::new("/dev/zero"), 1024).unwrap_err();
    assert!(
        matches!(error.kind(), Problem::NotPlain("a character device")),
        "{error}"
    );
    let dir = tempfile::tempdir().unwrap();
    let error = read_text(dir.path(), 1024).unwrap_err();
    assert!(
        matches!(error.kind(), Problem::NotPlain("a directory")),
        "{error}"
    );
}

#[test]
fn a_file_over_the_cap_is_refused_naming_the_cap_and_one_at_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let at = dir.path().join("at");
    std::fs::write(&at, "x".repeat(64 * 1024)).unwrap();
    assert_eq!(read_text(&at, 64 * 1024).unwrap().len(), 64 * 1024);

    let over = dir.path().join("over");
    std::fs::write(&over, "x".repeat(64 * 1024 + 1)).unwrap();
    let error = read_text(&over, 64 * 1024).unwrap_err();
    assert_eq!(
        error.problem(),
        "it is 65537 bytes, larger than the limit of 65536 bytes (64 KiB)"
    );
}

#[test]
fn a_stream_is_read_up_to_the_cap_and_not_past_it() {
    let endless = std::io::repeat(b'a');
    let error = capped_read::read_stream_text(endless, "standard input", 1000).unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot read standard input: it is larger than the limit of 1000 bytes"
    );
    let short = capped_read::read_stream_text(&b"{}"[..], "standard input", 1000).unwrap();
    assert_eq!(short, "{}");
}

#[test]
fn a_missing_file_is_told_apart_and_bytes_that_are_not_text_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let error = read_text(&dir.path().join("absent"), 1024).unwrap_err();
    assert!(error.is_missing(), "{error}");

    let binary = dir.path().join("binary");
    std::fs::write(&binary, [0xff, 0xfe]).unwrap();
    let error = read_text(&binary, 1024).unwrap_err();
    assert!(matches!(error.kind(), Problem::NotText), "{error}");
    assert_eq!(
        capped_read::read_bytes(&binary, 1024).unwrap(),
        vec![0xff, 0xfe]
    );
}
