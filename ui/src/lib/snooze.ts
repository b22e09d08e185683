// Snoozing a request: the lengths offered, and what the window says about a snooze. The
// lengths are written as the policy file writes durations; Rust reads them (humantime).

import type { SnoozeView } from './bindings/SnoozeView';
import { formatDuration, formatWhen, parseTime } from './time';

export interface SnoozeChoice {
  /** Sent to Rust as it is. */
  duration: string;
  label: string;
}

export const SNOOZE_CHOICES: SnoozeChoice[] = [
  { duration: '15m', label: '15 min' },
  { duration: '1h', label: '1 hour' },
  { duration: '4h', label: '4 hours' },
];

/** "until 14:05, back in 3 h 59 min"; "back any moment now" once the time has come. */
export function snoozedUntilText(until: string, now: number): string {
  const at = parseTime(until);
  if (!Number.isFinite(at)) return '';
  const left = at - now;
  const back = left > 0 ? `back in ${formatDuration(left)}` : 'back any moment now';
  return `until ${formatWhen(at, now)}, ${back}`;
}

/** What the answer view says after a snooze was taken. */
export function snoozeResultText(view: SnoozeView, now: number): string {
  const when = formatWhen(parseTime(view.until), now);
  return view.capped
    ? `Snoozed until ${when}, when it expires: a snooze cannot outlast the request.`
    : `Snoozed until ${when}. It is out of the Pending list until then, and you are told again when it is back.`;
}
