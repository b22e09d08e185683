// One key, one answer (the reading pane and the phone page): which option a key picks, the
// answers it sends, and when keys are armed. Rust decides which requests qualify and with
// which values (inbox-app quick.rs); this only maps keys onto what Rust offered. Pure, so the
// whole mapping and the arming rule are unit-tested.

import type { QuickOption } from './bindings/QuickOption';
import type { QuickView } from './bindings/QuickView';
import type { JsonValue } from './bindings/serde_json/JsonValue';

/**
 * How long a request must have been on screen, unchanged and under the focus, before a key
 * or a tap decides it. Browsers guard their permission prompts the same way (a short delay
 * before the buttons take input), so a key meant for what was there a moment ago, or typed
 * as a request appeared under the cursor, decides nothing. A key before that is ignored,
 * never queued.
 */
export const ARM_MS = 700;

/** The option `key` picks, or null when it picks none. */
export function optionForKey(quick: QuickView, key: string): QuickOption | null {
  return quick.options.find((option) => option.key === key) ?? null;
}

/** Every key the request takes, for the key mapping. */
export function quickKeys(quick: QuickView | null): string[] {
  return quick ? quick.options.map((option) => option.key) : [];
}

/**
 * The answers a pick sends: exactly what the form would submit for it, plus the reason
 * where one was given to a Deny that asks for it (an empty reason is no reason).
 */
export function quickAnswers(quick: QuickView, option: QuickOption, reason = ''): Record<string, JsonValue> {
  const answers: Record<string, JsonValue> = { [quick.question_id]: option.value };
  const why = reason.trim();
  if (option.asks_reason && quick.reason_id && why) answers[quick.reason_id] = why;
  return answers;
}

/**
 * Arming: when what is shown last appeared or changed (`shownAt`, a `performance.now()`
 * time, or null while nothing is shown), whether a key pressed at `now` may act on it.
 */
export function isArmed(shownAt: number | null, now: number): boolean {
  return shownAt !== null && now - shownAt >= ARM_MS;
}
