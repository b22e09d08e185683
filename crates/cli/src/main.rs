//! `answer-inbox`: the command line (src/lib.rs), without fault points.

fn main() -> std::process::ExitCode {
    answer_inbox::main()
}
