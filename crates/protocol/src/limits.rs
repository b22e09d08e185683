//! Limits on request files: bounded and generous, so a hostile or broken asker cannot make the
//! inbox allocate without end, while real requests never come near them. Documented in
//! docs/PROTOCOL.md; the schema carries the same numbers.

/// Largest request file read, in bytes (1 MiB).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Deepest nesting of JSON arrays and objects.
pub const MAX_DEPTH: usize = 32;
/// Questions in one request.
pub const MAX_QUESTIONS: usize = 50;
/// Options or choices in one question.
pub const MAX_OPTIONS: usize = 100;
/// Characters in a question's text.
pub const MAX_QUESTION_CHARS: usize = 2_000;
/// Characters in a markdown description (also `confirm_description`).
pub const MAX_DESCRIPTION_CHARS: usize = 20_000;
/// Characters in a request title (also `confirm_title`).
pub const MAX_TITLE_CHARS: usize = 200;
/// Characters in a tab label.
pub const MAX_LABEL_CHARS: usize = 64;
/// Characters in one option label or choice label.
pub const MAX_OPTION_CHARS: usize = 500;
/// Characters in a text answer, a fill-in, a note or a decline reason. The desktop window's
/// form gets it from Rust (`QuestionView::max_answer_chars` in inbox-desk), never a copy.
pub const MAX_ANSWER_CHARS: usize = 10_000;
/// Characters in a text question's pattern.
pub const MAX_PATTERN_CHARS: usize = 1_000;
/// Longest `timeout_seconds` (one year).
pub const MAX_TIMEOUT_SECONDS: u64 = 31_536_000;

/// Longest name of a paired device (`device` in an outcome), in characters.
pub const MAX_DEVICE_NAME_CHARS: usize = 40;
