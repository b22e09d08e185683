//! Holds a write lock on a SQLite database, as another program would (a `sqlite3` shell in
//! the middle of a transaction, a backup tool), for the environment-fault tests.
//!
//! `inbox-hold-db-lock DB`: begins an exclusive transaction, prints `locked`, and holds it
//! until standard input closes; then rolls back, prints `released` and exits.

use std::io::{Read, Write};

fn main() {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: inbox-hold-db-lock DB");
        std::process::exit(2);
    };
    let conn = match rusqlite::Connection::open(&path) {
        Ok(conn) => conn,
        Err(error) => {
            eprintln!("cannot open {}: {error}", path.to_string_lossy());
            std::process::exit(1);
        }
    };
    if let Err(error) = conn.execute_batch("BEGIN EXCLUSIVE") {
        eprintln!("cannot lock {}: {error}", path.to_string_lossy());
        std::process::exit(1);
    }
    say("locked");
    // Blocks until the test closes our standard input (or dies, which closes it too).
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    let _ = conn.execute_batch("ROLLBACK");
    say("released");
}

fn say(word: &str) {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{word}").and_then(|()| out.flush());
}
