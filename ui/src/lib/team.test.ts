import { describe, expect, it } from 'vitest';

import type { TeamView } from './bindings/TeamView';
import { approvalsText, assignedBadge, mayAnswer, teamSentence } from './team';

function team(overrides: Partial<TeamView> = {}): TeamView {
  return {
    assign: ['alice', '@ops'],
    assignees: ['alice', 'bob'],
    unknown: [],
    mine: false,
    takeover: false,
    approvals_needed: 1,
    approvals: [],
    progress: '0 of 1',
    nobody: null,
    ...overrides,
  };
}

describe('teams', () => {
  it('lets only assignees answer, and others only by taking over where the rule allows', () => {
    expect(mayAnswer(null, false)).toBe(true);
    expect(mayAnswer(team({ mine: true }), false)).toBe(true);
    expect(mayAnswer(team(), false)).toBe(false);
    expect(mayAnswer(team(), true)).toBe(false);
    expect(mayAnswer(team({ takeover: true }), false)).toBe(false);
    expect(mayAnswer(team({ takeover: true }), true)).toBe(true);
    expect(mayAnswer(team({ nobody: 'escalate' }), false)).toBe(true);
    expect(mayAnswer(team({ nobody: 'hold' }), false)).toBe(false);
  });

  it('words the assignment and the approvals', () => {
    expect(assignedBadge(null)).toBeNull();
    expect(assignedBadge(team())).toBe('assigned to alice, @ops');
    expect(assignedBadge(team({ mine: true }))).toBe('assigned to you');
    expect(approvalsText(team())).toBeNull();
    expect(approvalsText(team({ approvals_needed: 2, progress: '1 of 2: approved by alice' }))).toBe(
      '1 of 2: approved by alice',
    );
    expect(teamSentence(team())).toContain('read-only');
    expect(teamSentence(team({ takeover: true }))).toContain('take it over');
    expect(teamSentence(team({ nobody: 'hold' }))).toContain('it is held');
  });
});
