import { describe, expect, it } from 'vitest';

import {
  answerInWords,
  answersKey,
  answerValue,
  buildAnswers,
  checkForm,
  checkQuestion,
  emptyDraft,
  initialDraft,
  initialForm,
  isDefaultChoice,
  matchChoice,
  pickOption,
  problemsByQuestion,
  selectChoice,
  setConfirm,
  setFillIn,
  setText,
  summarize,
  tabLabels,
  type Draft,
  type FormState,
  type RustCheck,
} from './form';
import { choices, question } from './testing';

const confirmQ = question({ id: 'migrate', kind: 'confirm', question: 'Run the migration?', tab_label: 'Migration' });
const choiceQ = question({
  id: 'target',
  kind: 'choice',
  question: 'Deploy to which environment?',
  tab_label: 'Target env',
  choices: [
    { id: 'stg', label: 'Staging', description: 'safe' },
    { id: 'prod', label: 'Production', description: null },
  ],
});
const multiQ = question({
  id: 'checks',
  kind: 'multi_choice',
  question: 'Which checks?',
  tab_label: 'Checks',
  choices: choices('lint', 'unit', 'e2e'),
});
const textQ = question({ id: 'ticket', kind: 'text', question: 'Ticket id?', tab_label: 'Ticket id', pattern: '^[A-Z]+-\\d+$' });

describe('initialDraft', () => {
  it('leaves everything empty without defaults', () => {
    expect(initialDraft(confirmQ)).toEqual({ kind: 'confirm', value: null });
    expect(initialDraft(choiceQ)).toEqual({ kind: 'choice', selected: null, custom: '', useCustom: false });
    expect(initialDraft(multiQ)).toEqual({ kind: 'multi_choice', selected: [], custom: '' });
    expect(initialDraft(textQ)).toEqual({ kind: 'text', text: '' });
  });

  it('pre-selects defaults of every kind', () => {
    expect(initialDraft({ ...confirmQ, default: false })).toEqual({ kind: 'confirm', value: false });
    expect(initialDraft({ ...choiceQ, default: 'prod' })).toMatchObject({ selected: 'prod', useCustom: false });
    expect(initialDraft({ ...multiQ, default: ['unit', 'lint'] })).toMatchObject({ selected: ['unit', 'lint'] });
    expect(initialDraft({ ...textQ, default: 'OPS-1' })).toEqual({ kind: 'text', text: 'OPS-1' });
  });

  it('puts a fill-in default in the fill-in box', () => {
    const q = { ...choiceQ, allow_custom: true, default: 'Valkey' };
    expect(initialDraft(q)).toEqual({ kind: 'choice', selected: null, custom: 'Valkey', useCustom: true });
    const m = { ...multiQ, allow_custom: true, default: ['unit', 'fuzz'] };
    expect(initialDraft(m)).toEqual({ kind: 'multi_choice', selected: ['unit'], custom: 'fuzz' });
  });

  it('accepts a default given by label', () => {
    expect(initialDraft({ ...choiceQ, default: 'Production' })).toMatchObject({ selected: 'prod' });
  });

  it('ignores a default of the wrong type', () => {
    expect(initialDraft({ ...confirmQ, default: 'yes' })).toEqual({ kind: 'confirm', value: null });
    expect(initialDraft({ ...textQ, default: 3 })).toEqual({ kind: 'text', text: '' });
  });

  it('builds one draft per question, in order', () => {
    expect(initialForm([textQ, confirmQ]).map((d) => d.kind)).toEqual(['text', 'confirm']);
  });
});

describe('matchChoice and isDefaultChoice', () => {
  it('matches an id, or a label that only one option has', () => {
    expect(matchChoice(choiceQ, 'prod')?.id).toBe('prod');
    expect(matchChoice(choiceQ, 'Staging')?.id).toBe('stg');
    expect(matchChoice(choiceQ, 'staging')).toBeNull();
    const twins = { ...choiceQ, choices: [{ id: 'a', label: 'Same', description: null }, { id: 'b', label: 'Same', description: null }] };
    expect(matchChoice(twins, 'Same')).toBeNull();
  });

  it('marks the default options', () => {
    expect(isDefaultChoice({ ...choiceQ, default: 'stg' }, 'stg')).toBe(true);
    expect(isDefaultChoice({ ...choiceQ, default: 'stg' }, 'prod')).toBe(false);
    expect(isDefaultChoice({ ...multiQ, default: ['e2e'] }, 'e2e')).toBe(true);
    expect(isDefaultChoice(choiceQ, 'stg')).toBe(false);
  });
});

describe('editing', () => {
  it('picks yes or no, and picking the picked one keeps it', () => {
    const yes = setConfirm(initialDraft(confirmQ), true);
    expect(yes).toEqual({ kind: 'confirm', value: true });
    expect(setConfirm(yes, true)).toEqual({ kind: 'confirm', value: true });
    expect(setConfirm(yes, false)).toEqual({ kind: 'confirm', value: false });
  });

  it('a radio replaces the fill-in; typing a fill-in replaces the radio', () => {
    let draft: Draft = setFillIn(initialDraft({ ...choiceQ, allow_custom: true }), 'Valkey');
    expect(draft).toMatchObject({ useCustom: true, custom: 'Valkey' });
    draft = selectChoice(draft, 'prod');
    expect(draft).toMatchObject({ useCustom: false, selected: 'prod', custom: 'Valkey' });
    expect(answerValue(choiceQ, draft)).toBe('prod');
  });

  it('checkboxes toggle', () => {
    let draft = selectChoice(initialDraft(multiQ), 'unit');
    draft = selectChoice(draft, 'lint');
    expect(draft).toMatchObject({ selected: ['unit', 'lint'] });
    expect(selectChoice(draft, 'unit')).toMatchObject({ selected: ['lint'] });
  });

  it('picks option N by position, ignoring numbers past the end', () => {
    expect(pickOption(choiceQ, initialDraft(choiceQ), 1)).toMatchObject({ selected: 'prod' });
    expect(pickOption(multiQ, initialDraft(multiQ), 2)).toMatchObject({ selected: ['e2e'] });
    const draft = initialDraft(choiceQ);
    expect(pickOption(choiceQ, draft, 5)).toBe(draft);
  });

  it('does not change a draft of another kind', () => {
    const text = initialDraft(textQ);
    expect(setConfirm(text, true)).toBe(text);
    expect(selectChoice(text, 'x')).toBe(text);
    expect(setFillIn(text, 'x')).toBe(text);
    expect(setText(initialDraft(confirmQ), 'x')).toEqual({ kind: 'confirm', value: null });
  });

  it('clears to nothing, even where there is a default', () => {
    expect(emptyDraft({ ...choiceQ, default: 'stg' })).toEqual({ kind: 'choice', selected: null, custom: '', useCustom: false });
    expect(emptyDraft({ ...confirmQ, default: true })).toEqual({ kind: 'confirm', value: null });
    expect(emptyDraft(multiQ)).toEqual({ kind: 'multi_choice', selected: [], custom: '' });
    expect(emptyDraft(textQ)).toEqual({ kind: 'text', text: '' });
  });
});

describe('checkQuestion', () => {
  it('asks for a required answer by the question name', () => {
    expect(checkQuestion(choiceQ, initialDraft(choiceQ), 'Target env')).toEqual({
      state: 'empty',
      blocking: true,
      message: null,
      reason: 'Answer “Target env” first',
    });
  });

  it('lets an optional question stay empty', () => {
    const optional = { ...confirmQ, required: false };
    expect(checkQuestion(optional, initialDraft(optional), 'x')).toMatchObject({ state: 'empty', blocking: false, reason: null });
  });

  it('shows Rust’s verdict on an answer, never running the pattern itself', () => {
    const check = (text: string, rust?: string[]) => checkQuestion(textQ, { kind: 'text', text }, 'Ticket id', rust);
    expect(check('OPS-12', [])).toMatchObject({ state: 'answered', blocking: false });
    expect(check('ops-12', ['"ops-12" does not match the pattern ^[A-Z]+-\\d+$'])).toEqual({
      state: 'invalid',
      blocking: true,
      message: '"ops-12" does not match the pattern ^[A-Z]+-\\d+$',
      reason: '“Ticket id”: "ops-12" does not match the pattern ^[A-Z]+-\\d+$',
    });
    // Without a verdict the text counts as answered; Rust checks again on submit anyway.
    expect(check('ops-12').state).toBe('answered');
  });

  it('keeps its own word on a required empty question and on text over the limit', () => {
    const required = ['question "ticket" is required and has no answer'];
    expect(checkQuestion(textQ, { kind: 'text', text: '' }, 'Ticket id', required)).toMatchObject({
      state: 'empty',
      reason: 'Answer “Ticket id” first',
    });
    const short = { ...textQ, max_answer_chars: 5 };
    const long = checkQuestion(short, { kind: 'text', text: 'a'.repeat(6) }, 'Ticket id', ['does not match']);
    expect(long.message).toBe('Is too long: 6 characters, at most 5');
  });

  it('blocks an empty optional question that another answer makes required', () => {
    const optional = { ...textQ, required: false };
    const rust = ['question "ticket" is required when "decision" is "response"'];
    expect(checkQuestion(optional, { kind: 'text', text: '' }, 'Ticket id', rust)).toMatchObject({
      state: 'invalid',
      blocking: true,
      reason: '“Ticket id”: question "ticket" is required when "decision" is "response"',
    });
    // Said in the questions' words when the view gives them.
    const worded = { ...optional, required_when: 'when Decision is “Respond”' };
    expect(checkQuestion(worded, { kind: 'text', text: '' }, 'Ticket id', rust)).toMatchObject({
      state: 'invalid',
      message: 'An answer is required when Decision is “Respond”',
      reason: 'Answer “Ticket id”: it is required when Decision is “Respond”',
    });
    expect(checkQuestion(worded, { kind: 'text', text: '' }, 'Ticket id').state).toBe('empty');
  });

  it('keeps a question’s verdict while its own answer is the one Rust checked', () => {
    const other = { ...confirmQ, id: 'go', required: false };
    const form: FormState = [{ kind: 'text', text: 'nope' }, { kind: 'confirm', value: null }];
    const rust: RustCheck = {
      id: 'r1',
      answers: answersKey([textQ, other], form),
      byQuestion: new Map([['ticket', ['"nope" does not match the pattern']]]),
    };
    expect(checkForm([textQ, other], form, rust)).toMatchObject({ valid: false, firstBlocking: 0 });
    expect(checkForm([textQ, other], form)).toMatchObject({ valid: true });
    // Another answer changed: the ticket's error stays until Rust has looked again.
    const elsewhere: FormState = [form[0]!, { kind: 'confirm', value: true }];
    expect(checkForm([textQ, other], elsewhere, rust)).toMatchObject({ valid: false, firstBlocking: 0 });
    // The ticket itself changed: what Rust said about "nope" is not said about "OPS-1", nor
    // about an emptied field ("required and has no answer" must not linger over new text).
    const typed: FormState = [{ kind: 'text', text: 'OPS-1' }, form[1]!];
    expect(checkForm([textQ, other], typed, rust)).toMatchObject({ valid: true });
    const emptyRust: RustCheck = {
      id: 'r1',
      answers: answersKey([textQ, other], [{ kind: 'text', text: '' }, form[1]!]),
      byQuestion: new Map([['ticket', ['question "ticket" is required and has no answer']]]),
    };
    expect(checkForm([textQ, other], typed, emptyRust).questions[0]).toMatchObject({ state: 'answered', message: null });
  });

  it('treats spaces as a text answer (as Rust does) but not as a fill-in', () => {
    const free = { ...textQ, pattern: null };
    expect(checkQuestion(free, { kind: 'text', text: '  ' }, 'x').state).toBe('answered');
    const fill: Draft = { kind: 'choice', selected: 'stg', custom: '   ', useCustom: true };
    expect(checkQuestion({ ...choiceQ, allow_custom: true }, fill, 'Target env')).toMatchObject({
      state: 'empty',
      reason: 'Answer “Target env” first',
    });
  });

  it('refuses text over the limit the question carries, counting characters not UTF-16 units', () => {
    const free = { ...textQ, pattern: null, max_answer_chars: 10_000 };
    expect(checkQuestion(free, { kind: 'text', text: 'a'.repeat(10_000) }, 'x').state).toBe('answered');
    expect(checkQuestion(free, { kind: 'text', text: '😀'.repeat(10_000) }, 'x').state).toBe('answered');
    const long = checkQuestion(free, { kind: 'text', text: 'a'.repeat(10_001) }, 'Notes');
    expect(long.state).toBe('invalid');
    expect(long.reason).toBe('“Notes” is too long: 10,001 characters, at most 10,000');
    // The number is the view's (Rust's MAX_ANSWER_CHARS), not one of the form's own.
    const tight = { ...free, max_answer_chars: 3 };
    expect(checkQuestion(tight, { kind: 'text', text: '😀😀😀' }, 'x').state).toBe('answered');
    expect(checkQuestion(tight, { kind: 'text', text: 'abcd' }, 'Notes').reason).toBe(
      '“Notes” is too long: 4 characters, at most 3',
    );
  });

  it('holds fill-ins to the same limit, trimmed', () => {
    const choice = { ...choiceQ, allow_custom: true, max_answer_chars: 3 };
    const fill = (custom: string): Draft => ({ kind: 'choice', selected: null, custom, useCustom: true });
    expect(checkQuestion(choice, fill('  abc  '), 'Target env').state).toBe('answered');
    expect(checkQuestion(choice, fill('abcd'), 'Target env').reason).toBe(
      '“Target env” fill-in is too long: 4 characters, at most 3',
    );
    const multi = { ...multiQ, allow_custom: true, max_answer_chars: 3 };
    const extra: Draft = { kind: 'multi_choice', selected: ['lint'], custom: 'abcd' };
    expect(checkQuestion(multi, extra, 'Checks').message).toBe('Fill-in is too long: 4 characters, at most 3');
  });

  it('needs at least one pick or a fill-in in a required multiple choice', () => {
    const m = { ...multiQ, allow_custom: true };
    expect(checkQuestion(m, initialDraft(m), 'Checks').state).toBe('empty');
    expect(checkQuestion(m, { kind: 'multi_choice', selected: [], custom: 'fuzz' }, 'Checks').state).toBe('answered');
    expect(checkQuestion(m, { kind: 'multi_choice', selected: ['unit'], custom: '' }, 'Checks').state).toBe('answered');
  });
});

describe('checkForm', () => {
  const qs = [choiceQ, textQ, { ...confirmQ, required: false }];
  /** Rust's verdict on `form`: the ticket "bad" does not match its pattern. */
  const badTicket = (form: FormState): RustCheck => ({
    id: 'r1',
    answers: answersKey(qs, form),
    byQuestion: new Map([['ticket', ['"bad" does not match the pattern ^[A-Z]+-\\d+$']]]),
  });

  it('gives the first blocking question as the reason', () => {
    const form = initialForm(qs);
    form[1] = { kind: 'text', text: 'bad' };
    const result = checkForm(qs, form, badTicket(form));
    expect(result.valid).toBe(false);
    expect(result.firstBlocking).toBe(0);
    expect(result.reason).toBe('Answer “Target env” first');
    expect(result.questions.map((q) => q.state)).toEqual(['empty', 'invalid', 'empty']);
  });

  it('moves on to the next problem once the first is fixed', () => {
    const form = initialForm(qs);
    form[0] = { kind: 'choice', selected: 'prod', custom: '', useCustom: false };
    form[1] = { kind: 'text', text: 'bad' };
    expect(checkForm(qs, form, badTicket(form))).toMatchObject({
      firstBlocking: 1,
      reason: '“Ticket id”: "bad" does not match the pattern ^[A-Z]+-\\d+$',
    });
  });

  it('is valid when every required question is answered and nothing is invalid', () => {
    const form = initialForm(qs);
    form[0] = { kind: 'choice', selected: 'prod', custom: '', useCustom: false };
    form[1] = { kind: 'text', text: 'OPS-7' };
    expect(checkForm(qs, form)).toMatchObject({ valid: true, reason: null, firstBlocking: -1 });
  });

  it('is valid at once when defaults cover every required question', () => {
    const withDefaults = [{ ...choiceQ, default: 'stg' }, { ...confirmQ, default: true }];
    expect(checkForm(withDefaults, initialForm(withDefaults)).valid).toBe(true);
  });
});

describe('buildAnswers', () => {
  it('gives each kind its JSON type', () => {
    const qs = [confirmQ, choiceQ, multiQ, textQ];
    const form: Draft[] = [
      { kind: 'confirm', value: false },
      { kind: 'choice', selected: 'prod', custom: '', useCustom: false },
      { kind: 'multi_choice', selected: ['e2e', 'lint'], custom: '' },
      { kind: 'text', text: 'OPS-7' },
    ];
    expect(buildAnswers(qs, form)).toEqual({ migrate: false, target: 'prod', checks: ['lint', 'e2e'], ticket: 'OPS-7' });
  });

  it('leaves unanswered questions out', () => {
    const qs = [{ ...confirmQ, required: false }, { ...textQ, required: false }, { ...multiQ, required: false }];
    expect(buildAnswers(qs, initialForm(qs))).toEqual({});
  });

  it('sends pre-selected defaults as answers', () => {
    const qs = [{ ...choiceQ, default: 'stg' }];
    expect(buildAnswers(qs, initialForm(qs))).toEqual({ target: 'stg' });
  });

  it('sends fill-in text, trimmed, and adds it to a multiple choice', () => {
    const c = { ...choiceQ, allow_custom: true };
    const m = { ...multiQ, allow_custom: true };
    const form: Draft[] = [
      { kind: 'choice', selected: 'stg', custom: '  Valkey ', useCustom: true },
      { kind: 'multi_choice', selected: ['unit'], custom: 'fuzz' },
    ];
    expect(buildAnswers([c, m], form)).toEqual({ target: 'Valkey', checks: ['unit', 'fuzz'] });
  });

  it('turns a fill-in naming an option into that option, never twice', () => {
    const c = { ...choiceQ, allow_custom: true };
    const m = { ...multiQ, allow_custom: true };
    expect(answerValue(c, { kind: 'choice', selected: null, custom: 'Production', useCustom: true })).toBe('prod');
    expect(answerValue(m, { kind: 'multi_choice', selected: ['unit'], custom: 'Unit' })).toEqual(['unit']);
    expect(answerValue(m, { kind: 'multi_choice', selected: [], custom: 'lint' })).toEqual(['lint']);
  });

  it('leaves out a multiple choice with nothing picked and a blank fill-in', () => {
    expect(answerValue(multiQ, { kind: 'multi_choice', selected: [], custom: '  ' })).toBeUndefined();
  });

  it('survives question ids that are Object.prototype names', () => {
    const qs = [{ ...confirmQ, id: 'constructor' }, { ...confirmQ, id: '__proto__' }];
    const answers = buildAnswers(qs, [{ kind: 'confirm', value: true }, { kind: 'confirm', value: false }]);
    expect(JSON.parse(JSON.stringify(answers))).toEqual(JSON.parse('{"constructor": true, "__proto__": false}'));
  });
});

describe('answers in words', () => {
  it('says Yes/No, labels, label lists and text', () => {
    expect(answerInWords(confirmQ, true)).toBe('Yes');
    expect(answerInWords(confirmQ, false)).toBe('No');
    expect(answerInWords(choiceQ, 'prod')).toBe('Production');
    expect(answerInWords(choiceQ, 'Valkey')).toBe('Valkey');
    expect(answerInWords(multiQ, ['lint', 'e2e', 'fuzz'])).toBe('Lint, E2e, fuzz');
    // A text answer that happens to equal an option id stays the text.
    expect(answerInWords({ ...textQ, choices: choices('x') }, 'x')).toBe('x');
  });

  it('summarises every question, with skipped ones and fill-ins marked', () => {
    const qs = [
      choiceQ,
      { ...multiQ, allow_custom: true },
      { ...confirmQ, required: false, default: true },
      { ...textQ, required: false },
    ];
    const form: Draft[] = [
      { kind: 'choice', selected: 'prod', custom: '', useCustom: false },
      { kind: 'multi_choice', selected: ['unit'], custom: 'fuzz' },
      { kind: 'confirm', value: null },
      { kind: 'text', text: '' },
    ];
    expect(summarize(qs, form)).toEqual([
      { questionId: 'target', label: 'Target env', question: choiceQ.question, answer: 'Production', skipped: false, custom: false },
      { questionId: 'checks', label: 'Checks', question: multiQ.question, answer: 'Unit, fuzz', skipped: false, custom: true },
      { questionId: 'migrate', label: 'Migration', question: confirmQ.question, answer: 'Skipped (the default applies: Yes)', skipped: true, custom: false },
      { questionId: 'ticket', label: 'Ticket id', question: textQ.question, answer: 'Skipped', skipped: true, custom: false },
    ]);
  });
});

describe('tabLabels', () => {
  it('uses tab_label, numbers duplicates and never leaves one blank', () => {
    const qs = [
      question({ id: 'a', tab_label: 'Deploy build 1187' }),
      question({ id: 'b', tab_label: 'Deploy build 1187' }),
      question({ id: 'c', tab_label: '  ' }),
      question({ id: 'd', tab_label: 'Notes' }),
    ];
    expect(tabLabels(qs)).toEqual(['Deploy build 1187', 'Deploy build 1187 (2)', 'Question 3', 'Notes']);
  });
});

describe('problemsByQuestion', () => {
  const qs = [choiceQ, textQ, question({ id: 'a/b~c' })];

  it('files problems under the question their pointer names', () => {
    const sorted = problemsByQuestion(
      [
        { pointer: '/target', message: 'not one of the options' },
        { pointer: '/answers/ticket', message: 'does not match' },
        { pointer: '/ticket/0', message: 'also wrong' },
        { pointer: '/a~1b~0c', message: 'escaped id' },
      ],
      qs,
    );
    expect(sorted.byQuestion.get('target')).toEqual(['not one of the options']);
    expect(sorted.byQuestion.get('ticket')).toEqual(['does not match', 'also wrong']);
    expect(sorted.byQuestion.get('a/b~c')).toEqual(['escaped id']);
    expect(sorted.general).toEqual([]);
  });

  it('keeps problems that name no question as general ones', () => {
    const sorted = problemsByQuestion(
      [
        { pointer: '', message: 'whole file' },
        { pointer: '/nope', message: 'there is no question "nope"' },
        { pointer: 'relative', message: 'odd pointer' },
      ],
      qs,
    );
    expect(sorted.byQuestion.size).toBe(0);
    expect(sorted.general).toEqual(['whole file', 'there is no question "nope"', 'odd pointer']);
  });
});
