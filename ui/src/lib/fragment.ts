// What the page's address fragment can carry, in a browser served by `answer-inbox serve`:
// - a pairing link, `#pair=<code>`, with `&fp=<certificate fingerprint>` under TLS;
// - a request to open, `#request=<id>` (a push notification's Open action).
// A fragment never reaches the server, so the one-time pairing code is in no server log and
// no Referer header.

export interface PairLink {
  /** The one-time pairing code, as the link carries it. */
  code: string;
  /** The certificate's SHA-256 fingerprint (hex, with or without colons), under TLS. */
  fingerprint: string | null;
}

function params(hash: string): URLSearchParams {
  return new URLSearchParams(hash.replace(/^#/, ''));
}

/** The pairing link in a location's fragment (`location.hash`); null when there is none. */
export function parsePairFragment(hash: string): PairLink | null {
  const found = params(hash);
  const code = found.get('pair')?.trim() ?? '';
  if (code === '') return null;
  return { code, fingerprint: found.get('fp')?.trim() || null };
}

/** The request a location's fragment asks to open; null when it names none. */
export function parseRequestFragment(hash: string): string | null {
  return params(hash).get('request')?.trim() || null;
}

/** Takes the fragment out of the address bar and this history entry (it has been acted on). */
export function dropFragment(): void {
  history.replaceState(history.state, '', location.pathname + location.search);
}
