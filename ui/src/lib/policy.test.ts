import { describe, expect, it } from 'vitest';

import { offsetOf, problemPlace, problemText, saveState } from './policy';

describe('policy problems', () => {
  it('are placed by line and column when known', () => {
    expect(problemText({ line: 3, column: 1, message: 'unknown key bogus' })).toBe(
      'line 3, column 1: unknown key bogus',
    );
    expect(problemPlace({ line: 2, column: 0, message: 'x' })).toBe('line 2');
    expect(problemText({ line: 0, column: 0, message: 'no rules' })).toBe('no rules');
  });
});

describe('offsetOf', () => {
  const text = 'ab\ncdé f\n\nlast';
  it('finds a line and a column counted in characters', () => {
    expect(offsetOf(text, 1, 1)).toBe(0);
    expect(offsetOf(text, 2, 1)).toBe(3);
    expect(offsetOf(text, 2, 4)).toBe(6);
    expect(offsetOf(text, 4, 2)).toBe(text.indexOf('last') + 1);
  });

  it('counts a character outside the BMP as one column, as Rust does', () => {
    const emoji = 'name = "😀x"';
    expect(emoji.slice(offsetOf(emoji, 1, 10))).toBe('x"');
  });

  it('clamps to the end of the line and of the text', () => {
    expect(offsetOf(text, 1, 99)).toBe(2);
    expect(offsetOf(text, 99, 1)).toBe(text.length);
    expect(offsetOf(text, 0, 0)).toBe(0);
  });
});

describe('saveState', () => {
  const base = { text: 'a', savedText: 'a', exists: true, problems: [], saving: false };
  it('refuses while the text has problems, and says why', () => {
    const state = saveState({ ...base, text: 'b', problems: [{ line: 1, column: 1, message: 'x' }] });
    expect(state.enabled).toBe(false);
    expect(state.reason).toContain('Fix the problem first');
    expect(saveState({ ...base, text: 'b', problems: [
      { line: 1, column: 1, message: 'x' },
      { line: 2, column: 1, message: 'y' },
    ] }).reason).toContain('2 problems');
  });

  it('waits for the check of the text as it is', () => {
    expect(saveState({ ...base, text: 'b', problems: null })).toEqual({ enabled: false, reason: 'Checking…' });
  });

  it('saves a changed valid text, or creates the missing file', () => {
    expect(saveState({ ...base, text: 'b' }).enabled).toBe(true);
    expect(saveState(base)).toEqual({ enabled: false, reason: null });
    expect(saveState({ ...base, exists: false }).enabled).toBe(true);
    expect(saveState({ ...base, text: 'b', saving: true }).enabled).toBe(false);
  });
});
