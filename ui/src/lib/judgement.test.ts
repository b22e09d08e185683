import { describe, expect, it } from 'vitest';

import { heldBadge, nextStepText, verdictText } from './judgement';
import { judgement } from './testing';

const NOW = Date.parse('2026-12-03T12:00:00.000Z');

describe('heldBadge', () => {
  it('names the rule and carries the reason and the next step in its title', () => {
    const badge = heldBadge(
      judgement({ next: { at: '2026-12-03T14:05:00.000Z', what: 'it expires' } }),
      NOW,
    );
    expect(badge?.label).toBe('held · critical-needs-a-person');
    expect(badge?.title).toContain('by the rule critical-needs-a-person');
    expect(badge?.title).toContain('its autonomous mode is held for a person');
    expect(badge?.title).toContain('Next: it expires in 2 h 5 min');
  });

  it('is absent when nothing is held or there is no judgement', () => {
    expect(heldBadge(judgement({ held: null }), NOW)).toBeNull();
    expect(heldBadge(null, NOW)).toBeNull();
  });
});

describe('nextStepText', () => {
  it('says how long until the step, or that it is due', () => {
    expect(nextStepText({ at: '2026-12-03T12:30:00.000Z', what: 'its defaults answer it' }, NOW)).toMatch(
      /^its defaults answer it in 30 min \(\d\d:\d\d\)$/,
    );
    expect(nextStepText({ at: '2026-12-03T11:59:00.000Z', what: 'it expires' }, NOW)).toMatch(
      /^it expires now \(due \d\d:\d\d\)$/,
    );
  });

  it('falls back to the words alone when the time cannot be read', () => {
    expect(nextStepText({ at: 'soon', what: 'it expires' }, NOW)).toBe('it expires');
  });
});

describe('verdictText', () => {
  it('drops the rule name the note shows beside it', () => {
    expect(verdictText(judgement({ summary: 'rule critical-needs-a-person: holds autonomous mode' }))).toBe(
      'holds autonomous mode',
    );
    expect(verdictText(judgement({ summary: 'no rule matched: a person decides' }))).toBe(
      'no rule matched: a person decides',
    );
  });
});
