//! A rule's conditions on a request, and whether a request meets them.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use inbox_protocol::{Priority, QuestionKind, Request};

/// What the engine knows about a request besides its contents.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    pub request: &'a Request,
    /// The OS account that placed the file, when known.
    pub placed_by: Option<&'a str>,
}

/// Globs on one text field: the condition holds when any of them matches the whole value,
/// case-insensitively. A missing value never matches, not even `*`: a rule about apps
/// says nothing about requests that do not name one.
#[derive(Debug, Clone)]
pub(crate) struct Globs(GlobSet);

impl Globs {
    /// Compiles `patterns`; on failure, the message for each bad pattern.
    pub(crate) fn new(patterns: &[String]) -> Result<Globs, Vec<String>> {
        let mut set = GlobSetBuilder::new();
        let mut bad = Vec::new();
        for pattern in patterns {
            match GlobBuilder::new(pattern).case_insensitive(true).build() {
                Ok(glob) => {
                    set.add(glob);
                }
                Err(err) => bad.push(format!("{pattern:?} is not a valid glob: {}", err.kind())),
            }
        }
        if !bad.is_empty() {
            return Err(bad);
        }
        set.build()
            .map(Globs)
            .map_err(|err| vec![format!("the globs cannot be combined: {err}")])
    }

    pub(crate) fn matches(&self, value: Option<&str>) -> bool {
        value.is_some_and(|value| self.0.is_match(value))
    }
}

/// Every condition a rule gives; all must hold. A rule with none matches every request.
#[derive(Debug, Clone, Default)]
pub(crate) struct Conditions {
    pub(crate) app: Option<Globs>,
    pub(crate) run: Option<Globs>,
    pub(crate) project: Option<Globs>,
    pub(crate) host: Option<Globs>,
    pub(crate) tool: Option<Globs>,
    pub(crate) account: Option<Globs>,
    pub(crate) title: Option<Globs>,
    pub(crate) priority: Option<Vec<Priority>>,
    pub(crate) kinds: Option<Vec<QuestionKind>>,
}

impl Conditions {
    pub(crate) fn hold_for(&self, facts: &Facts<'_>) -> bool {
        let request = facts.request;
        let source = &request.source;
        let text_conditions = [
            (&self.app, source.app.as_deref()),
            (&self.run, source.run.as_deref()),
            (&self.project, source.project.as_deref()),
            (&self.host, source.host.as_deref()),
            (&self.tool, source.tool.as_deref()),
            (&self.account, facts.placed_by),
            (&self.title, Some(request.display_title())),
        ];
        text_conditions
            .iter()
            .all(|(globs, value)| globs.as_ref().is_none_or(|globs| globs.matches(*value)))
            && self
                .priority
                .as_ref()
                .is_none_or(|priorities| priorities.contains(&request.priority))
            && self.kinds.as_ref().is_none_or(|kinds| {
                request
                    .questions
                    .iter()
                    .any(|question| kinds.contains(&question.kind))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn globs(patterns: &[&str]) -> Globs {
        Globs::new(&patterns.iter().map(|p| p.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn globs_match_the_whole_value_case_insensitively() {
        let ci = globs(&["ci-*"]);
        assert!(ci.matches(Some("ci-build")));
        assert!(ci.matches(Some("CI-Build")));
        assert!(!ci.matches(Some("my-ci-build")));
        assert!(!ci.matches(None));
        let any = globs(&["*"]);
        assert!(any.matches(Some("")));
        assert!(any.matches(Some("a/b")));
        assert!(!any.matches(None));
        let either = globs(&["{alpha,beta}", "gamm?", "[xy]z"]);
        for yes in ["alpha", "beta", "gamma", "xz", "YZ"] {
            assert!(either.matches(Some(yes)), "{yes}");
        }
        for no in ["delta", "gam", "zz"] {
            assert!(!either.matches(Some(no)), "{no}");
        }
    }

    #[test]
    fn bad_globs_are_named() {
        let err = Globs::new(&["ok".to_owned(), "[unclosed".to_owned()]).unwrap_err();
        assert_eq!(err.len(), 1);
        assert!(
            err[0].starts_with("\"[unclosed\" is not a valid glob"),
            "{err:?}"
        );
    }
}
