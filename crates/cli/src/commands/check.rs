//! `check FILE...`: validate request files without placing them; every problem is listed.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use inbox_protocol::{parse_request, request_id_from_file_name, NameProblem, Problem};
use serde::Serialize;

use crate::args::CheckArgs;
use crate::exit;
use crate::input::{self, ReadFailure};
use crate::{output, render};

/// The verdict on one file; the `--json` output is an array of these.
#[derive(Debug, Serialize)]
pub struct FileReport {
    pub file: String,
    pub valid: bool,
    pub errors: Vec<Problem>,
    /// Questions in a valid request.
    #[serde(skip)]
    pub questions: usize,
    /// Set when the file could not be read at all (missing, a directory, no permission).
    #[serde(skip)]
    pub unreadable: Option<String>,
}

pub fn run(args: &CheckArgs) -> Result<u8> {
    let reports: Vec<FileReport> = args.files.iter().map(|path| check_file(path)).collect();
    if args.json {
        output::json(&reports)?;
    } else {
        output::stdout(&in_words(&reports))?;
    }
    Ok(if reports.iter().all(|r| r.valid) {
        exit::OK
    } else {
        exit::FAILURE
    })
}

/// `FILE: ok (N questions)`, or `FILE: invalid` and its problems.
fn in_words(reports: &[FileReport]) -> String {
    let mut text = String::new();
    for report in reports {
        if let Some(reason) = &report.unreadable {
            let _ = writeln!(
                text,
                "{}: {}",
                render::line(&report.file),
                render::line(reason)
            );
        } else if report.valid {
            let _ = writeln!(
                text,
                "{}: ok ({})",
                render::line(&report.file),
                render::count(report.questions, "question")
            );
        } else {
            let _ = writeln!(
                text,
                "{}: invalid\n{}",
                render::line(&report.file),
                render::problem_lines(&report.errors)
            );
        }
    }
    text
}

fn check_file(path: &Path) -> FileReport {
    let file = input::display_name(path);
    let invalid = |errors: Vec<Problem>, unreadable: Option<String>| FileReport {
        file: file.clone(),
        valid: false,
        errors,
        questions: 0,
        unreadable,
    };
    let bytes = match input::read_request(path) {
        Ok(bytes) => bytes,
        Err(failure @ ReadFailure::TooLarge(_)) => {
            return invalid(vec![Problem::new("", failure.to_string())], None)
        }
        Err(ReadFailure::Io(error)) => {
            let reason = format!("cannot read the file: {error}");
            return invalid(vec![Problem::new("", reason.clone())], Some(reason));
        }
    };
    let (file_id, name_problem) = match spool_file_id(path) {
        Ok(id) => (id, None),
        Err(problem) => (None, Some(problem)),
    };
    let mut result = parse_request(&bytes, file_id);
    if let Some(problem) = name_problem {
        // The inbox would never read this file, however good its content.
        let problem = Problem::new(
            "",
            format!("{problem}; the inbox never reads a file with this name as a request"),
        );
        match &mut result {
            Ok(_) => result = Err(vec![problem]),
            Err(errors) => errors.insert(0, problem),
        }
    }
    match result {
        Ok(request) => FileReport {
            file,
            valid: true,
            errors: Vec::new(),
            questions: request.questions.len(),
            unreadable: None,
        },
        Err(errors) => invalid(errors, None),
    }
}

/// The id a file's name gives it, for files inside a spool's `questions/` directory: there
/// the name is the id, and an `id` in the body must match it. Elsewhere the name is just a
/// name (`ask deploy.json` places the request under the body's id), so it is not checked.
fn spool_file_id(path: &Path) -> Result<Option<&str>, NameProblem> {
    let in_questions = path
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|dir| dir == "questions");
    match path.file_name() {
        Some(name) if in_questions => request_id_from_file_name(name).map(Some),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_spool_files_are_named_by_their_file_name() {
        assert_eq!(
            spool_file_id(Path::new("/s/questions/abc.json")),
            Ok(Some("abc"))
        );
        assert_eq!(
            spool_file_id(Path::new("questions/abc.json")),
            Ok(Some("abc"))
        );
        assert_eq!(spool_file_id(Path::new("/tmp/abc.json")), Ok(None));
        assert_eq!(spool_file_id(Path::new("abc.json")), Ok(None));
        assert_eq!(spool_file_id(Path::new("-")), Ok(None));
        assert_eq!(
            spool_file_id(Path::new("/s/questions/.abc.json")),
            Err(NameProblem::InvalidId)
        );
        assert_eq!(
            spool_file_id(Path::new("/s/questions/abc.txt")),
            Err(NameProblem::NoJsonSuffix)
        );
    }
}
