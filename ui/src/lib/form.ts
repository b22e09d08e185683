// The answer form as data: what the operator has picked or typed for each question, whether
// that can be submitted, and the `answers` object `submit_answers` takes. No DOM here, so
// every rule is unit-tested; the components only render it.
//
// Only what needs no request rules is checked here (empty, required, the inbox's length
// limit, which each QuestionView carries from Rust); everything else is Rust's checker (crates/protocol/src/answers.rs), asked as the
// operator works (`RustCheck`), so the window and the CLI can never disagree. Rust checks
// everything again on submit: the form is a convenience, not the authority.

import type { ChoiceView } from './bindings/ChoiceView';
import type { ProblemView } from './bindings/ProblemView';
import type { QuestionView } from './bindings/QuestionView';
import type { JsonValue } from './bindings/serde_json/JsonValue';

/** What the operator has entered for one question so far. */
export type Draft =
  | { kind: 'confirm'; value: boolean | null }
  | {
      kind: 'choice';
      selected: string | null;
      /** The fill-in text; kept when a radio is picked, so switching back does not lose it. */
      custom: string;
      /** The fill-in, not a radio, is the answer. */
      useCustom: boolean;
    }
  | { kind: 'multi_choice'; selected: string[]; custom: string }
  | { kind: 'text'; text: string };

/**
 * One draft per question, in the request's order. An array, not an object keyed by question
 * id: ids come from untrusted files and could be "constructor" or "__proto__", and the app
 * runs with a frozen Object.prototype.
 */
export type FormState = Draft[];

/** The choice a text stands for: an option id, or the label of exactly one option. */
export function matchChoice(question: QuestionView, text: string): ChoiceView | null {
  const byId = question.choices.find((c) => c.id === text);
  if (byId) return byId;
  const byLabel = question.choices.filter((c) => c.label === text);
  return byLabel.length === 1 ? (byLabel[0] ?? null) : null;
}

/** The form as a question's default fills it; nothing picked when there is no default. */
export function initialDraft(question: QuestionView): Draft {
  const given = question.default;
  switch (question.kind) {
    case 'confirm':
      return { kind: 'confirm', value: typeof given === 'boolean' ? given : null };
    case 'choice': {
      if (typeof given !== 'string') return { kind: 'choice', selected: null, custom: '', useCustom: false };
      const choice = matchChoice(question, given);
      return choice
        ? { kind: 'choice', selected: choice.id, custom: '', useCustom: false }
        : { kind: 'choice', selected: null, custom: given, useCustom: question.allow_custom };
    }
    case 'multi_choice': {
      const selected: string[] = [];
      let custom = '';
      if (Array.isArray(given)) {
        for (const entry of given) {
          if (typeof entry !== 'string') continue;
          const choice = matchChoice(question, entry);
          if (choice) {
            if (!selected.includes(choice.id)) selected.push(choice.id);
          } else if (!custom && question.allow_custom) {
            // The form has one fill-in box; a default with several fill-ins keeps the first.
            custom = entry;
          }
        }
      }
      return { kind: 'multi_choice', selected, custom };
    }
    case 'text':
      return { kind: 'text', text: typeof given === 'string' ? given : '' };
  }
}

/** Nothing picked or typed, default or not ("Clear answer" on an optional question). */
export function emptyDraft(question: QuestionView): Draft {
  switch (question.kind) {
    case 'confirm':
      return { kind: 'confirm', value: null };
    case 'choice':
      return { kind: 'choice', selected: null, custom: '', useCustom: false };
    case 'multi_choice':
      return { kind: 'multi_choice', selected: [], custom: '' };
    case 'text':
      return { kind: 'text', text: '' };
  }
}

export function initialForm(questions: QuestionView[]): FormState {
  return questions.map(initialDraft);
}

/** Whether a question's default is this option (for the "(default)" marker). */
export function isDefaultChoice(question: QuestionView, choiceId: string): boolean {
  const given = question.default;
  if (typeof given === 'string') return matchChoice(question, given)?.id === choiceId;
  if (Array.isArray(given)) {
    return given.some((entry) => typeof entry === 'string' && matchChoice(question, entry)?.id === choiceId);
  }
  return false;
}

// ---- Editing (pure: each returns a new draft) ----

/**
 * Yes or No. Picking the picked one again keeps it: a pre-selected default must not vanish
 * when the operator clicks it to agree. ("Clear answer" empties an optional question.)
 */
export function setConfirm(draft: Draft, value: boolean): Draft {
  return draft.kind === 'confirm' ? { kind: 'confirm', value } : draft;
}

/** A radio picks its option (and leaves the fill-in); a checkbox toggles its option. */
export function selectChoice(draft: Draft, choiceId: string): Draft {
  if (draft.kind === 'choice') return { ...draft, selected: choiceId, useCustom: false };
  if (draft.kind === 'multi_choice') {
    const selected = draft.selected.includes(choiceId)
      ? draft.selected.filter((id) => id !== choiceId)
      : [...draft.selected, choiceId];
    return { ...draft, selected };
  }
  return draft;
}

/** Option number `index` (0-based), as the digit keys pick it; out of range changes nothing. */
export function pickOption(question: QuestionView, draft: Draft, index: number): Draft {
  const choice = question.choices[index];
  return choice ? selectChoice(draft, choice.id) : draft;
}

/** Typing in the fill-in box; for a single choice it becomes the answer instead of the radios. */
export function setFillIn(draft: Draft, text: string): Draft {
  if (draft.kind === 'choice') return { ...draft, custom: text, useCustom: true };
  if (draft.kind === 'multi_choice') return { ...draft, custom: text };
  return draft;
}

export function setText(draft: Draft, text: string): Draft {
  return draft.kind === 'text' ? { kind: 'text', text } : draft;
}

// ---- Checking ----

/**
 * Rust's verdict on the answers as they stood (`ipc.checkAnswers`, or a refused submit): the
 * window never runs a request's pattern itself, since JavaScript's regular expressions
 * backtrack and a hostile pattern could freeze it, and rules such as lengths, number ranges,
 * pick counts and questions required by another answer are not mirrored here but asked of
 * Rust's checker.
 *
 * A question's problems count while its own answer is the one that was checked, so changing
 * one answer does not make the others' errors flicker away until Rust has looked again; the
 * question being edited shows its local state until then.
 */
export interface RustCheck {
  /** The request it is about. */
  id: string;
  /** The `answersKey` that was checked: whether a new verdict is needed. */
  answers: string;
  /** Question id → problems with its answer. */
  byQuestion: ReadonlyMap<string, string[]>;
}

/** The `answers` a `RustCheck` was made for, as `submit_answers` takes them. */
export function answersKey(questions: QuestionView[], form: FormState): string {
  return JSON.stringify(buildAnswers(questions, form));
}

/** One question's answer in `answersKey` form (undefined when unanswered). */
function answerKeyOf(question: QuestionView, draft: Draft | undefined): string | undefined {
  const value = draft ? answerValue(question, draft) : undefined;
  return value === undefined ? undefined : JSON.stringify(value);
}

/** The answers a verdict checked, by question id (a Map: ids come from untrusted files). */
function checkedAnswers(rust: RustCheck): Map<string, JsonValue> {
  return new Map(Object.entries(JSON.parse(rust.answers) as Record<string, JsonValue>));
}

/** The problems a verdict found with `question`, if its answer is still the one checked. */
function rustProblemsFor(
  question: QuestionView,
  draft: Draft | undefined,
  rust: RustCheck | undefined,
  checked: Map<string, JsonValue> | undefined,
): string[] | undefined {
  const problems = rust?.byQuestion.get(question.id);
  if (!problems || !checked) return undefined;
  const was = checked.has(question.id) ? JSON.stringify(checked.get(question.id)) : undefined;
  return was === answerKeyOf(question, draft) ? problems : undefined;
}

/**
 * Why `text` is too long for `question`'s answer, or null. The limit is the inbox's
 * (`question.max_answer_chars`, from Rust's `MAX_ANSWER_CHARS`), counted in characters.
 */
function tooLong(question: QuestionView, text: string): string | null {
  const max = question.max_answer_chars;
  // UTF-16 length is never below the count of characters, so most texts skip the count.
  const count = text.length <= max ? text.length : [...text].length;
  return count > max
    ? `is too long: ${count.toLocaleString('en')} characters, at most ${max.toLocaleString('en')}`
    : null;
}

export type CheckState = 'answered' | 'empty' | 'invalid';

export interface QuestionCheck {
  state: CheckState;
  /** Submitting must wait for this question: it is invalid, or required and empty. */
  blocking: boolean;
  /** Shown under the field when the value is invalid ("Does not match ^[A-Z]+$"). */
  message: string | null;
  /** Shown beside the disabled Submit button, naming the question. */
  reason: string | null;
}

function quoted(label: string): string {
  return `“${label}”`;
}

/**
 * One question's state. `label` names it in the reason (its tab label). `rust` is what Rust's
 * checker said about this question's answer in its latest verdict (see `RustCheck`).
 */
export function checkQuestion(
  question: QuestionView,
  draft: Draft,
  label: string,
  rust: readonly string[] = [],
): QuestionCheck {
  const local = checkLocally(question, draft, label);
  // What is wrong here already says more, and "required and has no answer" is the empty state.
  if (local.state === 'invalid' || (local.state === 'empty' && question.required)) return local;
  const problem = rust[0];
  if (problem === undefined) return local;
  if (local.state === 'empty' && question.required_when) {
    // The one thing Rust can find wrong with an empty optional question: another answer
    // requires it. Said in the questions' words rather than Rust's ids.
    return {
      state: 'invalid',
      blocking: true,
      message: `An answer is required ${question.required_when}`,
      reason: `Answer ${quoted(label)}: it is required ${question.required_when}`,
    };
  }
  return {
    state: 'invalid',
    blocking: true,
    message: problem.charAt(0).toUpperCase() + problem.slice(1),
    reason: `${quoted(label)}: ${problem}`,
  };
}

/** What the form can tell without Rust: empty, too long, or answered. */
function checkLocally(question: QuestionView, draft: Draft, label: string): QuestionCheck {
  const empty: QuestionCheck = question.required
    ? { state: 'empty', blocking: true, message: null, reason: `Answer ${quoted(label)} first` }
    : { state: 'empty', blocking: false, message: null, reason: null };
  const invalid = (problem: string): QuestionCheck => ({
    state: 'invalid',
    blocking: true,
    message: problem.charAt(0).toUpperCase() + problem.slice(1),
    reason: `${quoted(label)} ${problem}`,
  });
  const answered: QuestionCheck = { state: 'answered', blocking: false, message: null, reason: null };

  switch (draft.kind) {
    case 'confirm':
      return draft.value === null ? empty : answered;
    case 'choice': {
      if (draft.useCustom) {
        if (draft.custom.trim() === '') return empty;
        const long = tooLong(question, draft.custom.trim());
        return long ? invalid(`fill-in ${long}`) : answered;
      }
      return draft.selected === null ? empty : answered;
    }
    case 'multi_choice': {
      const fill = draft.custom.trim();
      if (fill) {
        const long = tooLong(question, fill);
        if (long) return invalid(`fill-in ${long}`);
      }
      return draft.selected.length === 0 && !fill ? empty : answered;
    }
    case 'text': {
      // Like Rust: only the empty string is "no answer"; spaces are an answer to check.
      if (draft.text === '') return empty;
      const long = tooLong(question, draft.text);
      return long ? invalid(long) : answered;
    }
  }
}

export interface FormCheck {
  valid: boolean;
  /** Why Submit is disabled: the first blocking question's reason. */
  reason: string | null;
  /** Index of the first blocking question, -1 when none. */
  firstBlocking: number;
  questions: QuestionCheck[];
}

/** `rust`: Rust's latest verdict on this request (see `RustCheck`). */
export function checkForm(questions: QuestionView[], form: FormState, rust?: RustCheck): FormCheck {
  const labels = tabLabels(questions);
  const checked = rust && rust.byQuestion.size > 0 ? checkedAnswers(rust) : undefined;
  const checks = questions.map((question, i) => {
    const draft = form[i] ?? initialDraft(question);
    const rustSays = rustProblemsFor(question, form[i], rust, checked);
    return checkQuestion(question, draft, labels[i] ?? question.id, rustSays);
  });
  const firstBlocking = checks.findIndex((check) => check.blocking);
  return {
    valid: firstBlocking === -1,
    reason: firstBlocking === -1 ? null : (checks[firstBlocking]?.reason ?? null),
    firstBlocking,
    questions: checks,
  };
}

// ---- Submitting ----

/**
 * The value to submit for one question, or undefined when it is unanswered (then it is left
 * out, and Rust fills a non-required question's default). Fill-ins that equal an option
 * become that option, as Rust would record them; fill-in text is trimmed.
 */
export function answerValue(question: QuestionView, draft: Draft): JsonValue | undefined {
  switch (draft.kind) {
    case 'confirm':
      return draft.value ?? undefined;
    case 'choice': {
      if (draft.useCustom) {
        const fill = draft.custom.trim();
        if (!fill) return undefined;
        return matchChoice(question, fill)?.id ?? fill;
      }
      return draft.selected ?? undefined;
    }
    case 'multi_choice': {
      const picked = question.choices.filter((c) => draft.selected.includes(c.id)).map((c) => c.id);
      const fill = draft.custom.trim();
      if (fill) {
        const id = matchChoice(question, fill)?.id ?? fill;
        // Rust refuses an option picked twice; a fill-in naming a ticked option is the same pick.
        if (!picked.includes(id)) picked.push(id);
      }
      return picked.length ? picked : undefined;
    }
    case 'text':
      return draft.text === '' ? undefined : draft.text;
  }
}

/** The `answers` argument of `submit_answers`: question id → value, unanswered ones left out. */
export function buildAnswers(questions: QuestionView[], form: FormState): Record<string, JsonValue> {
  const entries: Array<[string, JsonValue]> = [];
  questions.forEach((question, i) => {
    const draft = form[i];
    if (!draft) return;
    const value = answerValue(question, draft);
    if (value !== undefined) entries.push([question.id, value]);
  });
  // fromEntries defines own properties, so an id like "constructor" is safe here too.
  return Object.fromEntries(entries);
}

// ---- In words ----

/** Whether a choice answer is the operator's own text rather than an option. */
export function isCustomValue(question: QuestionView, value: JsonValue): boolean {
  if (question.kind === 'choice' && typeof value === 'string') return !matchChoice(question, value);
  if (question.kind === 'multi_choice' && Array.isArray(value)) {
    return value.some((entry) => typeof entry === 'string' && !matchChoice(question, entry));
  }
  return false;
}

/** "Yes"/"No", option labels joined by commas, or the text itself (like Rust's AnswerLine). */
export function answerInWords(question: QuestionView, value: JsonValue): string {
  const label = (text: string) => matchChoice(question, text)?.label ?? text;
  if (value === true) return 'Yes';
  if (value === false) return 'No';
  if (typeof value === 'string') return question.kind === 'text' ? value : label(value);
  if (Array.isArray(value)) {
    return value.map((entry) => (typeof entry === 'string' ? label(entry) : JSON.stringify(entry))).join(', ');
  }
  return JSON.stringify(value);
}

export interface SummaryLine {
  questionId: string;
  /** The tab label (the question's short name). */
  label: string;
  question: string;
  /** The answer in words, or what happens to a skipped question. */
  answer: string;
  skipped: boolean;
  /** Some of the answer is the operator's fill-in text. */
  custom: boolean;
}

/** The review screen: every question with its answer in words. */
export function summarize(questions: QuestionView[], form: FormState): SummaryLine[] {
  const labels = tabLabels(questions);
  return questions.map((question, i) => {
    const draft = form[i];
    const value = draft ? answerValue(question, draft) : undefined;
    const base = { questionId: question.id, label: labels[i] ?? question.id, question: question.question };
    if (value === undefined) {
      const answer =
        question.default !== null && question.default !== undefined
          ? `Skipped (the default applies: ${answerInWords(question, question.default)})`
          : 'Skipped';
      return { ...base, answer, skipped: true, custom: false };
    }
    return {
      ...base,
      answer: answerInWords(question, value),
      skipped: false,
      custom: isCustomValue(question, value),
    };
  });
}

/** Tab headers: each question's tab_label, numbered when two are the same, never blank. */
export function tabLabels(questions: QuestionView[]): string[] {
  const seen = new Map<string, number>();
  return questions.map((question, i) => {
    const label = question.tab_label.trim() || `Question ${i + 1}`;
    const count = (seen.get(label) ?? 0) + 1;
    seen.set(label, count);
    return count === 1 ? label : `${label} (${count})`;
  });
}

// ---- Problems from Rust ----

function unescapePointerToken(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

export interface SortedProblems {
  /** Question id → messages, for problems that point into one question's answer. */
  byQuestion: Map<string, string[]>;
  /** Everything else, shown above the form. */
  general: string[];
}

/**
 * Files each problem under the question its JSON pointer names. Rust points into the
 * answers object (`/<qid>`); `/answers/<qid>` and deeper pointers (`/<qid>/0`) are accepted
 * too, in case the pointer is ever rooted at the request.
 */
export function problemsByQuestion(problems: ProblemView[], questions: QuestionView[]): SortedProblems {
  const ids = new Set(questions.map((q) => q.id));
  const byQuestion = new Map<string, string[]>();
  const general: string[] = [];
  for (const problem of problems) {
    const tokens = problem.pointer.startsWith('/')
      ? problem.pointer.slice(1).split('/').map(unescapePointerToken)
      : [];
    let id: string | undefined;
    if (tokens[0] !== undefined && ids.has(tokens[0])) id = tokens[0];
    else if (tokens[0] === 'answers' && tokens[1] !== undefined && ids.has(tokens[1])) id = tokens[1];
    if (id === undefined) {
      general.push(problem.message);
    } else {
      const list = byQuestion.get(id) ?? [];
      list.push(problem.message);
      byQuestion.set(id, list);
    }
  }
  return { byQuestion, general };
}
