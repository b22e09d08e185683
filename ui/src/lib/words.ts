// Short texts built from the contract's codes: outcome statuses, who settled a request, the
// notification state. Kept in one place so the header, the lists and the answer view agree.

import type { OutcomeView } from './bindings/OutcomeView';
import type { IpcError } from './transport/types';

export type Status = OutcomeView['status'];

const STATUS: Record<Status | 'cancelled' | 'pending', string> = {
  pending: 'Pending',
  answered: 'Answered',
  defaulted: 'Answered with defaults',
  declined: 'Declined',
  expired: 'Expired',
  rejected: 'Rejected',
  cancelled: 'Withdrawn by its asker',
};

/** "Answered", "Declined", … for a status or row state; unknown ones as they are. */
export function statusLabel(status: string): string {
  return (STATUS as Record<string, string>)[status] ?? status;
}

export interface Settler {
  kind: 'operator' | 'policy' | 'other';
  /** The name after the prefix: "dana", "expiry". */
  name: string;
}

/** `operator:dana` → an operator named dana; `policy:expiry` → the expiry policy. */
export function settler(answeredBy: string): Settler {
  const colon = answeredBy.indexOf(':');
  const prefix = colon === -1 ? '' : answeredBy.slice(0, colon);
  const name = colon === -1 ? answeredBy : answeredBy.slice(colon + 1);
  if (prefix === 'operator') return { kind: 'operator', name };
  if (prefix === 'policy') return { kind: 'policy', name };
  return { kind: 'other', name: answeredBy };
}

/**
 * The banner over a request that was settled while it was open here: "Answered by
 * operator:dana elsewhere", or where, when that is known ("... from Phone (web)"). A policy
 * did not act "elsewhere", it acted on its own.
 */
export function settledElsewhere(status: string, answeredBy: string, via: Via = {}): string {
  const verb = statusLabel(status);
  if (settler(answeredBy).kind === 'policy') return `${verb} by ${answeredBy} while it was open here`;
  const where = viaText(via);
  return where ? `${verb} by ${answeredBy} ${where}` : `${verb} by ${answeredBy} elsewhere`;
}

/**
 * Where an answer was given: OutcomeView's `surface` (`window`, `bubble`, `cli`, `policy`,
 * `web`, `push`) and, for `web`, the paired device's name. Both are absent or null in
 * outcomes recorded before surfaces were.
 */
export interface Via {
  surface?: string | null;
  device?: string | null;
}

/**
 * "from Phone (web)", "in the window": where an answer was given, to follow "Answered by
 * operator:dana". Null when that is not known, and for a policy, which acted by itself
 * (its name already says so).
 */
export function viaText(via: Via): string | null {
  const device = via.device?.trim() || null;
  switch (via.surface ?? null) {
    case null:
    case 'policy':
      return null;
    case 'window':
      return 'in the window';
    case 'bubble':
      return 'from a desktop notification';
    case 'cli':
      return 'on the command line';
    case 'web':
      return device ? `from ${device} (web)` : 'from a browser';
    case 'push':
      return 'from a phone notification';
    default:
      return `through ${via.surface}`;
  }
}

/**
 * Who settled a request and where, for an answer that lost the race: "Answered by
 * operator:dana from Phone (web)". Null when the outcome does not say where (older
 * outcomes), so the caller keeps its general wording.
 */
export function whoWon(outcome: Pick<OutcomeView, 'status' | 'answered_by'> & Via): string | null {
  const where = viaText(outcome);
  const verb = statusLabel(outcome.status);
  if (where) return `${verb} by ${outcome.answered_by} ${where}`;
  if (outcome.surface === 'policy') return `${verb} by ${outcome.answered_by}`;
  return null;
}

const NOTIFICATIONS: Record<string, string> = {
  available: 'Notifications on',
  unavailable: 'Notifications unavailable (no notification service)',
  off: 'Notifications off',
  do_not_disturb: 'Do not disturb',
};

export function notificationLabel(state: string): string {
  return NOTIFICATIONS[state] ?? `Notifications: ${state}`;
}

/**
 * Anything a command rejected with, as an IpcError. Rust sends IpcError objects (through
 * Tauri, or as the body of the web server's error replies); Tauri itself rejects with a
 * plain string when a command or its arguments are unknown, and a missing Tauri runtime
 * throws an Error. Those become `bad_input`: the window asked for something the app could
 * not take.
 */
export function toIpcError(error: unknown): IpcError {
  if (error && typeof error === 'object' && 'code' in error && 'message' in error) {
    const e = error as Partial<IpcError>;
    if (typeof e.code === 'string' && typeof e.message === 'string') {
      return { code: e.code, message: e.message, problems: Array.isArray(e.problems) ? e.problems : [] };
    }
  }
  const message =
    typeof error === 'string' ? error : error instanceof Error ? error.message : 'something went wrong';
  return { code: 'bad_input', message, problems: [] };
}

/** `private` or `team:<group>` (StatusView.trust) in words. */
export function trustLabel(trust: string): string {
  if (trust === 'private') return 'Private to your account';
  if (trust.startsWith('team:')) return `Shared with the group ${trust.slice('team:'.length)}`;
  return trust;
}

/**
 * What the window says on a request when the inbox refused to settle it because of the file
 * itself: it changed after the operator opened it, or it was blocked meanwhile. The reason
 * is left out when the request already shows it (`reasonShown`, its blocked notice). Null
 * for other errors.
 */
export function refusalText(error: IpcError, reasonShown = false): string | null {
  const because = error.message.trim().replace(/[.;\s]+$/, '');
  const why = reasonShown || because === '' ? '' : `: ${because}`;
  switch (error.code) {
    case 'changed':
      return `This request changed after you opened it${why}; it was not answered.`;
    case 'blocked':
      return `This request was blocked after you opened it${why}; nothing was sent.`;
    default:
      return null;
  }
}

/** A reason as a sentence of its own: a capital first letter and a full stop. */
export function sentence(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return '';
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?)]$/.test(capital) ? capital : `${capital}.`;
}

/** "release-bot / build-1187 / deploy / ci-03": the source fields that are set. */
/** Who is asking, most telling first: `shop-api · claude-code / session-4 / ask_operator / ci-3`. */
export function sourceText(source: {
  app: string | null;
  run: string | null;
  tool: string | null;
  host: string | null;
  project?: string | null;
}): string {
  const who = [source.app, source.run, source.tool, source.host].filter((part) => !!part).join(' / ');
  return [source.project, who].filter((part) => !!part).join(' · ');
}

/** Apps whose runs are an agent's sessions (what `answer-inbox hook` and agents name). */
const AGENT_APPS = new Set(['claude-code', 'codex']);

/**
 * What a pending request holds up, in words: "Blocks claude-code session 8d1e…" for an
 * agent, "Blocks release-bot run build-1187" for another asker; null when it names no run.
 */
export function blocksText(source: { app: string | null; run: string | null }): string | null {
  if (!source.run) return null;
  const what = source.app && AGENT_APPS.has(source.app) ? 'session' : 'run';
  return `Blocks ${source.app ? `${source.app} ` : ''}${what} ${source.run}`;
}

/**
 * Why pairing this browser failed, and what to do: a code is good once and for a short
 * while, so a refused one needs a new link; too many tries need a pause.
 */
export function pairingErrorText(error: IpcError): string {
  switch (error.code) {
    case 'pairing_refused':
      return `${sentence(error.message) || 'The pairing code was refused.'} Get a new pairing link from \`answer-inbox serve\` or the app's Settings.`;
    case 'rate_limited':
      // The server says how long to wait; its words stand.
      return sentence(error.message) || 'Too many attempts. Wait a minute, then try again.';
    case 'unreachable':
      return sentence(error.message);
    default: {
      const because = error.message.trim().replace(/[.;\s]+$/, '');
      return because ? `Pairing failed: ${because}.` : 'Pairing failed.';
    }
  }
}
