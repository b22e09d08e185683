// What ipc.ts needs from a way of reaching Rust. Two exist: Tauri's IPC in the app window
// (tauri.ts), and HTTP plus server-sent events in a browser served by `answer-inbox serve`
// (web.ts). Both hand back the same JSON and fail with the same IpcError shape, so nothing
// above ipc.ts knows which one is in use.

import type { CommandName } from '../bindings/CommandName';
import type { ErrorCode } from '../bindings/ErrorCode';
import type { IpcError as RustIpcError } from '../bindings/IpcError';
import type { UiEvent } from '../bindings/UiEvent';
import type { WebErrorCode } from '../bindings/WebErrorCode';

/**
 * Rust's error codes: the inbox's own and the web server's (pairing, the device cookie,
 * CSRF, one-time links, the failure limiter); plus `unreachable`: made in the browser when
 * the server could not be reached at all (no reply, or a proxy's 502/503/504), so it has no
 * code of Rust's.
 */
export type IpcErrorCode = ErrorCode | WebErrorCode | 'unreachable';

/** Every failure of a command: `{code, message, problems}`, as Rust sends it. */
export type IpcError = Omit<RustIpcError, 'code'> & { code: IpcErrorCode };

/**
 * What the `inbox` listener is told: Rust's events, and two about the event stream itself,
 * which only the web transport sends (Tauri's events cannot be lost):
 * - `disconnected`: the stream broke; until `reconnected`, changes are not heard of.
 * - `reconnected`: the stream is back; anything may have changed meanwhile, so everything
 *   shown must be fetched again (events missed while it was down are not replayed).
 * - `missed`: the stream carried an event this page could not read: whatever it said (a
 *   `changed` may carry rows to patch in) must be fetched instead.
 */
export type InboxEvent = UiEvent | { kind: 'disconnected' } | { kind: 'reconnected' } | { kind: 'missed' };

export interface Transport {
  /** Runs a command with its arguments object; resolves to its JSON result. */
  call<T>(command: CommandName, args?: Record<string, unknown>): Promise<T>;
  /** Listens to the inbox's events; resolves to the function that stops listening. */
  listen(handler: (event: InboxEvent) => void): Promise<() => void>;
}
