import { describe, expect, it } from 'vitest';

import {
  filterIndexed,
  historyHaystack,
  indexHistory,
  indexProblems,
  indexRows,
  rowHaystack,
  searchTerms,
  sourceApps,
} from './filter';
import { historyEntry, outcome, row } from './testing';

const rows = [
  row({ id: 'deploy-1', title: 'Deploy Billing', source: { app: 'release-bot', run: 'build-7', tool: 'deploy', host: 'ci-03', project: null, cwd: null, url: null } }),
  row({ id: 'cache-2', title: 'Set up the cache', source: { app: 'crush', run: 'session-4e07', tool: null, host: null, project: null, cwd: null, url: null } }),
  row({ id: 'rotate-3', title: 'Weekly log rotation', source: { app: null, run: null, tool: null, host: 'build-host', project: null, cwd: null, url: null } }),
];

describe('haystacks', () => {
  it('hold the title, id and every source field, lower-cased', () => {
    const hay = rowHaystack(rows[0]!);
    for (const part of ['deploy billing', 'deploy-1', 'release-bot', 'build-7', 'deploy', 'ci-03']) {
      expect(hay).toContain(part);
    }
    expect(hay).not.toMatch(/[A-Z]/);
  });

  it('leave the source url out (it is not shown in the row)', () => {
    const hay = rowHaystack(row({ source: { app: null, run: null, tool: null, host: null, project: null, cwd: null, url: 'https://secret.example' } }));
    expect(hay).not.toContain('secret');
  });

  it('for history add who answered, the answers and the reason', () => {
    const entry = historyEntry({
      outcome: outcome({
        answered_by: 'policy:expiry',
        reason: 'Not This Week',
        answers: [{ question_id: 'target', question: 'Which Env?', answer: 'Production', custom: false, defaulted: false }],
      }),
    });
    const hay = historyHaystack(entry);
    for (const part of ['policy:expiry', 'not this week', 'which env?', 'production', 'deploy the billing service']) {
      expect(hay).toContain(part);
    }
  });

  it('for a withdrawn request (no outcome) still hold the row', () => {
    expect(historyHaystack(historyEntry({ outcome: null }))).toContain('req-1');
  });
});

describe('searchTerms', () => {
  it('splits on whitespace and lower-cases', () => {
    expect(searchTerms('  Deploy   BILLING ')).toEqual(['deploy', 'billing']);
    expect(searchTerms('   ')).toEqual([]);
  });
});

describe('filterIndexed', () => {
  const indexed = indexRows(rows);
  const ids = (list: typeof rows) => list.map((r) => r.id);

  it('returns everything, in order, for an empty search', () => {
    expect(ids(filterIndexed(indexed, '', ''))).toEqual(['deploy-1', 'cache-2', 'rotate-3']);
  });

  it('matches title, id and source fields case-insensitively', () => {
    expect(ids(filterIndexed(indexed, 'BILLING', ''))).toEqual(['deploy-1']);
    expect(ids(filterIndexed(indexed, 'cache-2', ''))).toEqual(['cache-2']);
    expect(ids(filterIndexed(indexed, 'session-4e', ''))).toEqual(['cache-2']);
    expect(ids(filterIndexed(indexed, 'build-host', ''))).toEqual(['rotate-3']);
  });

  it('needs every term, in any order', () => {
    expect(ids(filterIndexed(indexed, 'billing deploy', ''))).toEqual(['deploy-1']);
    expect(ids(filterIndexed(indexed, 'billing cache', ''))).toEqual([]);
  });

  it('does not match across two fields', () => {
    // "billing\ndeploy-1": a term with a space cannot exist, and the newline keeps fields apart.
    expect(ids(filterIndexed(indexed, 'billingdeploy', ''))).toEqual([]);
  });

  it('filters by source app, combined with the search', () => {
    expect(ids(filterIndexed(indexed, '', 'crush'))).toEqual(['cache-2']);
    expect(ids(filterIndexed(indexed, 'deploy', 'crush'))).toEqual([]);
    expect(ids(filterIndexed(indexed, '', 'nobody'))).toEqual([]);
  });

  it('returns the same objects, not copies', () => {
    expect(filterIndexed(indexed, '', '')[0]).toBe(rows[0]);
  });

  it('stays cheap on 10,000 rows', () => {
    const many = indexRows(
      Array.from({ length: 10_000 }, (_, i) => row({ id: `r-${i}`, title: `Request number ${i}` })),
    );
    const started = performance.now();
    for (let i = 0; i < 20; i++) filterIndexed(many, `number ${i}`, '');
    const perKeystroke = (performance.now() - started) / 20;
    expect(filterIndexed(many, 'number 9999', '').map((r) => r.id)).toEqual(['r-9999']);
    // Generous bound for a slow CI machine; typically well under 5 ms.
    expect(perKeystroke).toBeLessThan(50);
  });
});

describe('sourceApps', () => {
  it('lists distinct apps, sorted, without blanks', () => {
    const list = indexRows([...rows, row({ id: 'x', source: { app: 'crush', run: null, tool: null, host: null, project: null, cwd: null, url: null } })]);
    expect(sourceApps(list)).toEqual(['crush', 'release-bot']);
  });

  it('works on history by the row source', () => {
    expect(sourceApps(indexHistory([historyEntry()]))).toEqual(['release-bot']);
  });
});

describe('indexProblems', () => {
  it('searches path, id and reasons', () => {
    const list = indexProblems([
      { id: null, path: '/spool/questions/Bad Name.json', reasons: ['not a valid id'], seen_at: '2026-12-03T09:00:00Z' },
      { id: 'r2', path: '/spool/questions/r2.json', reasons: ['/questions/0: needs an option'], seen_at: '2026-12-03T09:00:00Z' },
    ]);
    expect(filterIndexed(list, 'VALID ID', '').map((p) => p.path)).toEqual(['/spool/questions/Bad Name.json']);
    expect(filterIndexed(list, 'option', '').map((p) => p.id)).toEqual(['r2']);
  });
});
