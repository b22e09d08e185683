import { describe, expect, it } from 'vitest';

import type { PendingDelta } from './bindings/PendingDelta';
import type { RowView } from './bindings/RowView';
import { indexRows } from './filter';
import { applyDelta, DeltaLog, pendingOrder, touchesSnoozed } from './pending';
import { row } from './testing';

function delta(overrides: Partial<PendingDelta> = {}): PendingDelta {
  return { rows: [], gone: [], snoozed: false, ...overrides };
}

const at = (minute: number) => `2026-12-03T09:${String(minute).padStart(2, '0')}:00.000Z`;

/** A pending row: `id`, its priority, placed at 09:`minute`. */
function pend(id: string, priority: RowView['priority'], minute: number, extra: Partial<RowView> = {}): RowView {
  return row({ id, priority, placed_at: at(minute), ...extra });
}

const ids = (list: { item: RowView }[]) => list.map((entry) => entry.item.id);

/** A list as `list_pending` returns it: c1 c2 (critical), n1 n2 n3 (normal), l1 (low). */
function sample() {
  return indexRows([
    pend('c1', 'critical', 5),
    pend('c2', 'critical', 20),
    pend('n1', 'normal', 1),
    pend('n2', 'normal', 10),
    pend('n3', 'normal', 30),
    pend('l1', 'low', 0),
  ]);
}

describe('pendingOrder', () => {
  it('is Rust’s order: most urgent first, then oldest first', () => {
    const rows = [
      pend('late-low', 'low', 50),
      pend('new-critical', 'critical', 40),
      pend('old-normal', 'normal', 2),
      pend('old-critical', 'critical', 3),
      pend('high', 'high', 59),
      pend('new-normal', 'normal', 9),
    ];
    expect([...rows].sort(pendingOrder).map((r) => r.id)).toEqual([
      'old-critical',
      'new-critical',
      'high',
      'old-normal',
      'new-normal',
      'late-low',
    ]);
  });

  it('reads the times, not their text, and ties on the same millisecond', () => {
    const a = pend('a', 'normal', 0, { placed_at: '2026-12-03T09:00:00.120Z' });
    const b = pend('b', 'normal', 0, { placed_at: '2026-12-03T09:00:00.900Z' });
    expect(pendingOrder(a, b)).toBeLessThan(0);
    expect(pendingOrder(a, { ...b, placed_at: a.placed_at })).toBe(0);
  });
});

describe('applyDelta', () => {
  it('puts arriving rows in the list’s order', () => {
    const list = applyDelta(
      sample(),
      delta({
        rows: [pend('first', 'critical', 0), pend('mid', 'normal', 15), pend('last', 'low', 59), pend('h', 'high', 0)],
      }),
    );
    expect(ids(list)).toEqual(['first', 'c1', 'c2', 'h', 'n1', 'n2', 'mid', 'n3', 'l1', 'last']);
  });

  it('inserts into an empty list', () => {
    const list = applyDelta([], delta({ rows: [pend('b', 'normal', 2), pend('a', 'critical', 9)] }));
    expect(ids(list)).toEqual(['a', 'b']);
  });

  it('drops the rows that left, and ignores ids it does not hold', () => {
    const list = applyDelta(sample(), delta({ gone: ['n2', 'nobody', 'c1'] }));
    expect(ids(list)).toEqual(['c2', 'n1', 'n3', 'l1']);
  });

  it('replaces a row that changed in its place, with its new search text', () => {
    const before = sample();
    const held = pend('n2', 'normal', 10, { title: 'Held now', blocked: 'its file changed' });
    const list = applyDelta(before, delta({ rows: [held] }));
    expect(ids(list)).toEqual(ids(before));
    expect(list[3]?.item).toBe(held);
    expect(list[3]?.hay).toContain('held now');
    // The rows that did not change are the same objects: nothing is indexed again.
    expect(list[0]).toBe(before[0]);
  });

  it('moves a row whose place changed', () => {
    const list = applyDelta(sample(), delta({ rows: [pend('n3', 'critical', 30)] }));
    expect(ids(list)).toEqual(['c1', 'c2', 'n3', 'n1', 'n2', 'l1']);
  });

  it('keeps one row per id: the last of a delta, and none twice from the list', () => {
    const twice = applyDelta(
      indexRows([pend('a', 'normal', 1), pend('a', 'normal', 1)]),
      delta({ rows: [pend('b', 'normal', 5, { title: 'old' }), pend('b', 'normal', 5, { title: 'new' })] }),
    );
    expect(ids(twice)).toEqual(['a', 'b']);
    expect(twice[1]?.item.title).toBe('new');
    const again = applyDelta(sample(), delta({ rows: [pend('c2', 'critical', 20, { title: 'again' })] }));
    expect(ids(again)).toEqual(ids(sample()));
  });

  it('puts a new row before the rows it ties with, as the store lists a newer request', () => {
    const list = applyDelta(
      indexRows([pend('older', 'normal', 10), pend('after', 'normal', 11)]),
      delta({ rows: [pend('newer', 'normal', 10), pend('newest', 'normal', 10)] }),
    );
    expect(ids(list)).toEqual(['newest', 'newer', 'older', 'after']);
  });

  it('takes a row and drops another in one go; a row also named gone stays', () => {
    const list = applyDelta(sample(), delta({ rows: [pend('x', 'high', 0)], gone: ['c2', 'x'] }));
    expect(ids(list)).toEqual(['c1', 'x', 'n1', 'n2', 'n3', 'l1']);
  });

  it('returns the same list when nothing in it changes', () => {
    const list = sample();
    expect(applyDelta(list, delta({ snoozed: true }))).toBe(list);
  });
});

describe('touchesSnoozed', () => {
  const snoozed = [pend('s1', 'normal', 0)];
  it('says so when Rust says so, or when a snoozed request left or came back', () => {
    expect(touchesSnoozed(delta({ snoozed: true }), [])).toBe(true);
    expect(touchesSnoozed(delta({ gone: ['s1'] }), snoozed)).toBe(true);
    expect(touchesSnoozed(delta({ rows: [pend('s1', 'normal', 0)] }), snoozed)).toBe(true);
    expect(touchesSnoozed(delta({ gone: ['other'], rows: [pend('new', 'normal', 1)] }), snoozed)).toBe(false);
  });
});

describe('DeltaLog', () => {
  it('applies the deltas heard during a fetch to the rows it brings', () => {
    const log = new DeltaLog();
    const fetching = log.start();
    log.record(delta({ rows: [pend('new', 'critical', 0)] }));
    log.record(delta({ gone: ['n1'] }));
    const fetched = sample().map((entry) => entry.item);
    expect(ids(fetching.finish(fetched))).toEqual(['new', 'c1', 'c2', 'n2', 'n3', 'l1']);
    expect(log.fetching).toBe(0);
  });

  it('applies a delta the fetch already saw without harm', () => {
    const log = new DeltaLog();
    const fetching = log.start();
    log.record(delta({ rows: [pend('c1', 'critical', 5)], gone: ['gone-already'] }));
    const fetched = sample().map((entry) => entry.item);
    expect(ids(fetching.finish(fetched))).toEqual(ids(sample()));
  });

  it('forgets a failed fetch, and gives each fetch only what was heard after it started', () => {
    const log = new DeltaLog();
    const failed = log.start();
    log.record(delta({ gone: ['c1'] }));
    failed.cancel();
    const later = log.start();
    log.record(delta({ gone: ['c2'] }));
    expect(log.fetching).toBe(1);
    expect(ids(later.finish(sample().map((entry) => entry.item)))).toEqual(['c1', 'n1', 'n2', 'n3', 'l1']);
  });
});
