// The Pending list kept in step with Rust without fetching it again: a `changed` event
// carries what changed (`PendingDelta`: the rows that arrived or changed, each as
// `list_pending` returns it, and the ids that left), and the window patches its copy.
// With 10,000 pending a fetch is 3 MB through the IPC; a delta is a row or two.
//
// The list's order is Rust's (`Store::pending`): `ORDER BY priority DESC, placed_at`, most
// urgent first, then oldest first. Requests with the same priority placed in the same
// millisecond come newest first there (SQLite reads them backwards through its index), so a
// new row goes before the rows it ties with, and a row that changed keeps its place.

import type { PendingDelta } from './bindings/PendingDelta';
import type { Priority } from './bindings/Priority';
import type { RowView } from './bindings/RowView';
import { indexRows, type Indexed } from './filter';

/** The store's `priority` column: 0 low .. 3 critical. */
const RANK: Record<Priority, number> = { low: 0, normal: 1, high: 2, critical: 3 };

function rank(row: RowView): number {
  return RANK[row.priority] ?? RANK.normal;
}

/**
 * Negative when `a` comes before `b` in the Pending list, positive when after, 0 when they
 * tie (same priority, placed in the same millisecond).
 */
export function pendingOrder(a: RowView, b: RowView): number {
  const byPriority = rank(b) - rank(a);
  if (byPriority !== 0) return byPriority;
  const at = Date.parse(a.placed_at);
  const bt = Date.parse(b.placed_at);
  if (Number.isFinite(at) && Number.isFinite(bt)) return at - bt;
  // Not a time this page can read: Rust writes them all alike, so the text orders them.
  return a.placed_at < b.placed_at ? -1 : a.placed_at > b.placed_at ? 1 : 0;
}

/** Whether nothing in `delta` touches the Pending list. */
export function isEmptyDelta(delta: PendingDelta): boolean {
  return delta.rows.length === 0 && delta.gone.length === 0;
}

/**
 * `list` (in the list's order) with `delta` applied: the `gone` ids dropped (unknown ones
 * ignored), each row of `rows` put in its place, replacing the row of the same id (the last
 * one wins when an id comes twice). Returns `list` itself when nothing changes.
 */
export function applyDelta(list: Indexed<RowView>[], delta: PendingDelta): Indexed<RowView>[] {
  if (isEmptyDelta(delta)) return list;
  const incoming = new Map<string, RowView>();
  for (const row of delta.rows) {
    // Delete first, so the map's order is that of each id's last row.
    incoming.delete(row.id);
    incoming.set(row.id, row);
  }
  const gone = new Set(delta.gone);
  const kept: Indexed<RowView>[] = [];
  const seen = new Set<string>();
  for (const entry of list) {
    const id = entry.item.id;
    if (seen.has(id)) continue;
    seen.add(id);
    const row = incoming.get(id);
    if (row) {
      // A row that changed keeps its place among rows it ties with; one whose place
      // changed is put in again below.
      if (pendingOrder(row, entry.item) === 0) {
        kept.push(...indexRows([row]));
        incoming.delete(id);
      }
      continue;
    }
    if (!gone.has(id)) kept.push(entry);
  }
  if (incoming.size === 0) return kept;
  // New rows in the list's order; among ties, the later in the delta (the newer) first.
  const fresh = indexRows([...incoming.values()].reverse()).sort((a, b) => pendingOrder(a.item, b.item));
  const out: Indexed<RowView>[] = [];
  let next = 0;
  for (const entry of kept) {
    for (let row = fresh[next]; row && pendingOrder(row.item, entry.item) <= 0; row = fresh[++next]) out.push(row);
    out.push(entry);
  }
  out.push(...fresh.slice(next));
  return out;
}

/** Whether `delta` changed the Snoozed list, which holds the rows `snoozed`. */
export function touchesSnoozed(delta: PendingDelta, snoozed: readonly RowView[]): boolean {
  if (delta.snoozed) return true;
  if (snoozed.length === 0) return false;
  const ids = new Set(snoozed.map((row) => row.id));
  return delta.gone.some((id) => ids.has(id)) || delta.rows.some((row) => ids.has(row.id));
}

/** A `list_pending` fetch on its way: the deltas heard meanwhile are applied to its rows. */
export interface Fetching {
  /** The fetched rows with every delta heard since `start`, in the order heard. */
  finish(rows: RowView[]): Indexed<RowView>[];
  /** The fetch failed: nothing to apply the deltas to. */
  cancel(): void;
}

/**
 * The deltas heard while fetches of the Pending list are on their way. A fetch reads the
 * database at some moment after it is sent; a delta heard meanwhile may describe a change
 * that moment already saw, or one it did not. Applying every such delta, in order, to the
 * fetched rows is right either way: a delta sets each request it names to what the
 * database said when it was read, and anything that changed later comes in a later delta.
 */
export class DeltaLog {
  readonly #open = new Set<PendingDelta[]>();

  /** Call just before the fetch is sent. */
  start(): Fetching {
    const heard: PendingDelta[] = [];
    this.#open.add(heard);
    return {
      finish: (rows) => {
        this.#open.delete(heard);
        return heard.reduce(applyDelta, indexRows(rows));
      },
      cancel: () => {
        this.#open.delete(heard);
      },
    };
  }

  /** A delta heard: every fetch on its way gets it too. */
  record(delta: PendingDelta): void {
    for (const heard of this.#open) heard.push(delta);
  }

  /** How many fetches are on their way. */
  get fetching(): number {
    return this.#open.size;
  }
}
