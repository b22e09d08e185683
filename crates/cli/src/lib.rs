//! `answer-inbox`: the command line over the Answer Inbox engine. This file only parses the
//! command line, dispatches, and turns results into exit codes (see `exit`). It is a library
//! only so that two binaries can share it: `answer-inbox` (src/main.rs) and, for the fault
//! tests alone, `answer-inbox-faults` (src/bin/answer-inbox-faults.rs), the same program with
//! the engine's fault points compiled in.

mod args;
mod commands;
mod exit;
mod generated;
mod input;
mod locations;
mod output;
mod render;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use tracing_subscriber::EnvFilter;

use crate::args::{Cli, Command};

/// The whole program: parse, dispatch, exit code.
pub fn main() -> ExitCode {
    // Reads FAILPOINTS when the fault points are compiled in (the `failpoints` feature, for
    // the reliability tests); without the feature this does nothing.
    let _faults = fail::FailScenario::setup();
    // Parsed in two steps (as `Cli::parse` does) to keep the matches: they tell a typed
    // --spool from ANSWER_INBOX_DIR, for `config` to say which one gave the spool.
    let matches = Cli::command().get_matches();
    let mut cli = Cli::from_arg_matches(&matches)
        .unwrap_or_else(|error| error.format(&mut Cli::command()).exit());
    cli.locations.resolution = args::Resolution::from_matches(&matches);
    init_logging(&cli.command);
    match dispatch(&cli) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            // Errors quote ids, titles, labels and file names from the spool or the command
            // line: printed by the text policy, like everything else, so an escape sequence
            // in a request cannot reach the terminal through an error.
            output::stderr(&format!("answer-inbox: {error:#}"));
            ExitCode::from(exit::FAILURE)
        }
    }
}

fn dispatch(cli: &Cli) -> anyhow::Result<u8> {
    let locations = &cli.locations;
    match &cli.command {
        Command::Check(args) => commands::check::run(args),
        Command::Ask(args) => commands::ask::run(locations, args),
        Command::List(args) => commands::list::run(locations, args),
        Command::Show(args) => commands::show::run(locations, args),
        Command::Answer(args) => commands::answer::run(locations, args),
        Command::Cancel(args) => commands::cancel::run(locations, args),
        Command::Watch(args) => commands::watch::run(locations, args),
        Command::Schema(args) => commands::schema::run(args),
        Command::Demo(_) => commands::demo::run(locations),
        Command::Mcp(args) => commands::mcp::run(locations, args),
        Command::Audit(args) => commands::audit::run(locations, args),
        Command::Stats(args) => commands::stats::run(locations, args),
        Command::Policy(args) => commands::policy::run(locations, args),
        Command::Snooze(args) => commands::snooze::snooze(locations, args),
        Command::Unsnooze(args) => commands::snooze::unsnooze(locations, args),
        Command::Serve(args) => commands::serve::run(locations, args),
        Command::Devices(args) => commands::devices::run(locations, args),
        Command::Hook(args) => commands::hook::run(locations, args),
        Command::Service(args) => commands::service::run(locations, args),
        Command::Config(args) => commands::config::run(locations, args),
        Command::Completions(args) => generated::completions(args.shell),
    }
}

/// Warnings (and, for `watch`, progress) on standard error; `RUST_LOG` overrides the level.
fn init_logging(command: &Command) {
    let default = match command {
        Command::Watch(_) | Command::Serve(_) => "info",
        _ => "warn",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour codes only for a person at a terminal, and never with NO_COLOR: a log file
        // or the journal would keep them as noise.
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        )
        .with_target(false)
        .try_init();
}
