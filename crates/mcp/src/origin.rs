//! Who is asking: what each request's `source` says about the agent, so the operator sees
//! which agent, on which machine, in which project wants an answer.

use std::path::{Path, PathBuf};

use rmcp::model::Implementation;
use serde_json::{json, Map, Value};

/// The tool name recorded in every request's source.
pub const TOOL: &str = "ask_operator";

/// The parts of the source that do not change during a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub host: Option<String>,
    pub cwd: Option<String>,
    pub project: Option<String>,
    /// Tells this server process (one per agent session: a host starts one per connection)
    /// from others by the same client.
    pub session: String,
}

impl Origin {
    /// The working directory and project as given (flags or environment), else found from
    /// this process's working directory. Empty values count as not given.
    pub fn detect(cwd: Option<&Path>, project: Option<&str>) -> Origin {
        // Made absolute (not resolved: a symlinked checkout keeps the name the agent uses), so
        // `--cwd .` names a real place and its project.
        let cwd: Option<PathBuf> = cwd
            .filter(|dir| !dir.as_os_str().is_empty())
            .map(|dir| std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned()))
            .or_else(|| std::env::current_dir().ok());
        let project = project
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
            .or_else(|| cwd.as_deref().and_then(project_of));
        let host = gethostname::gethostname().to_string_lossy().into_owned();
        Origin {
            host: Some(host).filter(|host| !host.is_empty()),
            cwd: cwd.map(|dir| dir.display().to_string()),
            project,
            session: std::process::id().to_string(),
        }
    }

    /// The request's `source` for a call from `client`. Every value is cut to the protocol's
    /// limits, so an odd client name never makes a request invalid.
    pub fn source(&self, client: Option<&Implementation>) -> Value {
        let mut source = Map::new();
        let mut put = |key: &str, value: Option<&str>, limit: usize| {
            if let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) {
                source.insert(key.to_owned(), json!(cut(value, limit)));
            }
        };
        let name = client.map(|c| c.name.as_str());
        put("app", name, 200);
        let run = match client {
            Some(client) => format!(
                "{} {}, session {}",
                client.name, client.version, self.session
            ),
            None => format!("session {}", self.session),
        };
        put("run", Some(&run), 200);
        put("tool", Some(TOOL), 200);
        put("host", self.host.as_deref(), 200);
        // `cwd` and `project` are well-known source keys; older inboxes keep them as extra
        // keys, which every inbox shows too.
        put("cwd", self.cwd.as_deref(), 4096);
        put("project", self.project.as_deref(), 200);
        Value::Object(source)
    }
}

/// The name of the git repository containing `dir` (a `.git` directory, or the `.git` file
/// of a worktree or submodule), else the name of `dir` itself.
fn project_of(dir: &Path) -> Option<String> {
    let root = dir
        .ancestors()
        .find(|ancestor| ancestor.join(".git").exists())
        .unwrap_or(dir);
    root.file_name()
        .map(|name| name.to_string_lossy().into_owned())
}

/// At most `limit` characters, cut on a character boundary.
fn cut(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((end, _)) => text[..end].to_owned(),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_is_the_git_root_else_the_directory() {
        let dir = std::env::temp_dir().join(format!("answer-inbox-origin-{}", std::process::id()));
        let nested = dir.join("shop/src/api");
        std::fs::create_dir_all(&nested).unwrap();
        assert_eq!(project_of(&nested).as_deref(), Some("api"));
        std::fs::create_dir_all(dir.join("shop/.git")).unwrap();
        assert_eq!(project_of(&nested).as_deref(), Some("shop"));
        // A worktree's `.git` is a file.
        std::fs::create_dir_all(dir.join("wt/src")).unwrap();
        std::fs::write(dir.join("wt/.git"), "gitdir: elsewhere\n").unwrap();
        assert_eq!(project_of(&dir.join("wt/src")).as_deref(), Some("wt"));
        std::fs::remove_dir_all(&dir).unwrap();

        let given = Origin::detect(Some(Path::new("/srv/x")), Some(" billing "));
        assert_eq!(given.cwd.as_deref(), Some("/srv/x"));
        assert_eq!(given.project.as_deref(), Some("billing"));
        let empty = Origin::detect(Some(Path::new("/srv/x")), Some(""));
        assert_eq!(empty.project.as_deref(), Some("x"));
        let relative = Origin::detect(Some(Path::new(".")), None);
        let here = std::env::current_dir().unwrap();
        assert!(Path::new(relative.cwd.as_deref().unwrap()).is_absolute());
        assert_eq!(relative.project, project_of(&here));
    }

    #[test]
    fn the_source_names_the_client_and_respects_the_limits() {
        let origin = Origin {
            host: Some("box".into()),
            cwd: Some("/work/shop".into()),
            project: Some("shop".into()),
            session: "42".into(),
        };
        let client = Implementation::new("claude-code", "2.1.0");
        assert_eq!(
            origin.source(Some(&client)),
            json!({"app": "claude-code", "run": "claude-code 2.1.0, session 42",
                   "tool": "ask_operator", "host": "box", "cwd": "/work/shop", "project": "shop"})
        );
        let long = Implementation::new("é".repeat(300), "1");
        let source = origin.source(Some(&long));
        assert_eq!(source["app"].as_str().unwrap().chars().count(), 200);
        assert_eq!(source["run"].as_str().unwrap().chars().count(), 200);
        assert_eq!(origin.source(None)["run"], "session 42");
    }
}
