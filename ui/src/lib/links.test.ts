import { describe, expect, it } from 'vitest';

import { isWebLink } from './links';

describe('isWebLink', () => {
  it('lets absolute http and https links leave the page', () => {
    expect(isWebLink('https://example.com/runbook')).toBe(true);
    expect(isWebLink('HTTP://example.com')).toBe(true);
  });

  it('stops every other scheme, and links relative to the inbox itself', () => {
    expect(isWebLink('mailto:ops@example.com')).toBe(false);
    expect(isWebLink('file:///etc/passwd')).toBe(false);
    expect(isWebLink('javascript:alert(1)')).toBe(false);
    expect(isWebLink('/api/forget')).toBe(false);
    expect(isWebLink('#pair=abc')).toBe(false);
    expect(isWebLink('')).toBe(false);
  });
});
