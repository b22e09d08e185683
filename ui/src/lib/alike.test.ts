import { describe, expect, it } from 'vitest';

import type { AlikeAnswerView } from './bindings/AlikeAnswerView';
import type { AlikeMemberView } from './bindings/AlikeMemberView';
import { alikeCount, alikeResult, alikeTargets, tallyAlike, tallyText } from './alike';
import { outcome, row } from './testing';

function member(id: string): AlikeMemberView {
  return { row: row({ id }), version: `${id}-version`.padEnd(64, '0') };
}

describe('alike groups', () => {
  it('offers the group only with two or more members including the request', () => {
    const group = [member('run-1'), member('run-2'), member('run-3')];
    expect(alikeCount(group, 'run-2')).toBe(3);
    expect(alikeCount(group, 'other')).toBeNull();
    expect(alikeCount([member('run-1')], 'run-1')).toBeNull();
    expect(alikeCount([], 'run-1')).toBeNull();
  });

  it('sends each member with the version it was listed with', () => {
    expect(alikeTargets([member('a'), member('b')])).toEqual([
      { id: 'a', version: member('a').version },
      { id: 'b', version: member('b').version },
    ]);
  });
});

describe('alike results', () => {
  const results: AlikeAnswerView[] = [
    { id: 'a', submitted: { result: 'settled', outcome: outcome() }, refused: null },
    { id: 'b', submitted: { result: 'already_settled', outcome: outcome({ answered_by: 'operator:kim' }) }, refused: null },
    { id: 'c', submitted: null, refused: 'its file changed after it was listed' },
    { id: 'd', submitted: { result: 'kept', outcome: outcome(), error: 'read-only' }, refused: null },
    { id: 'e', submitted: { result: 'settled', outcome: outcome() }, refused: null },
  ];

  it('says what became of each member', () => {
    expect(results.map((r) => alikeResult(r).state)).toEqual(['settled', 'elsewhere', 'refused', 'kept', 'settled']);
    expect(alikeResult(results[1]!).text).toContain('operator:kim');
    expect(alikeResult(results[2]!).text).toBe('Not answered: its file changed after it was listed');
  });

  it('counts them in words', () => {
    const tally = tallyAlike(results);
    expect(tally).toEqual({ settled: 2, elsewhere: 1, kept: 1, refused: 1 });
    expect(tallyText(tally)).toBe('2 answered, 1 kept for the spool, 1 already settled elsewhere, 1 not answered');
    expect(tallyText(tallyAlike([]))).toBe('nothing was sent');
  });
});
