//! Request and question ids, and which file names in the spool are requests.

use std::fmt;

/// The longest id: 128 characters.
pub const MAX_ID_CHARS: usize = 128;

/// The id rule, as a regular expression for schemas and docs.
pub const ID_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$";

/// `[A-Za-z0-9][A-Za-z0-9._-]{0,127}`. Checked by hand because it is on the hot path of every
/// directory scan; ids become file names, so nothing else may pass.
pub fn is_valid_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    match bytes.first() {
        Some(b) if b.is_ascii_alphanumeric() => {}
        _ => return false,
    }
    bytes.len() <= MAX_ID_CHARS
        && bytes[1..]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Why a file name in `questions/` or `answers/` is not `<id>.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameProblem {
    NotUtf8,
    NoJsonSuffix,
    InvalidId,
}

impl fmt::Display for NameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NameProblem::NotUtf8 => "the file name is not valid UTF-8",
            NameProblem::NoJsonSuffix => "the file name does not end in .json",
            NameProblem::InvalidId => {
                "the file name is not <id>.json with an id of letters, digits, '.', '_' or '-' \
                 (starting with a letter or digit, at most 128 characters)"
            }
        })
    }
}

/// The request id named by a spool file name (`<id>.json`), or why there is none.
pub fn request_id_from_file_name(name: &std::ffi::OsStr) -> Result<&str, NameProblem> {
    let name = name.to_str().ok_or(NameProblem::NotUtf8)?;
    let stem = name
        .strip_suffix(".json")
        .ok_or(NameProblem::NoJsonSuffix)?;
    if is_valid_id(stem) {
        Ok(stem)
    } else {
        Err(NameProblem::InvalidId)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn ids_follow_the_rule() {
        for ok in ["a", "01J9Z", "deploy-spec-042", "x.y_z-1", &"a".repeat(128)] {
            assert!(is_valid_id(ok), "{ok} should be valid");
        }
        for bad in [
            "",
            "-a",
            ".hidden",
            "a/b",
            "a b",
            "é",
            &"a".repeat(129),
            "a\0",
        ] {
            assert!(!is_valid_id(bad), "{bad:?} should be invalid");
        }
    }

    #[test]
    fn file_names_map_to_ids() {
        assert_eq!(request_id_from_file_name(OsStr::new("abc.json")), Ok("abc"));
        assert_eq!(
            request_id_from_file_name(OsStr::new("abc.txt")),
            Err(NameProblem::NoJsonSuffix)
        );
        assert_eq!(
            request_id_from_file_name(OsStr::new(".abc.json")),
            Err(NameProblem::InvalidId)
        );
        assert_eq!(
            request_id_from_file_name(OsStr::new(".json")),
            Err(NameProblem::InvalidId)
        );
    }

    proptest::proptest! {
        #[test]
        fn valid_ids_are_safe_file_names(id in "[A-Za-z0-9][A-Za-z0-9._-]{0,127}") {
            proptest::prop_assert!(is_valid_id(&id));
            proptest::prop_assert!(!id.contains('/') && id != "." && id != "..");
        }
    }
}
