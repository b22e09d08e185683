import { describe, expect, it } from 'vitest';

import { formatAge, formatCountdown, formatDuration, formatWaiting, formatWhen, parseTime } from './time';

const NOW = Date.parse('2026-12-03T12:00:00Z');
const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;

describe('formatAge', () => {
  it('says just now for the first seconds, and for clocks slightly ahead', () => {
    expect(formatAge(NOW, NOW)).toBe('just now');
    expect(formatAge(NOW - 4 * s, NOW)).toBe('just now');
    expect(formatAge(NOW + 30 * s, NOW)).toBe('just now');
  });

  it('counts seconds, minutes, hours and days, rounding down', () => {
    expect(formatAge(NOW - 42 * s, NOW)).toBe('42s ago');
    expect(formatAge(NOW - 3 * m - 59 * s, NOW)).toBe('3m ago');
    expect(formatAge(NOW - 59 * m, NOW)).toBe('59m ago');
    expect(formatAge(NOW - 5 * h - 10 * m, NOW)).toBe('5h ago');
    expect(formatAge(NOW - 2 * d - 23 * h, NOW)).toBe('2d ago');
  });

  it('is empty for a time it cannot read', () => {
    expect(formatAge(parseTime('not a time'), NOW)).toBe('');
  });
});

describe('formatCountdown', () => {
  it('shows minutes and seconds and is not urgent above a minute', () => {
    expect(formatCountdown(NOW + 4 * m + 10 * s, NOW)).toEqual({
      text: 'expires in 4m 10s',
      urgent: false,
      expired: false,
    });
  });

  it('is urgent under a minute and rounds the last second up', () => {
    expect(formatCountdown(NOW + 59 * s, NOW)).toMatchObject({ text: 'expires in 59s', urgent: true });
    expect(formatCountdown(NOW + 200, NOW)).toMatchObject({ text: 'expires in 1s', urgent: true });
    expect(formatCountdown(NOW + 60 * s, NOW)).toMatchObject({ text: 'expires in 1m 0s', urgent: false });
  });

  it('uses hours and days for long deadlines', () => {
    expect(formatCountdown(NOW + 2 * h + 5 * m, NOW).text).toBe('expires in 2h 5m');
    expect(formatCountdown(NOW + 3 * d + 4 * h, NOW).text).toBe('expires in 3d 4h');
  });

  it('says expired once the deadline has passed', () => {
    expect(formatCountdown(NOW, NOW)).toEqual({ text: 'expired', urgent: true, expired: true });
    expect(formatCountdown(NOW - h, NOW).expired).toBe(true);
  });
});

describe('formatDuration', () => {
  it('reads like the History column', () => {
    expect(formatDuration(400)).toBe('under 1 s');
    expect(formatDuration(42 * s)).toBe('42 s');
    expect(formatDuration(3 * m + 20 * s)).toBe('3 min');
    expect(formatDuration(h)).toBe('1 h');
    expect(formatDuration(h + 5 * m)).toBe('1 h 5 min');
    expect(formatDuration(2 * d)).toBe('2 d');
    expect(formatDuration(2 * d + 3 * h + 4 * m)).toBe('2 d 3 h');
  });

  it('is empty for nonsense', () => {
    expect(formatDuration(-1)).toBe('');
    expect(formatDuration(Number.NaN)).toBe('');
  });
});

describe('formatWhen', () => {
  // Built from local-time parts, so the test holds in any time zone.
  const now = new Date(2026, 11, 3, 15, 30).getTime();

  it('shows only the time today', () => {
    expect(formatWhen(new Date(2026, 11, 3, 9, 4).getTime(), now)).toBe('09:04');
  });

  it('adds the day this year and the year before that', () => {
    expect(formatWhen(new Date(2026, 10, 28, 23, 59).getTime(), now)).toBe('Nov 28 23:59');
    expect(formatWhen(new Date(2025, 0, 2, 7, 0).getTime(), now)).toBe('Jan 2 2025 07:00');
  });

  it('is empty for a time it cannot read', () => {
    expect(formatWhen(Number.NaN, now)).toBe('');
  });
});

describe('formatWaiting', () => {
  const now = 10 * 24 * 3600 * 1000;
  it('says how long a request has held its asker up', () => {
    expect(formatWaiting(now - 4_000, now)).toBe('waiting 4s');
    expect(formatWaiting(now - 3 * 60_000, now)).toBe('waiting 3m');
    expect(formatWaiting(now - (2 * 3600 + 5 * 60) * 1000, now)).toBe('waiting 2h 5m');
    expect(formatWaiting(now - 3 * 24 * 3600 * 1000, now)).toBe('waiting 3d');
    expect(formatWaiting(now + 5_000, now)).toBe('waiting 0s');
    expect(formatWaiting(Number.NaN, now)).toBe('');
  });
});
