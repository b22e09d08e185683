import { describe, expect, it } from 'vitest';

import type { DeviceView } from './bindings/DeviceView';
import type { RemoteSettings } from './bindings/RemoteSettings';
import type { RemoteView } from './bindings/RemoteView';
import {
  deviceRow,
  deviceRows,
  newlyPaired,
  pairingExpiry,
  pushText,
  sameRemoteSettings,
  serverState,
} from './remote';

// Built from local-time parts, so the clock times hold in any time zone.
const NOW = new Date(2026, 11, 3, 15, 30).getTime();
const minutes = (n: number) => new Date(NOW - n * 60_000).toISOString();
const local = (...parts: [number, number, number, number, number]) => new Date(...parts).toISOString();

function device(overrides: Partial<DeviceView> = {}): DeviceView {
  return {
    id: 'dev-1',
    name: 'Phone',
    paired_at: minutes(60),
    last_seen_at: null,
    revoked_at: null,
    ...overrides,
  };
}

function view(overrides: Partial<RemoteView> = {}): RemoteView {
  return {
    running: false,
    url: null,
    reach: null,
    fingerprint: null,
    problem: null,
    ntfy: null,
    devices: [],
    ...overrides,
  };
}

const SETTINGS: RemoteSettings = {
  enabled: true,
  listen: '0.0.0.0:8765',
  ntfy_topic: 'https://ntfy.sh/inbox',
  ntfy_token: 'tk_1',
  ntfy_titles_only: false,
};

describe('sameRemoteSettings', () => {
  it('is true for equal settings and false when any one field differs', () => {
    expect(sameRemoteSettings(SETTINGS, { ...SETTINGS })).toBe(true);
    for (const change of [
      { enabled: false },
      { listen: '127.0.0.1:8765' },
      { ntfy_topic: '' },
      { ntfy_token: 'tk_2' },
      { ntfy_titles_only: true },
    ]) {
      expect(sameRemoteSettings(SETTINGS, { ...SETTINGS, ...change }), JSON.stringify(change)).toBe(false);
    }
  });
});

describe('serverState', () => {
  it('says running, off, or not running when switched on but it could not start', () => {
    expect(serverState(view({ running: true, url: 'http://127.0.0.1:8765' }))).toEqual({
      text: 'Running',
      tone: 'running',
    });
    expect(serverState(view())).toEqual({ text: 'Off', tone: 'off' });
    expect(serverState(view({ problem: 'address in use' }))).toEqual({ text: 'Not running', tone: 'problem' });
  });
});

describe('pushText', () => {
  it('names the ntfy topic, or says there is none', () => {
    expect(pushText(view({ ntfy: 'topic inbox on https://ntfy.sh' }))).toBe('to ntfy: topic inbox on https://ntfy.sh');
    expect(pushText(view())).toBe('none (no ntfy topic)');
  });
});

describe('deviceRow', () => {
  it('says when a device paired and when it was last seen', () => {
    expect(deviceRow(device({ paired_at: local(2026, 11, 3, 9, 4), last_seen_at: minutes(3) }), NOW)).toEqual({
      id: 'dev-1',
      name: 'Phone',
      paired: 'paired 09:04',
      lastSeen: 'last seen 3m ago',
      revoked: null,
    });
  });

  it('says so when a device has not been seen since it paired', () => {
    expect(deviceRow(device(), NOW).lastSeen).toBe('not seen since it paired');
  });

  it('says when a device was revoked', () => {
    const row = deviceRow(device({ revoked_at: local(2025, 5, 1, 10, 0) }), NOW);
    expect(row.revoked).toBe('revoked Jun 1 2025 10:00');
  });
});

describe('deviceRows', () => {
  it('lists the devices that may answer first, each group in the order given', () => {
    const rows = deviceRows(
      [
        device({ id: 'a', revoked_at: minutes(1) }),
        device({ id: 'b' }),
        device({ id: 'c', revoked_at: minutes(2) }),
        device({ id: 'd' }),
      ],
      NOW,
    );
    expect(rows.map((row) => row.id)).toEqual(['b', 'd', 'a', 'c']);
  });
});

describe('pairingExpiry', () => {
  it('counts down the ten minutes a link works, once', () => {
    const expires = new Date(NOW + 9 * 60_000 + 58_000).toISOString();
    expect(pairingExpiry(expires, NOW)).toEqual({
      text: 'works once, expires in 9m 58s',
      urgent: false,
      expired: false,
    });
    expect(pairingExpiry(new Date(NOW + 30_000).toISOString(), NOW).urgent).toBe(true);
  });

  it('says to make a new link once it has expired', () => {
    expect(pairingExpiry(new Date(NOW).toISOString(), NOW)).toEqual({
      text: 'expired: make a new link',
      urgent: true,
      expired: true,
    });
  });
});

describe('newlyPaired', () => {
  it('names the devices that were not listed when the link was made', () => {
    const devices = [device({ id: 'new', name: 'Test phone' }), device({ id: 'old', name: 'Laptop' })];
    expect(newlyPaired(['old'], devices)).toEqual(['Test phone']);
    expect(newlyPaired(['old', 'new'], devices)).toEqual([]);
  });
});
