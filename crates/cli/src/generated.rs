//! Shell completions (bash, zsh, fish) and man pages, generated from the clap definitions in
//! args.rs, and committed under crates/cli/assets/ so packages install them without running
//! the binary. The test below fails when they are stale; `UPDATE_ASSETS=1 cargo test -p
//! answer-inbox generated` rewrites them.

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    use clap::CommandFactory;
    use clap_complete::Shell;

    use crate::args::Cli;

    fn assets() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets")
    }

    /// Every generated file: its path under assets/ and its bytes.
    fn generate() -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        for (shell, name) in [
            (Shell::Bash, "answer-inbox.bash"),
            (Shell::Zsh, "_answer-inbox"),
            (Shell::Fish, "answer-inbox.fish"),
        ] {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "answer-inbox", &mut out);
            files.insert(Path::new("completions").join(name), out);
        }
        // One page for the command and one per subcommand (answer-inbox-serve.1, ...).
        let command = Cli::command();
        let mut pages = vec![(String::from("answer-inbox"), command.clone())];
        for sub in command.get_subcommands() {
            pages.push((format!("answer-inbox-{}", sub.get_name()), sub.clone()));
        }
        for (name, page) in pages {
            let mut out = Vec::new();
            // clap takes a &'static name without its `string` feature; a test may leak it.
            let title: &'static str = name.clone().leak();
            clap_mangen::Man::new(page.name(title))
                .render(&mut out)
                .unwrap();
            files.insert(Path::new("man").join(format!("{name}.1")), out);
        }
        files
    }

    #[test]
    fn completions_and_man_pages_are_current() {
        let update = std::env::var_os("UPDATE_ASSETS").is_some();
        let mut stale = Vec::new();
        for (path, bytes) in generate() {
            let full = assets().join(&path);
            if update {
                std::fs::create_dir_all(full.parent().unwrap()).unwrap();
                std::fs::write(&full, &bytes).unwrap();
            } else if std::fs::read(&full).ok().as_deref() != Some(bytes.as_slice()) {
                stale.push(path.display().to_string());
            }
        }
        assert!(
            stale.is_empty(),
            "stale under crates/cli/assets/: {stale:?}; run UPDATE_ASSETS=1 cargo test -p \
             answer-inbox generated"
        );
    }
}
