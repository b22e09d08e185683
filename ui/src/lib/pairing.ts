// The pairing screen's helpers: a first name for the device, and the certificate's
// fingerprint as browsers show it (the link itself is read in fragment.ts).

/** A first name for this device: what it most likely is, for the operator to change. */
export function guessDeviceName(userAgent: string): string {
  return /\b(Mobi|iPhone|iPod)|Android.*Mobile/i.test(userAgent) ? 'Phone' : 'Browser';
}

/**
 * A SHA-256 fingerprint as browsers show a certificate's ("AB:CD:…", 32 pairs), so it can
 * be compared pair by pair. Anything that is not 64 hex digits is shown as it came.
 */
export function formatFingerprint(hex: string): string {
  const bare = hex.replace(/[\s:]/g, '');
  if (!/^[0-9a-fA-F]{64}$/.test(bare)) return hex;
  return (bare.toUpperCase().match(/../g) ?? []).join(':');
}
