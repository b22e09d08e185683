//! `answer-inbox-faults`: the same command line with the engine's fault points compiled in,
//! configured through `FAILPOINTS` (docs/RELIABILITY.md). Built only when asked for, for the
//! fault tests: `cargo build -p answer-inbox --bin answer-inbox-faults --features failpoints`.
//! Never packaged.

fn main() -> std::process::ExitCode {
    answer_inbox::main()
}
