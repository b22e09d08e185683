// Searching the lists. The Pending list may hold 10,000 rows and the search runs on every
// keystroke, so each row's searchable text is joined and lower-cased once per fetch (its
// "haystack"); a keystroke then costs one `includes` per row and search term.

import type { HistoryView } from './bindings/HistoryView';
import type { RowView } from './bindings/RowView';
import type { SpoolProblemView } from './bindings/SpoolProblemView';

export interface Indexed<T> {
  item: T;
  /** Lower-cased searchable text, fields separated by newlines so a term never spans two. */
  hay: string;
  /** The source app, for the source filter. */
  app: string | null;
}

function join(parts: Array<string | null | undefined>): string {
  return parts.filter((part): part is string => !!part).join('\n').toLowerCase();
}

/** Title, id and every source field. */
export function rowHaystack(row: RowView): string {
  const { app, run, tool, host, project } = row.source;
  return join([row.title, row.id, app, run, tool, host, project]);
}

/** A row's haystack plus who settled it, the answers in words and the reason. */
export function historyHaystack(entry: HistoryView): string {
  const outcome = entry.outcome;
  const parts = [rowHaystack(entry.row), entry.row.answered_by, entry.row.state];
  if (outcome) {
    parts.push(outcome.answered_by, outcome.status, outcome.reason);
    for (const line of outcome.answers) parts.push(line.question, line.answer);
  }
  return join(parts);
}

export function problemHaystack(problem: SpoolProblemView): string {
  return join([problem.path, problem.id, ...problem.reasons]);
}

export function indexRows(rows: RowView[]): Indexed<RowView>[] {
  return rows.map((item) => ({ item, hay: rowHaystack(item), app: item.source.app }));
}

export function indexHistory(entries: HistoryView[]): Indexed<HistoryView>[] {
  return entries.map((item) => ({ item, hay: historyHaystack(item), app: item.row.source.app }));
}

export function indexProblems(problems: SpoolProblemView[]): Indexed<SpoolProblemView>[] {
  return problems.map((item) => ({ item, hay: problemHaystack(item), app: null }));
}

/** The search box's text as lower-case terms; every term must occur (in any order). */
export function searchTerms(query: string): string[] {
  return query.toLowerCase().split(/\s+/).filter((term) => term.length > 0);
}

/**
 * The items whose haystack holds every term of `query` and whose source app is `source`
 * (an empty `source` means any). Order is kept. Returns the same items, not copies.
 */
export function filterIndexed<T>(list: Indexed<T>[], query: string, source: string): T[] {
  const terms = searchTerms(query);
  const out: T[] = [];
  for (const entry of list) {
    if (source && entry.app !== source) continue;
    let all = true;
    for (const term of terms) {
      if (!entry.hay.includes(term)) {
        all = false;
        break;
      }
    }
    if (all) out.push(entry.item);
  }
  return out;
}

/** The distinct source apps in a list, sorted, for the source filter's options. */
export function sourceApps<T>(list: Indexed<T>[]): string[] {
  const apps = new Set<string>();
  for (const entry of list) if (entry.app) apps.add(entry.app);
  return [...apps].sort((a, b) => a.localeCompare(b));
}
