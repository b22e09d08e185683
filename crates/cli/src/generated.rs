//! Shell completions (bash, zsh, fish) and man pages, generated from the clap definitions in
//! args.rs, and committed under crates/cli/assets/ so packages install them without running
//! the binary. The test below fails when they are stale; `UPDATE_ASSETS=1 cargo test -p
//! answer-inbox generated` rewrites them. `answer-inbox completions SHELL` prints the same
//! script, for a build from source.

use clap::CommandFactory;
use clap_complete::Shell;

use crate::args::Cli;
use crate::{exit, output};

/// `completions SHELL`: the script on standard output.
pub fn completions(shell: Shell) -> anyhow::Result<u8> {
    // Through `output`, which takes a reader that went away (`| head`) calmly.
    output::stdout(&String::from_utf8_lossy(&completion_script(shell)))?;
    Ok(exit::OK)
}

/// The script for `shell`.
fn completion_script(shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "answer-inbox", &mut out);
    out
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};

    use clap::CommandFactory;
    use clap_complete::Shell;

    use super::completion_script;
    use crate::args::Cli;

    fn assets() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets")
    }

    /// One man page per command, nested ones too (`answer-inbox-hook-claude-code.1`): its
    /// file name and the command, built so that its SYNOPSIS reads as typed (`answer-inbox
    /// hook claude-code [OPTIONS]`) and its global options are listed.
    fn man_pages() -> Vec<(String, clap::Command)> {
        // No `help` subcommand pages: `--help` is on every page already, and a page for
        // `help` would be named by its parent's SUBCOMMANDS yet say nothing.
        let mut root = Cli::command().disable_help_subcommand(true);
        root.build();
        let mut pages = Vec::new();
        fn walk(page: String, command: &clap::Command, pages: &mut Vec<(String, clap::Command)>) {
            for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
                walk(format!("{page}-{}", sub.get_name()), sub, pages);
            }
            // clap_mangen names the SUBCOMMANDS entries after the display name, so each page
            // gets its file's name as display name: they name the files that exist.
            pages.push((page.clone(), command.clone().display_name(page)));
        }
        walk(String::from("answer-inbox"), &root, &mut pages);
        pages
    }

    /// `command`'s man page. clap_mangen's SYNOPSIS names the options without their values
    /// (`[--timeout]`); each option that takes one gets it here (`[--timeout DURATION]`), as
    /// `--help`'s usage shows.
    fn render_page(command: &clap::Command) -> String {
        let mut out = Vec::new();
        clap_mangen::Man::new(command.clone())
            .render(&mut out)
            .unwrap();
        let page = String::from_utf8(out).unwrap();
        let Some((head, rest)) = page.split_once(".SH SYNOPSIS\n") else {
            return page;
        };
        let (line, tail) = rest.split_once('\n').unwrap_or((rest, ""));
        let mut line = line.to_owned();
        for arg in command.get_arguments().filter(|arg| !arg.is_hide_set()) {
            let (Some(long), true) = (arg.get_long(), arg.get_action().takes_values()) else {
                continue;
            };
            let value = arg
                .get_value_names()
                .map(|names| names.join(" "))
                .unwrap_or_else(|| arg.get_id().as_str().to_uppercase());
            let shown = format!("\\fB\\-\\-{}\\fR", long.replace('-', "\\-"));
            let with_value = format!("{shown} \\fI{}\\fR", value.replace('-', "\\-"));
            line = line.replacen(&shown, &with_value, 1);
        }
        format!("{head}.SH SYNOPSIS\n{line}\n{tail}")
    }

    /// Options that take a value are shown with it in the SYNOPSIS, flags without.
    #[test]
    fn man_page_synopsis_shows_each_options_value() {
        let pages: BTreeMap<String, String> = man_pages()
            .into_iter()
            .map(|(name, command)| (name, render_page(&command).replace("\\-", "-")))
            .collect();
        let hook = &pages["answer-inbox-hook-claude-code"];
        assert!(
            hook.contains("[\\fB--timeout\\fR \\fIDURATION\\fR]"),
            "{hook}"
        );
        assert!(hook.contains("[\\fB--spool\\fR \\fIDIR\\fR]"), "{hook}");
        let answer = &pages["answer-inbox-answer"];
        assert!(
            answer.contains("[\\fB--alike\\fR]"),
            "a flag has no value: {answer}"
        );
    }

    /// Every generated file: its path under assets/ and its bytes.
    fn generate() -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        for (shell, name) in [
            (Shell::Bash, "answer-inbox.bash"),
            (Shell::Zsh, "_answer-inbox"),
            (Shell::Fish, "answer-inbox.fish"),
        ] {
            files.insert(
                Path::new("completions").join(name),
                completion_script(shell),
            );
        }
        for (name, command) in man_pages() {
            files.insert(
                Path::new("man").join(format!("{name}.1")),
                render_page(&command).into_bytes(),
            );
        }
        files
    }

    #[test]
    fn completions_and_man_pages_are_current() {
        let update = std::env::var_os("UPDATE_ASSETS").is_some();
        let files = generate();
        let mut stale = Vec::new();
        for (path, bytes) in &files {
            let full = assets().join(path);
            if update {
                std::fs::create_dir_all(full.parent().unwrap()).unwrap();
                std::fs::write(&full, bytes).unwrap();
            } else if std::fs::read(&full).ok().as_deref() != Some(bytes.as_slice()) {
                stale.push(path.display().to_string());
            }
        }
        // A page for a command that is gone would still be installed by the packages.
        for entry in std::fs::read_dir(assets().join("man")).unwrap() {
            let path = Path::new("man").join(entry.unwrap().file_name());
            if !files.contains_key(&path) {
                if update {
                    std::fs::remove_file(assets().join(&path)).unwrap();
                } else {
                    stale.push(format!("{} (no such command)", path.display()));
                }
            }
        }
        assert!(
            stale.is_empty(),
            "stale under crates/cli/assets/: {stale:?}; run UPDATE_ASSETS=1 cargo test -p \
             answer-inbox generated"
        );
    }

    /// Every page another page names (`answer-inbox-hook-claude-code(1)` under SUBCOMMANDS)
    /// is shipped, so `man` finds each one the pages point to.
    #[test]
    fn every_man_page_named_exists() {
        let dir = assets().join("man");
        let shipped: BTreeSet<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let mut missing = Vec::new();
        let mut named = 0;
        for page in &shipped {
            let text = std::fs::read_to_string(dir.join(page)).unwrap();
            for name in named_pages(&text) {
                named += 1;
                if !shipped.contains(&format!("{name}.1")) {
                    missing.push(format!("{page} names {name}(1)"));
                }
            }
        }
        assert!(
            named > 20,
            "the pages name only {named} others: is the parser right?"
        );
        assert!(
            missing.is_empty(),
            "man pages named but not shipped: {missing:?}"
        );
    }

    /// The `answer-inbox-...(1)` references in a page, roff escapes (`\-`) undone.
    fn named_pages(page: &str) -> Vec<String> {
        let text = page.replace("\\-", "-");
        let mut names = Vec::new();
        for (at, _) in text.match_indices("(1)") {
            let start = text[..at]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .map_or(0, |i| i + 1);
            let name = &text[start..at];
            if name.starts_with("answer-inbox") {
                names.push(name.to_owned());
            }
        }
        names
    }

    /// Each page's SYNOPSIS is the command as typed, words apart: `answer-inbox hook
    /// claude-code`, not `answer-inbox-hook-claude-code`.
    #[test]
    fn man_page_synopsis_is_the_command_as_typed() {
        for (name, command) in man_pages() {
            let page = render_page(&command).replace("\\-", "-");
            let synopsis = page
                .split(".SH SYNOPSIS\n")
                .nth(1)
                .and_then(|rest| rest.lines().next())
                .unwrap_or_else(|| panic!("{name}: no SYNOPSIS"));
            let expected = typed_name(&name);
            assert!(
                synopsis.starts_with(&format!("\\fB{expected}\\fR")),
                "{name}: SYNOPSIS is {synopsis:?}, not {expected}"
            );
        }
    }

    /// The command a page is for, as typed: its path through the command tree.
    fn typed_name(page: &str) -> String {
        let mut command = Cli::command();
        let Some(rest) = page.strip_prefix("answer-inbox-") else {
            return page.to_owned();
        };
        let mut rest = rest.to_owned();
        let mut words = vec![String::from("answer-inbox")];
        while !rest.is_empty() {
            // The longest subcommand name that starts `rest` (claude-code before claude).
            let sub = command
                .get_subcommands()
                .filter(|sub| {
                    rest == sub.get_name() || rest.starts_with(&format!("{}-", sub.get_name()))
                })
                .max_by_key(|sub| sub.get_name().len())
                .unwrap_or_else(|| panic!("{page}: no command for {rest}"))
                .clone();
            words.push(sub.get_name().to_owned());
            rest = rest[sub.get_name().len()..]
                .trim_start_matches('-')
                .to_owned();
            command = sub;
        }
        words.join(" ")
    }
}
