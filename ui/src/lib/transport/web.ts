// A browser's way to Rust, through `answer-inbox serve`: every command is
// `POST /api/<command>` with the command's arguments object as JSON, answered with the same
// JSON the Tauri command returns; a refusal is a non-2xx reply whose body is the IpcError
// `{code, message, problems}`. Changes come as server-sent events (`GET /api/events`, event
// `inbox`, data a UiEvent).
//
// Who the browser is: a cookie the server set when the device was paired (HttpOnly, so this
// code never sees it), and a CSRF token from `GET /api/session`, kept here in memory only
// and sent with every POST. A 401 means the device is no longer paired (revoked, forgotten
// elsewhere): the page is told once through `onSignedOut` and shows its not-paired screen.

import type { CommandName } from '../bindings/CommandName';
import type { UiEvent } from '../bindings/UiEvent';
import { toIpcError } from '../words';
import type { InboxEvent, IpcError, IpcErrorCode, Transport } from './types';

/** This browser as the server knows it (the CSRF token stays inside the transport). */
export interface DeviceSession {
  device_id: string;
  device_name: string;
}

/** The parts of EventSource used here. */
export interface EventStream {
  readonly readyState: number;
  addEventListener(type: string, listener: (event: Event) => void): void;
  close(): void;
}

/** The parts of the browser the transport uses; tests hand in fakes. */
export interface WebDeps {
  fetch(url: string, init: RequestInit): Promise<Response>;
  openEvents(url: string): EventStream;
}

export interface WebTransport extends Transport {
  /** `GET /api/session`: this device, or null when the browser is not paired (401). */
  session(): Promise<DeviceSession | null>;
  /** `POST /api/pair`: pairs this browser with a code from a pairing link. */
  pair(code: string, name: string): Promise<DeviceSession>;
  /** `POST /api/forget`: revokes this device; the browser is not paired afterwards. */
  forget(): Promise<void>;
  /**
   * Calls `handler` when a command or the event stream learns that this device is no longer
   * paired; returns the function that stops calling it.
   */
  onSignedOut(handler: () => void): () => void;
}

export const SESSION_PATH = '/api/session';
export const EVENTS_PATH = '/api/events';
export const CSRF_HEADER = 'X-Inbox-CSRF';

/** EventSource.CLOSED: the browser gave up on the stream and will not reconnect it. */
const CLOSED = 2;
/** The first wait before opening a given-up stream again; doubled each time, up to the max. */
export const RETRY_FIRST_MS = 1_000;
export const RETRY_MAX_MS = 30_000;

export function createWebTransport(deps: WebDeps): WebTransport {
  let csrf: string | null = null;
  const signedOutHandlers = new Set<() => void>();

  function signedOut() {
    csrf = null;
    for (const handler of [...signedOutHandlers]) handler();
  }

  async function send(method: 'GET' | 'POST', path: string, body?: unknown, withCsrf = true): Promise<Response> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    // The token guards what changes something: POSTs. A GET has nothing to guard.
    if (method === 'POST' && withCsrf && csrf !== null) headers[CSRF_HEADER] = csrf;
    try {
      return await deps.fetch(path, {
        method,
        headers,
        credentials: 'same-origin',
        // Lists and the session must never come from a cache.
        cache: 'no-store',
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      throw unreachable(error);
    }
  }

  /** `GET /api/session`; keeps the CSRF token it carries. */
  async function session(): Promise<DeviceSession | null> {
    const response = await send('GET', SESSION_PATH);
    if (response.status === 401) {
      csrf = null;
      return null;
    }
    if (!response.ok) throw await failure(response);
    return accept(await json(response, SESSION_PATH));
  }

  function accept(value: unknown): DeviceSession {
    if (!isSessionReply(value)) {
      throw toIpcError({ code: 'bad_input', message: 'The server sent a session this page does not understand' });
    }
    csrf = value.csrf;
    return { device_id: value.device_id, device_name: value.device_name };
  }

  /** Whether this browser is still paired, as far as the server can be asked. */
  async function probe(): Promise<'paired' | 'unpaired' | 'unreachable'> {
    try {
      return (await session()) ? 'paired' : 'unpaired';
    } catch {
      return 'unreachable';
    }
  }

  /**
   * After a CSRF refusal: the server may have been restarted with new tokens while this page
   * stayed open. True when a new token was had, so the refused command can be sent again.
   */
  async function renewCsrf(): Promise<boolean> {
    const before = csrf;
    const state = await probe();
    if (state === 'unpaired') signedOut();
    return state === 'paired' && csrf !== before;
  }

  async function call<T>(command: CommandName, args: Record<string, unknown> = {}): Promise<T> {
    const path = `/api/${command}`;
    let response = await send('POST', path, args);
    if (response.status === 403) {
      const refused = await failure(response);
      // A refused CSRF token means nothing was done, so sending again once is safe.
      if (refused.code !== 'forbidden' || !(await renewCsrf())) throw refused;
      response = await send('POST', path, args);
    }
    if (response.ok) return (await json(response, path)) as T;
    const error = await failure(response);
    if (response.status === 401) signedOut();
    throw error;
  }

  async function listen(handler: (event: InboxEvent) => void): Promise<() => void> {
    let stream: EventStream | null = null;
    let stopped = false;
    /** The stream broke and has not opened again: `disconnected` was said, `reconnected` is owed. */
    let down = false;
    let wait = RETRY_FIRST_MS;
    let timer: ReturnType<typeof setTimeout> | null = null;

    const open = () => {
      const current = deps.openEvents(EVENTS_PATH);
      stream = current;
      const live = () => !stopped && stream === current;
      current.addEventListener('open', () => {
        if (!live()) return;
        wait = RETRY_FIRST_MS;
        if (down) {
          down = false;
          handler({ kind: 'reconnected' });
        }
      });
      current.addEventListener('inbox', (event) => {
        if (!live()) return;
        const parsed = parseUiEvent((event as MessageEvent).data);
        // A message this page cannot read may have been a change to patch in: the page is
        // told it missed one, and fetches what it shows instead.
        handler(parsed ?? { kind: 'missed' });
      });
      current.addEventListener('error', () => {
        if (!live()) return;
        if (!down) {
          down = true;
          handler({ kind: 'disconnected' });
        }
        // While CONNECTING the browser retries by itself. CLOSED means it gave up: the server
        // answered with an error status (401 once the device is revoked) or not with a
        // stream. Ask the server which it is before opening a new stream.
        if (current.readyState === CLOSED) {
          current.close();
          stream = null;
          void recover();
        }
      });
    };

    const recover = async () => {
      const state = await probe();
      if (stopped) return;
      if (state === 'unpaired') {
        stopped = true;
        signedOut();
        return;
      }
      timer = setTimeout(() => {
        timer = null;
        if (!stopped) open();
      }, wait);
      wait = Math.min(wait * 2, RETRY_MAX_MS);
    };

    try {
      open();
    } catch (error) {
      throw toIpcError(error);
    }
    return () => {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      stream?.close();
      stream = null;
    };
  }

  return {
    call,
    listen,
    session,

    async pair(code, name) {
      // No CSRF token yet: the one-time code is the authority (the server checks the Origin).
      const response = await send('POST', '/api/pair', { code, name }, false);
      if (!response.ok) throw await failure(response);
      return accept(await json(response, '/api/pair'));
    },

    async forget() {
      const response = await send('POST', '/api/forget', {});
      // 401: it was no longer paired anyway, which is what forgetting asks for.
      if (!response.ok && response.status !== 401) throw await failure(response);
      csrf = null;
    },

    onSignedOut(handler) {
      signedOutHandlers.add(handler);
      return () => signedOutHandlers.delete(handler);
    },
  };
}

/** A 2xx reply's JSON; an empty body is `null`. */
async function json(response: Response, path: string): Promise<unknown> {
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw unreachable(error);
  }
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw toIpcError({ code: 'bad_input', message: `The server's reply to ${path} is not JSON` });
  }
}

/** A non-2xx reply as an IpcError: the server's own, or one made from the status. */
async function failure(response: Response): Promise<IpcError> {
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(await response.text());
  } catch {
    // Not JSON (a proxy's error page, a cut-off body): said by its status below.
  }
  if (parsed && typeof parsed === 'object') {
    const e = parsed as { code?: unknown; message?: unknown };
    if (typeof e.code === 'string' && typeof e.message === 'string') return toIpcError(parsed);
  }
  const status = `${response.status} ${response.statusText}`.trim();
  return toIpcError({ code: codeForStatus(response.status), message: `The server answered ${status}` });
}

function codeForStatus(status: number): IpcErrorCode {
  switch (status) {
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 429:
      return 'rate_limited';
    case 502:
    case 503:
    case 504:
      return 'unreachable';
    default:
      return 'bad_input';
  }
}

function unreachable(error: unknown): IpcError {
  const why = error instanceof Error ? error.message : String(error);
  return toIpcError({ code: 'unreachable', message: `Answer Inbox could not be reached (${why})` });
}

function isSessionReply(value: unknown): value is DeviceSession & { csrf: string } {
  if (!value || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return typeof v.device_id === 'string' && typeof v.device_name === 'string' && typeof v.csrf === 'string';
}

/** An `inbox` event's data; null when it is not a UiEvent as far as can be told. */
export function parseUiEvent(data: unknown): UiEvent | null {
  if (typeof data !== 'string') return null;
  try {
    const value = JSON.parse(data) as unknown;
    if (value && typeof value === 'object' && typeof (value as { kind?: unknown }).kind === 'string') {
      return value as UiEvent;
    }
  } catch {
    // Not JSON: dropped by the caller.
  }
  return null;
}
