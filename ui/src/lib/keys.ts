// Keyboard shortcuts: which key does what, where. Pure (a key and a description of the
// screen in, an action out) so the whole mapping is unit-tested; App.svelte gathers the
// context from the DOM and carries the action out. SHORTCUTS below is the help panel's
// content, kept next to the mapping so the two cannot drift apart.

export type Screen = 'list' | 'answer' | 'other';

/**
 * Where the focus is, as far as keys care:
 * - `none`: nothing in particular (the page, a list row);
 * - `search`: the search box;
 * - `typing`: another field that takes letters and digits (text input, textarea, select);
 * - `control`: a button, link, checkbox or radio (Enter and Space are theirs).
 */
export type FocusKind = 'none' | 'search' | 'typing' | 'control';

export interface KeyContext {
  screen: Screen;
  focus: FocusKind;
  shortcutsOpen: boolean;
  /** Answer view: the form can still be edited (not submitted, settled or withdrawn). */
  formOpen: boolean;
  /** Answer view: the request has several questions (tabs and a review step). */
  batch: boolean;
  /** Answer view: showing the review step of a batch. */
  onReview: boolean;
  /** Answer view: the current question is the first one. */
  firstQuestion: boolean;
  /** Answer view: focus is inside the current question's panel (or on nothing). */
  inQuestion: boolean;
  /** Answer view: the kind of the current question, null on the review step. */
  kind: 'confirm' | 'choice' | 'multi_choice' | 'text' | null;
  /** Answer view: the decline box is open. */
  declineOpen: boolean;
  /**
   * List: the keys that answer the selected request in one press (the reading pane's
   * options: `y`/`n`, or `1`-`9`); empty when it has none, or the pane is not shown.
   */
  quickKeys: string[];
}

export interface KeyInput {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  shiftKey: boolean;
}

export type Action =
  | { type: 'toggle-shortcuts' }
  | { type: 'close-shortcuts' }
  | { type: 'move'; by: number }
  | { type: 'move-to'; where: 'first' | 'last' }
  | { type: 'open' }
  | { type: 'focus-search' }
  | { type: 'clear-search' }
  | { type: 'pick'; index: number }
  | { type: 'quick'; key: string }
  | { type: 'confirm'; value: boolean }
  | { type: 'next-question' }
  | { type: 'prev-question' }
  | { type: 'review' }
  | { type: 'submit' }
  | { type: 'close-decline' }
  | { type: 'back' }
  | { type: 'quit' };

/** Whether an element takes typed text (so letters and digits must reach it). */
export function focusKindOf(el: { tagName: string; type?: string; isContentEditable?: boolean; dataset?: Record<string, string | undefined> } | null): FocusKind {
  if (!el) return 'none';
  if (el.dataset?.testid === 'search') return 'search';
  if (el.isContentEditable) return 'typing';
  const tag = el.tagName.toUpperCase();
  if (tag === 'TEXTAREA' || tag === 'SELECT') return 'typing';
  if (tag === 'INPUT') {
    const type = (el.type ?? 'text').toLowerCase();
    if (['checkbox', 'radio', 'button', 'submit', 'reset', 'range', 'color', 'file'].includes(type)) return 'control';
    return 'typing';
  }
  if (tag === 'BUTTON' || tag === 'A' || tag === 'SUMMARY') return 'control';
  return 'none';
}

function plain(input: KeyInput): boolean {
  return !input.ctrlKey && !input.metaKey && !input.altKey;
}

/** The action a key press means here, or null to let the browser have it. */
export function keyAction(input: KeyInput, ctx: KeyContext): Action | null {
  const { key } = input;
  const typing = ctx.focus === 'typing' || ctx.focus === 'search';

  // Ctrl+Q quits the app from anywhere, typing included, as desktop apps do. (Only the app
  // window acts on it: a browser tab is the browser's to close.)
  if ((key === 'q' || key === 'Q') && input.ctrlKey && !input.altKey && !input.metaKey) return { type: 'quit' };
  if (key === 'Escape' && ctx.shortcutsOpen) return { type: 'close-shortcuts' };
  if (key === '?' && plain(input) && !typing) return { type: 'toggle-shortcuts' };

  if (ctx.screen === 'list') return listAction(input, ctx, typing);
  if (ctx.screen === 'answer') return answerAction(input, ctx, typing);
  // Problems and Settings: only search.
  if (key === '/' && plain(input) && !typing) return { type: 'focus-search' };
  if (key === 'Escape' && ctx.focus === 'search') return { type: 'clear-search' };
  return null;
}

function listAction(input: KeyInput, ctx: KeyContext, typing: boolean): Action | null {
  const { key } = input;
  if (!plain(input)) return null;
  if (key === 'Escape') return ctx.focus === 'search' ? { type: 'clear-search' } : null;
  // Arrows also work from the search box (type, then pick), but not in a select or textarea.
  if (key === 'ArrowDown' && ctx.focus !== 'typing') return { type: 'move', by: 1 };
  if (key === 'ArrowUp' && ctx.focus !== 'typing') return { type: 'move', by: -1 };
  // Enter opens from the list or the search box; on a button it stays the button's.
  if (key === 'Enter' && (ctx.focus === 'none' || ctx.focus === 'search')) return { type: 'open' };
  if (typing) return null;
  // One key answers the request in the reading pane. Never from a text field (above): a
  // letter typed into the search box stays there.
  if (ctx.quickKeys.includes(key)) return { type: 'quick', key };
  if (key === 'j') return { type: 'move', by: 1 };
  if (key === 'k') return { type: 'move', by: -1 };
  if (key === 'Home') return { type: 'move-to', where: 'first' };
  if (key === 'End') return { type: 'move-to', where: 'last' };
  if (key === '/') return { type: 'focus-search' };
  return null;
}

function answerAction(input: KeyInput, ctx: KeyContext, typing: boolean): Action | null {
  const { key } = input;
  if (key === 'Escape') {
    if (ctx.focus === 'search') return { type: 'clear-search' };
    if (ctx.declineOpen) return { type: 'close-decline' };
    return { type: 'back' };
  }
  if (key === '/' && plain(input) && !typing) return { type: 'focus-search' };
  if (!ctx.formOpen) return null;

  // Ctrl+Enter (Cmd+Enter on a Mac) works even while typing: it is how a text answer is sent.
  if (key === 'Enter' && (input.ctrlKey || input.metaKey) && !input.altKey) {
    if (ctx.declineOpen) return null;
    return ctx.batch && !ctx.onReview ? { type: 'review' } : { type: 'submit' };
  }

  // In a batch, Tab steps through the questions while focus is in the question panel (text
  // fields included, so Tab always means "next question" there). Focus leaves normally at
  // the ends: Shift+Tab on the first question, and Tab on the review step.
  if (key === 'Tab' && plain(input) && ctx.batch && !ctx.onReview && ctx.inQuestion) {
    if (!input.shiftKey) return { type: 'next-question' };
    if (!ctx.firstQuestion) return { type: 'prev-question' };
    return null;
  }

  if (!plain(input) || typing || ctx.onReview) return null;
  if (/^[1-9]$/.test(key) && (ctx.kind === 'choice' || ctx.kind === 'multi_choice')) {
    return { type: 'pick', index: Number(key) - 1 };
  }
  if (ctx.kind === 'confirm' && (key === 'y' || key === 'n')) return { type: 'confirm', value: key === 'y' };
  return null;
}

export interface Shortcut {
  keys: string[];
  what: string;
}

export interface ShortcutGroup {
  where: string;
  shortcuts: Shortcut[];
}

/** Every shortcut, for the help panel. */
export const SHORTCUTS: ShortcutGroup[] = [
  {
    where: 'Everywhere',
    shortcuts: [
      { keys: ['?'], what: 'Show or hide this list' },
      { keys: ['/'], what: 'Search' },
      { keys: ['Esc'], what: 'Clear the search / close this list' },
      { keys: ['Ctrl+Q'], what: 'Quit Answer Inbox (the app window)' },
    ],
  },
  {
    where: 'Pending and History',
    shortcuts: [
      { keys: ['j', '↓'], what: 'Next request' },
      { keys: ['k', '↑'], what: 'Previous request' },
      { keys: ['Home', 'End'], what: 'First / last request' },
      { keys: ['Enter'], what: 'Open the selected request' },
      { keys: ['1', '…', '9'], what: 'Pending: answer the request in the reading pane with that option' },
      { keys: ['y', 'n'], what: 'Pending: answer a yes/no request in the reading pane' },
    ],
  },
  {
    where: 'Answering',
    shortcuts: [
      { keys: ['1', '…', '9'], what: 'Pick option N (toggle it in a multiple choice); in a batch, then the next question' },
      { keys: ['y', 'n'], what: 'Yes / No; in a batch, then the next question' },
      { keys: ['Tab', 'Shift+Tab'], what: 'Next / previous question (in a batch)' },
      { keys: ['Ctrl+Enter'], what: 'Submit (in a batch: go to the review step)' },
      { keys: ['Esc'], what: 'Back: review → last question → list' },
    ],
  },
];

/** Enter or Space on a focused list row opens it, as a click does. */
export function activateRow(event: { key: string; preventDefault(): void }, open: () => void): void {
  if (event.key === 'Enter' || event.key === ' ') {
    event.preventDefault();
    open();
  }
}
