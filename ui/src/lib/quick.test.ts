import { describe, expect, it } from 'vitest';

import type { QuickView } from './bindings/QuickView';
import { ARM_MS, isArmed, optionForKey, quickAnswers, quickKeys } from './quick';

const decision: QuickView = {
  kind: 'decision',
  question_id: 'decision',
  reason_id: 'reason',
  options: [
    { key: '1', label: 'Allow once', value: 'Allow once', asks_reason: false },
    { key: '2', label: 'Deny', value: 'Deny', asks_reason: true },
    { key: '3', label: "Yes, and don't ask again for npm test", value: 'rule-0', asks_reason: false },
  ],
};

const confirm: QuickView = {
  kind: 'confirm',
  question_id: 'go',
  reason_id: null,
  options: [
    { key: 'y', label: 'Yes', value: true, asks_reason: false },
    { key: 'n', label: 'No', value: false, asks_reason: false },
  ],
};

describe('one key, one answer', () => {
  it('maps only the keys Rust offered', () => {
    expect(optionForKey(decision, '2')?.label).toBe('Deny');
    expect(optionForKey(decision, '4')).toBeNull();
    expect(optionForKey(confirm, 'y')?.value).toBe(true);
    expect(optionForKey(confirm, '1')).toBeNull();
    expect(quickKeys(decision)).toEqual(['1', '2', '3']);
    expect(quickKeys(null)).toEqual([]);
  });

  it('sends what the form would, and a reason only with a Deny that asks for one', () => {
    expect(quickAnswers(decision, decision.options[0]!)).toEqual({ decision: 'Allow once' });
    expect(quickAnswers(decision, decision.options[0]!, 'ignored')).toEqual({ decision: 'Allow once' });
    expect(quickAnswers(decision, decision.options[1]!, '  not in prod ')).toEqual({
      decision: 'Deny',
      reason: 'not in prod',
    });
    expect(quickAnswers(decision, decision.options[1]!, '   ')).toEqual({ decision: 'Deny' });
    expect(quickAnswers(confirm, confirm.options[1]!)).toEqual({ go: false });
  });

  it('arms only after the request has been on screen a while', () => {
    expect(isArmed(null, 10_000)).toBe(false);
    expect(isArmed(1_000, 1_100)).toBe(false);
    expect(isArmed(1_000, 1_000 + ARM_MS - 1)).toBe(false);
    expect(isArmed(1_000, 1_000 + ARM_MS)).toBe(true);
    expect(ARM_MS).toBeGreaterThanOrEqual(500);
    expect(ARM_MS).toBeLessThanOrEqual(1000);
  });
});
