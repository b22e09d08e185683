// The policy editor's pure parts: problems as the operator reads them, where in the text a
// problem is (to put the cursor there), and whether Save may be pressed. The text is checked
// by Rust's own parser (`checkPolicy`): the window never parses TOML itself, so it cannot
// disagree with the inbox or the command line about what is valid.

import type { PolicyProblemView } from './bindings/PolicyProblemView';

/** "line 3, column 5"; "" when the parser could not place the problem. */
export function problemPlace(problem: PolicyProblemView): string {
  if (problem.line <= 0) return '';
  return problem.column > 0 ? `line ${problem.line}, column ${problem.column}` : `line ${problem.line}`;
}

/** "line 3, column 5: unknown key bogus". */
export function problemText(problem: PolicyProblemView): string {
  const place = problemPlace(problem);
  return place ? `${place}: ${problem.message}` : problem.message;
}

/**
 * The index in `text` (UTF-16 code units, as a textarea's selection counts) of 1-based `line`
 * and `column`, the column counted in characters as Rust counts it. Clamped to the line's end
 * and the text's end; 0 for an unplaced problem.
 */
export function offsetOf(text: string, line: number, column: number): number {
  if (line <= 0) return 0;
  let start = 0;
  for (let l = 1; l < line; l++) {
    const newline = text.indexOf('\n', start);
    if (newline === -1) return text.length;
    start = newline + 1;
  }
  const end = text.indexOf('\n', start);
  const lineText = text.slice(start, end === -1 ? text.length : end);
  const chars = Array.from(lineText).slice(0, Math.max(column - 1, 0));
  return start + chars.join('').length;
}

export interface SaveState {
  enabled: boolean;
  /** Why Save cannot be pressed; null when it can, or when there is simply nothing to save. */
  reason: string | null;
}

/**
 * Whether the policy text may be saved. `problems` is Rust's verdict on exactly this text,
 * null until it has been given; `exists`: the file exists (without it, saving the text
 * unchanged still creates the file).
 */
export function saveState(args: {
  text: string;
  savedText: string;
  exists: boolean;
  problems: PolicyProblemView[] | null;
  saving: boolean;
}): SaveState {
  if (args.saving) return { enabled: false, reason: null };
  if (args.problems === null) return { enabled: false, reason: 'Checking…' };
  const count = args.problems.length;
  if (count) {
    return { enabled: false, reason: `Fix the ${count === 1 ? 'problem' : `${count} problems`} first: an invalid policy is never saved.` };
  }
  if (args.exists && args.text === args.savedText) return { enabled: false, reason: null };
  return { enabled: true, reason: null };
}
