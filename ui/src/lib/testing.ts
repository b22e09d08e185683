// Builders for unit tests: complete contract objects with sensible defaults.

import type { HistoryView } from './bindings/HistoryView';
import type { JudgementView } from './bindings/JudgementView';
import type { OutcomeView } from './bindings/OutcomeView';
import type { QuestionView } from './bindings/QuestionView';
import type { RequestView } from './bindings/RequestView';
import type { RowView } from './bindings/RowView';

export function row(overrides: Partial<RowView> = {}): RowView {
  return {
    id: 'req-1',
    state: 'pending',
    title: 'Deploy the billing service',
    source: { app: 'release-bot', run: 'build-1187', tool: null, host: null, project: null, cwd: null, url: null },
    priority: 'normal',
    autonomous: false,
    question_count: 1,
    placed_at: '2026-12-03T09:00:00.000Z',
    deadline: null,
    settled_at: null,
    answered_by: null,
    unwritten: null,
    blocked: null,
    placed_by: null,
    judgement: null,
    snoozed_until: null,
    ...overrides,
  };
}

export function question(overrides: Partial<QuestionView> = {}): QuestionView {
  return {
    id: 'q1',
    kind: 'confirm',
    wire_type: 'confirm',
    question: 'Deploy now?',
    description_html: null,
    tab_label: 'Deploy now?',
    choices: [],
    default: null,
    required: true,
    required_when: null,
    pattern: null,
    allow_custom: false,
    // What Rust sends (inbox_protocol::limits::MAX_ANSWER_CHARS); tests may set their own.
    max_answer_chars: 10_000,
    ...overrides,
  };
}

export function choices(...ids: string[]) {
  return ids.map((id) => ({ id, label: id.charAt(0).toUpperCase() + id.slice(1), description: null }));
}

export function request(questions: QuestionView[], overrides: Partial<RequestView> = {}): RequestView {
  return {
    row: row({ question_count: questions.length }),
    version: 'a'.repeat(64),
    questions,
    confirm_title: null,
    confirm_description_html: null,
    outcome: null,
    quick: null,
    ...overrides,
  };
}

export function outcome(overrides: Partial<OutcomeView> = {}): OutcomeView {
  return {
    status: 'answered',
    answered_by: 'operator:dana',
    answered_at: '2026-12-03T09:14:05.000Z',
    instance: 'ops-laptop/01J',
    surface: null,
    device: null,
    answers: [],
    reason: null,
    errors: [],
    ...overrides,
  };
}

export function historyEntry(overrides: Partial<HistoryView> = {}): HistoryView {
  return {
    row: row({ state: 'answered', settled_at: '2026-12-03T09:14:05.000Z', answered_by: 'operator:dana' }),
    outcome: outcome(),
    time_to_answer_ms: 845_000,
    ...overrides,
  };
}

export function judgement(overrides: Partial<JudgementView> = {}): JudgementView {
  return {
    rule: 'critical-needs-a-person',
    summary: 'rule critical-needs-a-person: holds autonomous mode; notifies critically, no buttons',
    notify: 'critical',
    buttons: false,
    held: 'rule critical-needs-a-person: its autonomous mode is held for a person',
    next: null,
    team: null,
    ...overrides,
  };
}
