// The one module that talks to Rust. Every command is a typed function here, and every
// failure is an IpcError ({code, message, problems}), so the rest of the UI never imports
// @tauri-apps/api, never spells a command name, and branches on `code` only.

import { invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';

import type { AlikeAnswerView } from './bindings/AlikeAnswerView';
import type { AlikeMemberView } from './bindings/AlikeMemberView';
import type { AlikeTarget } from './bindings/AlikeTarget';
import type { HistoryView } from './bindings/HistoryView';
import type { PolicyProblemView } from './bindings/PolicyProblemView';
import type { PolicyView } from './bindings/PolicyView';
import type { ProblemView } from './bindings/ProblemView';
import type { RequestView } from './bindings/RequestView';
import type { RowView } from './bindings/RowView';
import type { Settings } from './bindings/Settings';
import type { SnoozeView } from './bindings/SnoozeView';
import type { SpoolProblemView } from './bindings/SpoolProblemView';
import type { StatusView } from './bindings/StatusView';
import type { SubmitResult } from './bindings/SubmitResult';
import type { UiEvent } from './bindings/UiEvent';
import type { JsonValue } from './bindings/serde_json/JsonValue';
import { toIpcError } from './words';

export type { IpcError } from './bindings/IpcError';

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (error) {
    throw toIpcError(error);
  }
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

export const getStatus = () => call<StatusView>('get_status');

export const getSettings = () => call<Settings>('get_settings');

export const saveSettings = (settings: Settings) => call<Settings>('save_settings', { settings });

/** Opens a link in the system browser (Rust refuses anything but http and https). */
export const openLink = (url: string) => call<null>('open_link', { url });

/** Listens to the `inbox` event; resolves to the function that stops listening. */
export async function onInboxEvent(handler: (event: UiEvent) => void): Promise<UnlistenFn> {
  try {
    return await listen<UiEvent>('inbox', (event) => handler(event.payload));
  } catch (error) {
    throw toIpcError(error);
  }
}
