import { describe, expect, it } from 'vitest';

import { SNOOZE_CHOICES, snoozedUntilText, snoozeResultText } from './snooze';

const NOW = Date.parse('2026-12-03T12:00:00.000Z');

describe('snooze words', () => {
  it('offers short, readable lengths that Rust reads as durations', () => {
    expect(SNOOZE_CHOICES.map((c) => c.duration)).toEqual(['15m', '1h', '4h']);
  });

  it('says when a snoozed request is back', () => {
    expect(snoozedUntilText('2026-12-03T16:00:00.000Z', NOW)).toMatch(/^until \d\d:\d\d, back in 4 h$/);
    expect(snoozedUntilText('2026-12-03T11:00:00.000Z', NOW)).toMatch(/back any moment now$/);
    expect(snoozedUntilText('never', NOW)).toBe('');
  });

  it('says when a snooze was cut to the request expiry', () => {
    expect(snoozeResultText({ until: '2026-12-03T12:10:00.000Z', capped: true }, NOW)).toContain(
      'when it expires',
    );
    expect(snoozeResultText({ until: '2026-12-03T13:00:00.000Z', capped: false }, NOW)).toContain(
      'out of the Pending list',
    );
  });
});
