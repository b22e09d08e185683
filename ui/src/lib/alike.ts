// "Answer all alike": pending requests that ask exactly the same questions, answered once.
// The window lists every request it will settle before anything is sent, and each member is
// answered bound to the version listed; these are the pure parts of that flow.

import type { AlikeAnswerView } from './bindings/AlikeAnswerView';
import type { AlikeMemberView } from './bindings/AlikeMemberView';
import type { AlikeTarget } from './bindings/AlikeTarget';

/** How many requests an "Answer all alike" would settle; null when `id` is in no group. */
export function alikeCount(members: AlikeMemberView[], id: string): number | null {
  if (members.length < 2 || !members.some((member) => member.row.id === id)) return null;
  return members.length;
}

/** What the answer to the group sends: each member's id and the version listed. */
export function alikeTargets(members: AlikeMemberView[]): AlikeTarget[] {
  return members.map((member) => ({ id: member.row.id, version: member.version }));
}

export type AlikeState = 'settled' | 'elsewhere' | 'kept' | 'refused';

/** What became of one member, in a word and a sentence. */
export function alikeResult(result: AlikeAnswerView): { state: AlikeState; text: string } {
  const submitted = result.submitted;
  if (!submitted) return { state: 'refused', text: `Not answered: ${result.refused ?? 'refused'}` };
  switch (submitted.result) {
    case 'settled':
      return { state: 'settled', text: 'Answered' };
    case 'already_settled':
      return {
        state: 'elsewhere',
        text: `Already settled by ${submitted.outcome.answered_by}; that outcome stands`,
      };
    case 'kept':
      return { state: 'kept', text: `Answered, waiting for the spool to take it (${submitted.error})` };
    case 'approved':
      // A two-person request: this approval is recorded; it settles when enough people approve.
      return { state: 'kept', text: `Approved (${submitted.progress}); it settles when ${submitted.needed} people approve` };
  }
}

export type AlikeTally = Record<AlikeState, number>;

export function tallyAlike(results: AlikeAnswerView[]): AlikeTally {
  const tally: AlikeTally = { settled: 0, elsewhere: 0, kept: 0, refused: 0 };
  for (const result of results) tally[alikeResult(result).state] += 1;
  return tally;
}

/** "3 answered, 1 already settled elsewhere, 1 not answered". */
export function tallyText(tally: AlikeTally): string {
  const parts = [
    tally.settled && `${tally.settled} answered`,
    tally.kept && `${tally.kept} kept for the spool`,
    tally.elsewhere && `${tally.elsewhere} already settled elsewhere`,
    tally.refused && `${tally.refused} not answered`,
  ].filter((part): part is string => !!part);
  return parts.length ? parts.join(', ') : 'nothing was sent';
}
