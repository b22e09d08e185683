import { describe, expect, it } from 'vitest';

import { parsePairFragment, parseRequestFragment } from './fragment';

const FP = '3f'.repeat(32);

describe('parsePairFragment', () => {
  it('reads the code, and the fingerprint under TLS', () => {
    expect(parsePairFragment('#pair=Ab_c-9')).toEqual({ code: 'Ab_c-9', fingerprint: null });
    expect(parsePairFragment(`#pair=Ab_c-9&fp=${FP}`)).toEqual({ code: 'Ab_c-9', fingerprint: FP });
    expect(parsePairFragment(`#fp=${FP}&pair=xyz`)).toEqual({ code: 'xyz', fingerprint: FP });
    // As the server prints it: the fingerprint in pairs, as browsers show it.
    expect(parsePairFragment('#pair=Vb3&fp=AB:CD:EF')).toEqual({ code: 'Vb3', fingerprint: 'AB:CD:EF' });
  });

  it('decodes what the link escaped', () => {
    expect(parsePairFragment('#pair=a%2Fb')?.code).toBe('a/b');
  });

  it('finds no pairing link without a code', () => {
    expect(parsePairFragment('')).toBeNull();
    expect(parsePairFragment('#')).toBeNull();
    expect(parsePairFragment('#pair=')).toBeNull();
    expect(parsePairFragment('#pair=%20')).toBeNull();
    expect(parsePairFragment(`#fp=${FP}`)).toBeNull();
    expect(parsePairFragment('#pairing=abc')).toBeNull();
  });

  it('ignores an empty fingerprint', () => {
    expect(parsePairFragment('#pair=abc&fp=')).toEqual({ code: 'abc', fingerprint: null });
  });
});

describe('parseRequestFragment', () => {
  it('reads the request a push notification opens', () => {
    expect(parseRequestFragment('#request=deploy-3')).toBe('deploy-3');
    expect(parseRequestFragment('#request=a%20b')).toBe('a b');
  });

  it('finds none in other fragments', () => {
    expect(parseRequestFragment('')).toBeNull();
    expect(parseRequestFragment('#request=')).toBeNull();
    expect(parseRequestFragment('#pair=abc')).toBeNull();
  });
});
