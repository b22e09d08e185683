import { describe, expect, it } from 'vitest';

import { activateRow, focusKindOf, keyAction, SHORTCUTS, type KeyContext, type KeyInput } from './keys';

function key(k: string, mods: Partial<KeyInput> = {}): KeyInput {
  return { key: k, ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, ...mods };
}

const list: KeyContext = {
  screen: 'list',
  focus: 'none',
  shortcutsOpen: false,
  formOpen: false,
  batch: false,
  onReview: false,
  firstQuestion: true,
  inQuestion: false,
  kind: null,
  declineOpen: false,
  quickKeys: [],
};

const answer: KeyContext = {
  ...list,
  screen: 'answer',
  formOpen: true,
  inQuestion: true,
  kind: 'choice',
};

const batch: KeyContext = { ...answer, batch: true };

describe('focusKindOf', () => {
  it('sorts elements by what keys they need', () => {
    expect(focusKindOf(null)).toBe('none');
    expect(focusKindOf({ tagName: 'DIV' })).toBe('none');
    expect(focusKindOf({ tagName: 'INPUT', type: 'search', dataset: { testid: 'search' } })).toBe('search');
    expect(focusKindOf({ tagName: 'INPUT', type: 'text' })).toBe('typing');
    expect(focusKindOf({ tagName: 'INPUT' })).toBe('typing');
    expect(focusKindOf({ tagName: 'TEXTAREA' })).toBe('typing');
    expect(focusKindOf({ tagName: 'SELECT' })).toBe('typing');
    expect(focusKindOf({ tagName: 'DIV', isContentEditable: true })).toBe('typing');
    expect(focusKindOf({ tagName: 'INPUT', type: 'radio' })).toBe('control');
    expect(focusKindOf({ tagName: 'INPUT', type: 'checkbox' })).toBe('control');
    expect(focusKindOf({ tagName: 'BUTTON' })).toBe('control');
    expect(focusKindOf({ tagName: 'a' })).toBe('control');
  });
});

describe('quitting', () => {
  it('quits on Ctrl+Q anywhere, typing included, and not on q or other modifiers', () => {
    const quit = { type: 'quit' };
    expect(keyAction(key('q', { ctrlKey: true }), list)).toEqual(quit);
    expect(keyAction(key('Q', { ctrlKey: true, shiftKey: true }), batch)).toEqual(quit);
    expect(keyAction(key('q', { ctrlKey: true }), { ...answer, focus: 'typing' })).toEqual(quit);
    expect(keyAction(key('q', { ctrlKey: true }), { ...list, screen: 'other' })).toEqual(quit);
    expect(keyAction(key('q'), list)).toBeNull();
    expect(keyAction(key('q', { ctrlKey: true, altKey: true }), list)).toBeNull();
    expect(keyAction(key('q', { metaKey: true }), list)).toBeNull();
  });
});

describe('lists', () => {
  it('moves with j/k and the arrows', () => {
    expect(keyAction(key('j'), list)).toEqual({ type: 'move', by: 1 });
    expect(keyAction(key('ArrowDown'), list)).toEqual({ type: 'move', by: 1 });
    expect(keyAction(key('k'), list)).toEqual({ type: 'move', by: -1 });
    expect(keyAction(key('ArrowUp'), list)).toEqual({ type: 'move', by: -1 });
    expect(keyAction(key('Home'), list)).toEqual({ type: 'move-to', where: 'first' });
    expect(keyAction(key('End'), list)).toEqual({ type: 'move-to', where: 'last' });
  });

  it('opens with Enter, from the list or the search box, but not on a button', () => {
    expect(keyAction(key('Enter'), list)).toEqual({ type: 'open' });
    expect(keyAction(key('Enter'), { ...list, focus: 'search' })).toEqual({ type: 'open' });
    expect(keyAction(key('Enter'), { ...list, focus: 'control' })).toBeNull();
  });

  it('focuses the search with / and clears it with Esc', () => {
    expect(keyAction(key('/'), list)).toEqual({ type: 'focus-search' });
    expect(keyAction(key('Escape'), { ...list, focus: 'search' })).toEqual({ type: 'clear-search' });
    expect(keyAction(key('Escape'), list)).toBeNull();
  });

  it('lets letters reach the search box, but arrows still move', () => {
    const searching = { ...list, focus: 'search' as const };
    expect(keyAction(key('j'), searching)).toBeNull();
    expect(keyAction(key('/'), searching)).toBeNull();
    expect(keyAction(key('?'), searching)).toBeNull();
    expect(keyAction(key('ArrowDown'), searching)).toEqual({ type: 'move', by: 1 });
  });

  it('leaves a select or text field its own keys', () => {
    const typing = { ...list, focus: 'typing' as const };
    expect(keyAction(key('ArrowDown'), typing)).toBeNull();
    expect(keyAction(key('j'), typing)).toBeNull();
    expect(keyAction(key('Enter'), typing)).toBeNull();
  });

  it('ignores keys with Ctrl, Alt or Cmd', () => {
    expect(keyAction(key('j', { ctrlKey: true }), list)).toBeNull();
    expect(keyAction(key('k', { metaKey: true }), list)).toBeNull();
    expect(keyAction(key('ArrowDown', { altKey: true }), list)).toBeNull();
  });

  it('does not pick options or submit in a list', () => {
    expect(keyAction(key('1'), list)).toBeNull();
    expect(keyAction(key('y'), list)).toBeNull();
    expect(keyAction(key('Enter', { ctrlKey: true }), list)).toBeNull();
  });
});

describe('shortcuts panel', () => {
  it('toggles with ? anywhere but in a text field', () => {
    expect(keyAction(key('?', { shiftKey: true }), list)).toEqual({ type: 'toggle-shortcuts' });
    expect(keyAction(key('?'), answer)).toEqual({ type: 'toggle-shortcuts' });
    expect(keyAction(key('?'), { ...answer, focus: 'typing' })).toBeNull();
  });

  it('closes with Esc before Esc does anything else', () => {
    expect(keyAction(key('Escape'), { ...answer, shortcutsOpen: true })).toEqual({ type: 'close-shortcuts' });
  });

  it('lists every key the mapping knows', () => {
    const listed = SHORTCUTS.flatMap((group) => group.shortcuts.flatMap((s) => s.keys)).join(' ');
    for (const k of ['j', 'k', '↓', '↑', 'Enter', '/', 'Esc', '?', '1', '9', 'y', 'n', 'Tab', 'Shift+Tab', 'Ctrl+Enter']) {
      expect(listed).toContain(k);
    }
  });
});

describe('answering', () => {
  it('picks option N with digits 1-9 in choice questions', () => {
    expect(keyAction(key('1'), answer)).toEqual({ type: 'pick', index: 0 });
    expect(keyAction(key('9'), { ...answer, kind: 'multi_choice' })).toEqual({ type: 'pick', index: 8 });
    expect(keyAction(key('0'), answer)).toBeNull();
  });

  it('answers confirm questions with y and n', () => {
    const confirm = { ...answer, kind: 'confirm' as const };
    expect(keyAction(key('y'), confirm)).toEqual({ type: 'confirm', value: true });
    expect(keyAction(key('n'), confirm)).toEqual({ type: 'confirm', value: false });
    expect(keyAction(key('1'), confirm)).toBeNull();
    expect(keyAction(key('y'), answer)).toBeNull();
  });

  it('never takes digits or y/n while typing', () => {
    const typing = { ...answer, focus: 'typing' as const };
    expect(keyAction(key('1'), typing)).toBeNull();
    expect(keyAction(key('y'), { ...typing, kind: 'confirm' })).toBeNull();
    expect(keyAction(key('2'), { ...answer, focus: 'search' })).toBeNull();
  });

  it('still picks with digits when focus is on a radio or button', () => {
    expect(keyAction(key('2'), { ...answer, focus: 'control' })).toEqual({ type: 'pick', index: 1 });
  });

  it('does nothing to a form that is closed (submitted, settled elsewhere)', () => {
    const closed = { ...answer, formOpen: false };
    expect(keyAction(key('1'), closed)).toBeNull();
    expect(keyAction(key('Enter', { ctrlKey: true }), closed)).toBeNull();
    expect(keyAction(key('Escape'), closed)).toEqual({ type: 'back' });
  });

  it('submits with Ctrl+Enter or Cmd+Enter, even while typing', () => {
    expect(keyAction(key('Enter', { ctrlKey: true }), answer)).toEqual({ type: 'submit' });
    expect(keyAction(key('Enter', { metaKey: true }), { ...answer, focus: 'typing' })).toEqual({ type: 'submit' });
    expect(keyAction(key('Enter'), answer)).toBeNull();
  });

  it('goes to the review step with Ctrl+Enter in a batch, and submits from there', () => {
    expect(keyAction(key('Enter', { ctrlKey: true }), batch)).toEqual({ type: 'review' });
    expect(keyAction(key('Enter', { ctrlKey: true }), { ...batch, onReview: true, kind: null })).toEqual({
      type: 'submit',
    });
  });

  it('leaves Ctrl+Enter alone in the decline box', () => {
    expect(keyAction(key('Enter', { ctrlKey: true }), { ...answer, declineOpen: true })).toBeNull();
  });

  it('goes back with Esc, closing the decline box or clearing the search first', () => {
    expect(keyAction(key('Escape'), answer)).toEqual({ type: 'back' });
    expect(keyAction(key('Escape'), { ...answer, focus: 'typing' })).toEqual({ type: 'back' });
    expect(keyAction(key('Escape'), { ...answer, declineOpen: true })).toEqual({ type: 'close-decline' });
    expect(keyAction(key('Escape'), { ...answer, focus: 'search' })).toEqual({ type: 'clear-search' });
  });

  it('focuses the search with / when not typing', () => {
    expect(keyAction(key('/'), answer)).toEqual({ type: 'focus-search' });
    expect(keyAction(key('/'), { ...answer, focus: 'typing' })).toBeNull();
  });
});

describe('Tab in a batch', () => {
  it('moves between questions while focus is in the question, text fields included', () => {
    expect(keyAction(key('Tab'), batch)).toEqual({ type: 'next-question' });
    expect(keyAction(key('Tab'), { ...batch, focus: 'typing' })).toEqual({ type: 'next-question' });
    expect(keyAction(key('Tab', { shiftKey: true }), { ...batch, firstQuestion: false })).toEqual({
      type: 'prev-question',
    });
  });

  it('lets focus leave normally at the ends', () => {
    expect(keyAction(key('Tab', { shiftKey: true }), batch)).toBeNull();
    expect(keyAction(key('Tab'), { ...batch, onReview: true, kind: null })).toBeNull();
  });

  it('is ordinary Tab outside the question panel and in a single-question form', () => {
    expect(keyAction(key('Tab'), { ...batch, inQuestion: false })).toBeNull();
    expect(keyAction(key('Tab'), answer)).toBeNull();
    expect(keyAction(key('Tab', { ctrlKey: true }), batch)).toBeNull();
  });
});

describe('other screens', () => {
  const other = { ...list, screen: 'other' as const };

  it('only search keys work there', () => {
    expect(keyAction(key('/'), other)).toEqual({ type: 'focus-search' });
    expect(keyAction(key('Escape'), { ...other, focus: 'search' })).toEqual({ type: 'clear-search' });
    expect(keyAction(key('j'), other)).toBeNull();
    expect(keyAction(key('Enter'), other)).toBeNull();
    expect(keyAction(key('1'), other)).toBeNull();
  });
});

describe('activateRow', () => {
  it('opens on Enter and Space, and nothing else', () => {
    const opened: string[] = [];
    let prevented = 0;
    for (const key of ['Enter', ' ', 'a', 'Escape']) {
      activateRow({ key, preventDefault: () => prevented++ }, () => opened.push(key));
    }
    expect(opened).toEqual(['Enter', ' ']);
    expect(prevented).toBe(2);
  });
});

describe('one key in the list', () => {
  const offered: KeyContext = { ...list, quickKeys: ['1', '2', '3'] };

  it('answers with the keys the reading pane offers, and only those', () => {
    expect(keyAction(key('2'), offered)).toEqual({ type: 'quick', key: '2' });
    expect(keyAction(key('4'), offered)).toBeNull();
    expect(keyAction(key('y'), { ...list, quickKeys: ['y', 'n'] })).toEqual({ type: 'quick', key: 'y' });
    expect(keyAction(key('2'), list)).toBeNull();
  });

  it('never takes a key typed into a field, or with a modifier', () => {
    for (const focus of ['search', 'typing'] as const) {
      expect(keyAction(key('1'), { ...offered, focus })).toBeNull();
    }
    expect(keyAction(key('1', { ctrlKey: true }), offered)).toBeNull();
    expect(keyAction(key('1', { altKey: true }), offered)).toBeNull();
  });

  it('leaves the list keys as they were', () => {
    expect(keyAction(key('j'), { ...list, quickKeys: ['y', 'n'] })).toEqual({ type: 'move', by: 1 });
    expect(keyAction(key('Enter'), offered)).toEqual({ type: 'open' });
  });
});
