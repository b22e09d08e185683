import { describe, expect, it } from 'vitest';

import { formatFingerprint, guessDeviceName } from './pairing';

describe('guessDeviceName', () => {
  it('calls a mobile browser a phone, anything else a browser', () => {
    const iphone = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148';
    const android = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/124.0 Mobile Safari/537.36';
    const firefoxAndroid = 'Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0';
    const tablet = 'Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 Chrome/124.0 Safari/537.36';
    const desktop = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';
    expect(guessDeviceName(iphone)).toBe('Phone');
    expect(guessDeviceName(android)).toBe('Phone');
    expect(guessDeviceName(firefoxAndroid)).toBe('Phone');
    expect(guessDeviceName(tablet)).toBe('Browser');
    expect(guessDeviceName(desktop)).toBe('Browser');
    expect(guessDeviceName('')).toBe('Browser');
  });
});

describe('formatFingerprint', () => {
  it('shows a SHA-256 fingerprint as colon-separated pairs, as browsers do', () => {
    const hex = '0123456789abcdef'.repeat(4);
    const shown = formatFingerprint(hex);
    expect(shown.startsWith('01:23:45:67:89:AB:CD:EF:01')).toBe(true);
    expect(shown.split(':')).toHaveLength(32);
    expect(formatFingerprint(shown)).toBe(shown);
  });

  it('shows anything else as it came', () => {
    expect(formatFingerprint('abc')).toBe('abc');
    expect(formatFingerprint('zz'.repeat(32))).toBe('zz'.repeat(32));
  });
});
