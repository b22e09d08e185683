// The one module that talks to Rust. Every command is a typed function here, and every
// failure is an IpcError ({code, message, problems}), so the rest of the UI never imports
// a transport, never spells a command name, and branches on `code` only.
//
// The same build runs in two places, told apart once, at start:
// - the app window (Tauri injects `__TAURI_INTERNALS__`): Tauri commands and events;
// - a browser served by `answer-inbox serve`: `POST /api/<command>` and server-sent events,
//   after the browser was paired (see transport/web.ts). There, settings, the policy
//   editor, demo requests and open_link are not served: components check `surface`.

import type { AlikeAnswerView } from './bindings/AlikeAnswerView';
import type { AlikeMemberView } from './bindings/AlikeMemberView';
import type { AlikeTarget } from './bindings/AlikeTarget';
import type { AppView } from './bindings/AppView';
import type { CommandName } from './bindings/CommandName';
import type { HistoryView } from './bindings/HistoryView';
import type { PairingView } from './bindings/PairingView';
import type { PolicyProblemView } from './bindings/PolicyProblemView';
import type { PolicyView } from './bindings/PolicyView';
import type { ProblemView } from './bindings/ProblemView';
import type { RemoteView } from './bindings/RemoteView';
import type { RequestView } from './bindings/RequestView';
import type { RowView } from './bindings/RowView';
import type { Settings } from './bindings/Settings';
import type { SnoozeView } from './bindings/SnoozeView';
import type { SpoolProblemView } from './bindings/SpoolProblemView';
import type { StatusView } from './bindings/StatusView';
import type { SubmitResult } from './bindings/SubmitResult';
import type { JsonValue } from './bindings/serde_json/JsonValue';
import { tauriTransport } from './transport/tauri';
import type { InboxEvent, Transport } from './transport/types';
import { createWebTransport, type DeviceSession, type WebTransport } from './transport/web';
import { toIpcError } from './words';

export type { InboxEvent, IpcError, IpcErrorCode } from './transport/types';
export type { DeviceSession } from './transport/web';

/** Where this page runs: the app window, or a browser on a paired device. */
export type Surface = 'window' | 'web';

export const surface: Surface =
  typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window ? 'window' : 'web';

// The browser's fetch and EventSource are looked up when used, not now: importing this
// module must work where neither exists (unit tests under Node).
const web: WebTransport | null =
  surface === 'web'
    ? createWebTransport({
        fetch: (url, init) => fetch(url, init),
        openEvents: (url) => new EventSource(url),
      })
    : null;

const transport: Transport = web ?? tauriTransport;

function call<T>(command: CommandName, args?: Record<string, unknown>): Promise<T> {
  return transport.call<T>(command, args);
}

async function webOnly(): Promise<WebTransport> {
  if (web) return web;
  throw toIpcError({ code: 'bad_input', message: 'Only a browser is paired; the app window needs no pairing' });
}

/** Pending requests, most urgent first, then oldest first. */
export const listPending = () => call<RowView[]>('list_pending');

/** Settled and withdrawn requests, newest first. */
export const listHistory = () => call<HistoryView[]>('list_history');

/** Spool files that could not be read as requests. */
export const listProblems = () => call<SpoolProblemView[]>('list_problems');

export const openRequest = (id: string) => call<RequestView>('open_request', { id });

/**
 * `answers`: question id → value; unanswered optional questions left out. `version`: the
 * `RequestView.version` the operator answered. Rust refuses (`changed`) when the request file
 * is no longer that version, so only what the operator saw is ever answered.
 */
export const submitAnswers = (id: string, answers: Record<string, JsonValue>, version: string) =>
  call<SubmitResult>('submit_answers', { id, answers, version });

/** `version` as for `submitAnswers`. */
export const declineRequest = (id: string, reason: string, version: string) =>
  call<SubmitResult>('decline_request', { id, reason, version });

/**
 * Rust's check of the answers given so far, as a submit would check them, without writing
 * anything: the problems (each pointing at its question), none when they can be submitted.
 * The window never runs a request's pattern or other rules itself (see form.ts, RustCheck).
 */
export const checkAnswers = (id: string, answers: Record<string, JsonValue>) =>
  call<ProblemView[]>('check_answers', { id, answers });

/** Snoozed requests (out of the Pending list until their time), the soonest back first. */
export const listSnoozed = () => call<RowView[]>('list_snoozed');

/**
 * Puts a pending request away for `duration` ("15m", "1h", "1h 30m"); Rust cuts it to the
 * request's own expiry when that is sooner (`capped`).
 */
export const snoozeRequest = (id: string, duration: string) =>
  call<SnoozeView>('snooze_request', { id, duration });

/** Brings a snoozed request back now; false when it was not snoozed. */
export const unsnoozeRequest = (id: string) => call<boolean>('unsnooze_request', { id });

/**
 * The pending requests asking exactly what `id` asks (itself included), each with the
 * version an answer to all of them sends back. A group when there are two or more.
 */
export const listAlike = (id: string) => call<AlikeMemberView[]>('list_alike', { id });

/**
 * One answer per member, each bound to the version the window listed; every member gets its
 * own result (settled, settled elsewhere first, kept, or refused and why).
 */
export const answerAlike = (members: AlikeTarget[], answers: Record<string, JsonValue>) =>
  call<AlikeAnswerView[]>('answer_alike', { members, answers });

export const getStatus = () => call<StatusView>('get_status');

// The app window only: the web server does not serve these (404 `not_found`), and the
// page does not offer what needs them (`surface === 'web'`).

/** The operator's policy file (the shipped policy while there is none), its problems and trouble. */
export const getPolicy = () => call<PolicyView>('get_policy');

/** Rust's check of policy text as typed: every problem with its line; nothing is written. */
export const checkPolicy = (text: string) => call<PolicyProblemView[]>('check_policy', { text });

/** Saves the policy file; refused (`invalid`, with the problems) while the text has any. */
export const savePolicy = (text: string) => call<PolicyView>('save_policy', { text });

/** Opens the policy file in the system's editor (creating it from the shipped policy). */
export const openPolicyFile = () => call<null>('open_policy_file');

/** Places the demo requests in the spool (offered when the inbox is empty); returns how many. */
export const addDemoRequests = () => call<number>('add_demo_requests');

export const getSettings = () => call<Settings>('get_settings');

export const saveSettings = (settings: Settings) => call<Settings>('save_settings', { settings });

// The app itself: the window only (a browser is served none of these).

/** Start at login, the log folder, and whether a tray is there. */
export const getApp = () => call<AppView>('get_app');

/** Adds the app to the desktop's autostart, or removes it; resolves to what holds now. */
export const setStartAtLogin = (on: boolean) => call<boolean>('set_start_at_login', { on });

/** Opens the log folder in the file manager. */
export const openLogFolder = () => call<null>('open_log_folder');

/** Quits the app (Ctrl+Q, or Quit when closing the window explains that closing quits). */
export const quitApp = () => call<null>('quit_app');

/**
 * Answering from other devices (the app's own web server): whether it runs, where, who can
 * reach it, and the paired devices. `saveSettings` starts, restarts or stops it.
 */
export const getRemoteAccess = () => call<RemoteView>('get_remote_access');

/**
 * A new pairing link for one more device (its code works once, for ten minutes) and the same
 * link as a QR code; refused (`bad_input`) while the server is off. Not `pairDevice`: that is
 * the browser's side, pairing itself with such a link.
 */
export const newPairingLink = () => call<PairingView>('pair_device');

/** Renames a paired device (Rust checks the name); the devices as they are now. */
export const renameDevice = (id: string, name: string) => call<RemoteView>('rename_device', { id, name });

/** Revokes a paired device: its browser can do nothing more from its next request on. */
export const revokeDevice = (id: string) => call<RemoteView>('revoke_device', { id });

/** Opens a link in the system browser (Rust refuses anything but http and https). */
export const openLink = (url: string) => call<null>('open_link', { url });

/**
 * Listens to the inbox's changes; resolves to the function that stops listening. In a
 * browser the handler is also told when the event stream breaks (`disconnected`) and when it
 * is back (`reconnected`: everything shown must be fetched again; see InboxEvent).
 */
export function onInboxEvent(handler: (event: InboxEvent) => void): Promise<() => void> {
  return transport.listen(handler);
}

/** Browser only: this device, or null when the browser is not paired. */
export const getSession = async (): Promise<DeviceSession | null> => (await webOnly()).session();

/** Browser only: pairs it with the one-time code of a pairing link, under `name`. */
export const pairDevice = async (code: string, name: string): Promise<DeviceSession> =>
  (await webOnly()).pair(code, name);

/** Browser only: revokes this device; it must be paired again to see the inbox. */
export const forgetDevice = async (): Promise<void> => (await webOnly()).forget();

/**
 * Browser only: calls `handler` when the server says this device is no longer paired (it
 * was revoked while the page was open). Returns the function that stops it; a no-op in the
 * window.
 */
export function onSignedOut(handler: () => void): () => void {
  return web ? web.onSignedOut(handler) : () => undefined;
}
