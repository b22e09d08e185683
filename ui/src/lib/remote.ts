// "Answer from other devices" in Settings: what the server's state, the paired devices and
// a pairing link's lifetime read as. Pure functions of (view, now), tested without a clock
// or a window; RemoteAccess.svelte shows them.

import type { DeviceView } from './bindings/DeviceView';
import type { RemoteSettings } from './bindings/RemoteSettings';
import type { RemoteView } from './bindings/RemoteView';
import { formatAge, formatCountdown, formatWhen, parseTime, type Countdown } from './time';

/** Whether two sets of remote settings would run the same server (Settings' "dirty"). */
export function sameRemoteSettings(a: RemoteSettings, b: RemoteSettings): boolean {
  return (
    a.enabled === b.enabled &&
    a.listen === b.listen &&
    a.ntfy_topic === b.ntfy_topic &&
    a.ntfy_token === b.ntfy_token &&
    a.ntfy_titles_only === b.ntfy_titles_only
  );
}

export type ServerTone = 'running' | 'off' | 'problem';

/** The server in one word, and how to colour it. */
export function serverState(view: RemoteView): { text: string; tone: ServerTone } {
  if (view.running) return { text: 'Running', tone: 'running' };
  if (view.problem) return { text: 'Not running', tone: 'problem' };
  return { text: 'Off', tone: 'off' };
}

/** Where pushes go, in words, while the server runs. */
export function pushText(view: RemoteView): string {
  if (view.ntfy) return `to ntfy: ${view.ntfy}`;
  return 'none (no ntfy topic)';
}

/** One line of the devices list. */
export interface DeviceRow {
  id: string;
  name: string;
  /** "paired Dec 3 14:05" */
  paired: string;
  /** "last seen 3m ago", or "not seen since it paired". */
  lastSeen: string;
  /** "revoked Dec 3 14:10", null while the device may still answer. */
  revoked: string | null;
}

export function deviceRow(device: DeviceView, now: number): DeviceRow {
  const seen = device.last_seen_at === null ? NaN : parseTime(device.last_seen_at);
  return {
    id: device.id,
    name: device.name,
    paired: `paired ${formatWhen(parseTime(device.paired_at), now)}`,
    lastSeen: Number.isFinite(seen) ? `last seen ${formatAge(seen, now)}` : 'not seen since it paired',
    revoked: device.revoked_at === null ? null : `revoked ${formatWhen(parseTime(device.revoked_at), now)}`,
  };
}

/**
 * The devices as listed: those that may still answer first, then the revoked ones, each
 * group in Rust's order (newest paired first).
 */
export function deviceRows(devices: DeviceView[], now: number): DeviceRow[] {
  const rows = devices.map((device) => deviceRow(device, now));
  return [...rows.filter((row) => row.revoked === null), ...rows.filter((row) => row.revoked !== null)];
}

/** "works once, expires in 9m 58s"; "expired" once the code is dead. */
export function pairingExpiry(expiresAt: string, now: number): Countdown {
  const left = formatCountdown(parseTime(expiresAt), now);
  if (left.expired) return { ...left, text: 'expired: make a new link' };
  return { ...left, text: `works once, ${left.text}` };
}

/**
 * The devices paired since the pairing link was made (`before`: the ids listed then): the
 * link's code was most likely used by one of them. Names, newest first.
 */
export function newlyPaired(before: readonly string[], devices: DeviceView[]): string[] {
  const known = new Set(before);
  return devices.filter((device) => !known.has(device.id)).map((device) => device.name);
}
