// What the operator's policy made of a pending request, in words: the "held" badge of a row,
// and the note at the top of a request (which rule, why it waits for a person, what the
// policy does next). Pure functions of the judgement and the time, tested without a clock.

import type { JudgementView } from './bindings/JudgementView';
import type { NextStepView } from './bindings/NextStepView';
import { formatDuration, formatWhen, parseTime } from './time';

export interface HeldBadge {
  /** Short, for a list row: "held · critical-needs-a-person". */
  label: string;
  /** Everything, for the badge's tooltip: why, by which rule, what happens next. */
  title: string;
}

/**
 * The badge of a request the policy holds for a person (it asked to settle itself and a rule
 * said no); null when nothing is held.
 */
export function heldBadge(judgement: JudgementView | null, now: number): HeldBadge | null {
  if (!judgement?.held) return null;
  const next = judgement.next ? ` Next: ${nextStepText(judgement.next, now)}.` : '';
  return {
    label: `held · ${judgement.rule}`,
    title: `Held for a person by the rule ${judgement.rule}: ${judgement.held}.${next}`,
  };
}

/**
 * "it expires in 2 h 5 min (14:05)", or "it expires now (due 14:05)" once the time has come
 * (the inbox does it at its next turn).
 */
export function nextStepText(next: NextStepView, now: number): string {
  const at = parseTime(next.at);
  if (!Number.isFinite(at)) return next.what;
  const when = formatWhen(at, now);
  const left = at - now;
  return left > 0 ? `${next.what} in ${formatDuration(left)} (${when})` : `${next.what} now (due ${when})`;
}

/**
 * The rule's verdict in words without the rule's name in front ("rule x: holds autonomous
 * mode; …" → "holds autonomous mode; …"), for where the name is shown beside it.
 */
export function verdictText(judgement: JudgementView): string {
  const prefix = `rule ${judgement.rule}: `;
  return judgement.summary.startsWith(prefix) ? judgement.summary.slice(prefix.length) : judgement.summary;
}
