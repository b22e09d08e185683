import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import type { InboxEvent } from './types';
import {
  CSRF_HEADER,
  createWebTransport,
  EVENTS_PATH,
  parseUiEvent,
  RETRY_FIRST_MS,
  RETRY_MAX_MS,
  SESSION_PATH,
  type EventStream,
  type WebDeps,
} from './web';

// A fake server: each request is answered by the next queued reply (a Response, or an
// Error to stand for a network failure), and every request is recorded.
interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
  credentials: RequestCredentials | undefined;
}

const SESSION = { device_id: 'dev-1', device_name: 'Phone', csrf: 'csrf-1' };

function reply(status: number, body?: unknown, statusText = ''): Response {
  const text = body === undefined ? null : typeof body === 'string' ? body : JSON.stringify(body);
  return new Response(text, { status, statusText, headers: { 'content-type': 'application/json' } });
}

class FakeEvents implements EventStream {
  readyState = 0;
  closed = false;
  private listeners = new Map<string, Array<(event: Event) => void>>();

  constructor(readonly url: string) {}

  addEventListener(type: string, listener: (event: Event) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  close() {
    this.closed = true;
    this.readyState = 2;
  }

  emit(type: string, data?: string) {
    const event = data === undefined ? new Event(type) : new MessageEvent(type, { data });
    for (const listener of this.listeners.get(type) ?? []) listener(event);
  }

  open() {
    this.readyState = 1;
    this.emit('open');
  }

  /** The browser lost the stream and tries again by itself. */
  drop() {
    this.readyState = 0;
    this.emit('error');
  }

  /** The browser gave up on the stream (an error status, such as 401). */
  fail() {
    this.readyState = 2;
    this.emit('error');
  }
}

function fakeServer() {
  const sent: Sent[] = [];
  const replies: Array<Response | Error> = [];
  const streams: FakeEvents[] = [];
  const deps: WebDeps = {
    async fetch(url, init) {
      const headers = { ...(init.headers as Record<string, string>) };
      sent.push({
        url,
        method: init.method ?? 'GET',
        headers,
        body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
        credentials: init.credentials,
      });
      const next = replies.shift();
      if (!next) throw new Error(`no reply queued for ${url}`);
      if (next instanceof Error) throw next;
      return next;
    },
    openEvents(url) {
      const stream = new FakeEvents(url);
      streams.push(stream);
      return stream;
    },
  };
  return { sent, replies, streams, transport: createWebTransport(deps) };
}

/** Lets pending promise callbacks (the transport's awaits) run. */
async function settle() {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

describe('commands', () => {
  it('posts the arguments as JSON with the CSRF token and returns the JSON result', async () => {
    const { sent, replies, transport } = fakeServer();
    replies.push(reply(200, SESSION), reply(200, [{ id: 'a' }]));
    await transport.session();

    const rows = await transport.call<Array<{ id: string }>>('open_request', { id: 'a' });

    expect(rows).toEqual([{ id: 'a' }]);
    expect(sent[1]).toEqual({
      url: '/api/open_request',
      method: 'POST',
      headers: { 'content-type': 'application/json', [CSRF_HEADER]: 'csrf-1' },
      body: { id: 'a' },
      credentials: 'same-origin',
    });
  });

  it('sends an empty object for a command without arguments, and reads an empty reply as null', async () => {
    const { sent, replies, transport } = fakeServer();
    replies.push(reply(200));
    expect(await transport.call('list_pending')).toBeNull();
    expect(sent[0]?.body).toEqual({});
  });

  it("throws the server's IpcError as it is", async () => {
    const { replies, transport } = fakeServer();
    const refusal = { code: 'invalid', message: '1 problem', problems: [{ pointer: '/q1', message: 'required' }] };
    replies.push(reply(400, refusal));
    await expect(transport.call('submit_answers', { id: 'a' })).rejects.toEqual(refusal);
  });

  it('makes an IpcError from the status when the body is not one', async () => {
    const { replies, transport } = fakeServer();
    replies.push(reply(502, '<html>Bad gateway</html>', 'Bad Gateway'), reply(500, { oops: true }));
    await expect(transport.call('list_pending')).rejects.toEqual({
      code: 'unreachable',
      message: 'The server answered 502 Bad Gateway',
      problems: [],
    });
    await expect(transport.call('list_pending')).rejects.toMatchObject({ code: 'bad_input', message: 'The server answered 500' });
  });

  it('says a network failure is one', async () => {
    const { replies, transport } = fakeServer();
    replies.push(new TypeError('Failed to fetch'));
    await expect(transport.call('list_pending')).rejects.toEqual({
      code: 'unreachable',
      message: 'Answer Inbox could not be reached (Failed to fetch)',
      problems: [],
    });
  });

  it('refuses a 2xx reply that is not JSON', async () => {
    const { replies, transport } = fakeServer();
    replies.push(reply(200, '<html>'));
    await expect(transport.call('list_pending')).rejects.toMatchObject({
      code: 'bad_input',
      message: "The server's reply to /api/list_pending is not JSON",
    });
  });

  it('tells the page once a command finds the device signed out', async () => {
    const { replies, transport } = fakeServer();
    const signedOut = vi.fn();
    const stop = transport.onSignedOut(signedOut);
    replies.push(reply(401, { code: 'unauthorized', message: 'this device is not paired', problems: [] }));

    await expect(transport.call('list_pending')).rejects.toMatchObject({ code: 'unauthorized' });
    expect(signedOut).toHaveBeenCalledTimes(1);

    stop();
    replies.push(reply(401, { code: 'unauthorized', message: 'this device is not paired', problems: [] }));
    await expect(transport.call('list_pending')).rejects.toMatchObject({ code: 'unauthorized' });
    expect(signedOut).toHaveBeenCalledTimes(1);
  });

  it('sends a command again once with a new CSRF token after a CSRF refusal', async () => {
    const { sent, replies, transport } = fakeServer();
    const forbidden = { code: 'forbidden', message: 'the CSRF token does not match', problems: [] };
    replies.push(reply(200, SESSION), reply(403, forbidden), reply(200, { ...SESSION, csrf: 'csrf-2' }), reply(200, 7));
    await transport.session();

    expect(await transport.call('get_status')).toBe(7);
    expect(sent.map((s) => `${s.method} ${s.url} ${s.headers[CSRF_HEADER] ?? '-'}`)).toEqual([
      'GET /api/session -',
      'POST /api/get_status csrf-1',
      'GET /api/session -',
      'POST /api/get_status csrf-2',
    ]);
  });

  it('does not send again when the token did not change, or for other refusals', async () => {
    const { sent, replies, transport } = fakeServer();
    const forbidden = { code: 'forbidden', message: 'wrong origin', problems: [] };
    replies.push(reply(200, SESSION), reply(403, forbidden), reply(200, SESSION));
    await transport.session();
    await expect(transport.call('get_status')).rejects.toEqual(forbidden);
    expect(sent).toHaveLength(3);

    const refused = { code: 'pairing_refused', message: 'no', problems: [] };
    replies.push(reply(403, refused));
    await expect(transport.call('get_status')).rejects.toEqual(refused);
    expect(sent).toHaveLength(4);
  });
});

describe('session, pairing and forgetting', () => {
  it('reads the session without handing out the CSRF token; null when not paired', async () => {
    const { sent, replies, transport } = fakeServer();
    replies.push(reply(200, SESSION), reply(401, { code: 'unauthorized', message: 'not paired', problems: [] }));
    const signedOut = vi.fn();
    transport.onSignedOut(signedOut);

    expect(await transport.session()).toEqual({ device_id: 'dev-1', device_name: 'Phone' });
    expect(sent[0]).toMatchObject({ url: SESSION_PATH, method: 'GET', body: undefined, credentials: 'same-origin' });
    expect(await transport.session()).toBeNull();
    // Not being paired at start is not being signed out.
    expect(signedOut).not.toHaveBeenCalled();
  });

  it('refuses a session reply it cannot read', async () => {
    const { replies, transport } = fakeServer();
    replies.push(reply(200, { device_id: 'dev-1' }));
    await expect(transport.session()).rejects.toMatchObject({ code: 'bad_input' });
  });

  it('pairs with the code and name, without a CSRF token, and keeps the new token', async () => {
    const { sent, replies, transport } = fakeServer();
    replies.push(reply(200, SESSION), reply(200, []));

    expect(await transport.pair('c0de', 'Phone')).toEqual({ device_id: 'dev-1', device_name: 'Phone' });
    await transport.call('list_pending');

    expect(sent[0]).toEqual({
      url: '/api/pair',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: { code: 'c0de', name: 'Phone' },
      credentials: 'same-origin',
    });
    expect(sent[1]?.headers[CSRF_HEADER]).toBe('csrf-1');
  });

  it('throws a pairing refusal as the server words it', async () => {
    const { replies, transport } = fakeServer();
    const refused = { code: 'pairing_refused', message: 'this pairing code is used or expired', problems: [] };
    replies.push(reply(403, refused));
    await expect(transport.pair('old', 'Phone')).rejects.toEqual(refused);
  });

  it('forgets with the CSRF token and drops it afterwards', async () => {
    const { sent, replies, transport } = fakeServer();
    replies.push(reply(200, SESSION), reply(200, null), reply(401), reply(401));
    await transport.session();

    await transport.forget();
    expect(sent[1]).toMatchObject({ url: '/api/forget', method: 'POST', headers: { [CSRF_HEADER]: 'csrf-1' } });
    // Already signed out counts as forgotten.
    await transport.forget();
    expect(sent[2]?.headers[CSRF_HEADER]).toBeUndefined();
    await expect(transport.call('list_pending')).rejects.toMatchObject({ code: 'unauthorized' });
  });
});

describe('events', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  async function listening() {
    const server = fakeServer();
    const events: InboxEvent[] = [];
    const stop = await server.transport.listen((event) => events.push(event));
    const stream = server.streams[0];
    if (!stream) throw new Error('no event stream was opened');
    return { ...server, events, stop, stream };
  }

  it('hands over each inbox event, and says so when it cannot read one', async () => {
    const { events, stream } = await listening();
    expect(stream.url).toBe(EVENTS_PATH);
    stream.open();
    const changed = { kind: 'changed', pending: 3, delta: { rows: [], gone: ['b'], snoozed: false } };
    stream.emit('inbox', JSON.stringify(changed));
    stream.emit('inbox', 'not json');
    stream.emit('inbox', JSON.stringify({ pending: 3 }));
    stream.emit('inbox', JSON.stringify({ kind: 'cancelled', id: 'a' }));
    // What could not be read may have been a change to patch in: the page fetches instead.
    expect(events).toEqual([changed, { kind: 'missed' }, { kind: 'missed' }, { kind: 'cancelled', id: 'a' }]);
  });

  it('says when the stream broke, and once it is back, that everything must be fetched again', async () => {
    const { events, stream } = await listening();
    stream.open();
    stream.drop();
    stream.drop();
    expect(events).toEqual([{ kind: 'disconnected' }]);
    stream.open();
    expect(events).toEqual([{ kind: 'disconnected' }, { kind: 'reconnected' }]);
    // The first open after a clean start owes nothing.
    stream.open();
    expect(events).toHaveLength(2);
  });

  it('signs out when the stream was refused because the device is no longer paired', async () => {
    const { events, replies, streams, stream, transport } = await listening();
    const signedOut = vi.fn();
    transport.onSignedOut(signedOut);
    replies.push(reply(401, { code: 'unauthorized', message: 'revoked', problems: [] }));
    stream.open();

    stream.fail();
    await settle();

    expect(stream.closed).toBe(true);
    expect(signedOut).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(RETRY_MAX_MS * 2);
    expect(streams).toHaveLength(1);
    expect(events).toEqual([{ kind: 'disconnected' }]);
  });

  it('opens a new stream after a wait, longer each time, while the device is still paired', async () => {
    const { events, replies, streams, stream } = await listening();
    stream.open();

    replies.push(reply(200, SESSION));
    stream.fail();
    await settle();
    await vi.advanceTimersByTimeAsync(RETRY_FIRST_MS - 1);
    expect(streams).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(streams).toHaveLength(2);

    // The server is down: no session either; the wait doubles.
    replies.push(new TypeError('Failed to fetch'));
    streams[1]?.fail();
    await settle();
    await vi.advanceTimersByTimeAsync(RETRY_FIRST_MS * 2 - 1);
    expect(streams).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(streams).toHaveLength(3);

    streams[2]?.open();
    expect(events).toEqual([{ kind: 'disconnected' }, { kind: 'reconnected' }]);
  });

  it('stops: closes the stream, cancels a pending reopen, and hands nothing more over', async () => {
    const { events, replies, stop, streams, stream } = await listening();
    stream.open();
    replies.push(reply(200, SESSION));
    stream.fail();
    await settle();
    stop();
    await vi.advanceTimersByTimeAsync(RETRY_MAX_MS);
    expect(streams).toHaveLength(1);

    const second = await listening();
    second.stream.open();
    second.stop();
    expect(second.stream.closed).toBe(true);
    second.stream.emit('inbox', JSON.stringify({ kind: 'changed', pending: 1 }));
    expect(second.events).toEqual([]);
    expect(events).toEqual([{ kind: 'disconnected' }]);
  });
});

describe('parseUiEvent', () => {
  it('reads an event with a kind, and nothing else', () => {
    expect(parseUiEvent('{"kind":"focus","id":null}')).toEqual({ kind: 'focus', id: null });
    expect(parseUiEvent('[]')).toBeNull();
    expect(parseUiEvent('null')).toBeNull();
    expect(parseUiEvent(42)).toBeNull();
  });
});
