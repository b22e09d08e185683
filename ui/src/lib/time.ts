// Times as an operator reads them: how old a request is, how long until it expires, how
// long an answer took. Pure functions of (time, now) so they are tested without a clock.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Milliseconds since the epoch of an RFC 3339 timestamp; NaN when it cannot be read. */
export function parseTime(rfc3339: string): number {
  return Date.parse(rfc3339);
}

/** "just now", "42s ago", "3m ago", "5h ago", "2d ago". A time in the future reads "just now". */
export function formatAge(at: number, now: number): string {
  if (!Number.isFinite(at)) return '';
  const age = now - at;
  if (age < 5 * SECOND) return 'just now';
  if (age < MINUTE) return `${Math.floor(age / SECOND)}s ago`;
  if (age < HOUR) return `${Math.floor(age / MINUTE)}m ago`;
  if (age < DAY) return `${Math.floor(age / HOUR)}h ago`;
  return `${Math.floor(age / DAY)}d ago`;
}

/** How long a pending request has waited: "waiting 42s", "waiting 3m", "waiting 2d". */
export function formatWaiting(at: number, now: number): string {
  if (!Number.isFinite(at)) return '';
  const age = Math.max(0, now - at);
  if (age < MINUTE) return `waiting ${Math.floor(age / SECOND)}s`;
  if (age < HOUR) return `waiting ${Math.floor(age / MINUTE)}m`;
  if (age < DAY) return `waiting ${Math.floor(age / HOUR)}h ${Math.floor((age % HOUR) / MINUTE)}m`;
  return `waiting ${Math.floor(age / DAY)}d`;
}

export interface Countdown {
  text: string;
  /** Under a minute left (or already past): shown in red. */
  urgent: boolean;
  expired: boolean;
}

/** "expires in 4m 10s", "expires in 2h 5m", "expires in 3d 4h"; "expired" once it has passed. */
export function formatCountdown(deadline: number, now: number): Countdown {
  const left = deadline - now;
  if (left <= 0) return { text: 'expired', urgent: true, expired: true };
  // Round up: "expires in 1s" until the very end, never "expires in 0s".
  const seconds = Math.ceil(left / SECOND);
  let text: string;
  if (seconds < 60) {
    text = `${seconds}s`;
  } else if (seconds < 3600) {
    text = `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
  } else if (seconds < 86400) {
    text = `${Math.floor(seconds / 3600)}h ${Math.floor((seconds % 3600) / 60)}m`;
  } else {
    text = `${Math.floor(seconds / 86400)}d ${Math.floor((seconds % 86400) / 3600)}h`;
  }
  return { text: `expires in ${text}`, urgent: left < MINUTE, expired: false };
}

/** How long something took: "under 1 s", "42 s", "3 min", "1 h 5 min", "2 d 3 h". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  if (ms < SECOND) return 'under 1 s';
  if (ms < MINUTE) return `${Math.floor(ms / SECOND)} s`;
  if (ms < HOUR) return `${Math.floor(ms / MINUTE)} min`;
  if (ms < DAY) {
    const hours = Math.floor(ms / HOUR);
    const minutes = Math.floor((ms % HOUR) / MINUTE);
    return minutes ? `${hours} h ${minutes} min` : `${hours} h`;
  }
  const days = Math.floor(ms / DAY);
  const hours = Math.floor((ms % DAY) / HOUR);
  return hours ? `${days} d ${hours} h` : `${days} d`;
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/**
 * A timestamp in local time: "14:05" today, "Dec 3 14:05" this year, "Dec 3 2025 14:05"
 * otherwise. English month names, like the rest of the UI, so the output does not depend on
 * the webview's locale.
 */
export function formatWhen(at: number, now: number): string {
  if (!Number.isFinite(at)) return '';
  const date = new Date(at);
  const today = new Date(now);
  const clock = `${pad(date.getHours())}:${pad(date.getMinutes())}`;
  const sameYear = date.getFullYear() === today.getFullYear();
  if (sameYear && date.getMonth() === today.getMonth() && date.getDate() === today.getDate()) {
    return clock;
  }
  const day = `${MONTHS[date.getMonth()]} ${date.getDate()}`;
  return sameYear ? `${day} ${clock}` : `${day} ${date.getFullYear()} ${clock}`;
}
