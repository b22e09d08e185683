import { describe, expect, it } from 'vitest';

import {
  notificationLabel,
  refusalText,
  sentence,
  trustLabel,
  settledElsewhere,
  settler,
  sourceText,
  statusLabel,
  toIpcError,
} from './words';

describe('settler', () => {
  it('tells operators from policies', () => {
    expect(settler('operator:dana')).toEqual({ kind: 'operator', name: 'dana' });
    expect(settler('policy:expiry')).toEqual({ kind: 'policy', name: 'expiry' });
    expect(settler('cli')).toEqual({ kind: 'other', name: 'cli' });
    expect(settler('robot:x')).toEqual({ kind: 'other', name: 'robot:x' });
  });
});

describe('settledElsewhere', () => {
  it('names the operator who answered elsewhere', () => {
    expect(settledElsewhere('answered', 'operator:x')).toBe('Answered by operator:x elsewhere');
    expect(settledElsewhere('declined', 'operator:sam')).toBe('Declined by operator:sam elsewhere');
  });

  it('does not say a policy acted elsewhere', () => {
    expect(settledElsewhere('expired', 'policy:expiry')).toBe('Expired by policy:expiry while it was open here');
  });
});

describe('labels', () => {
  it('has words for every status and falls back to the code', () => {
    expect(statusLabel('defaulted')).toBe('Answered with defaults');
    expect(statusLabel('cancelled')).toBe('Withdrawn by its asker');
    expect(statusLabel('novel')).toBe('novel');
  });

  it('describes each notification state', () => {
    expect(notificationLabel('available')).toBe('Notifications on');
    expect(notificationLabel('do_not_disturb')).toBe('Do not disturb');
    expect(notificationLabel('unavailable')).toMatch(/unavailable/);
    expect(notificationLabel('off')).toBe('Notifications off');
    expect(notificationLabel('weird')).toBe('Notifications: weird');
  });

  it('joins the source fields that are set', () => {
    expect(sourceText({ app: 'release-bot', run: 'build-7', tool: null, host: 'ci' })).toBe('release-bot / build-7 / ci');
    expect(sourceText({ app: null, run: null, tool: null, host: null })).toBe('');
    expect(sourceText({ app: 'claude-code', run: 's-4', tool: 'ask_operator', host: null, project: 'shop-api' })).toBe(
      'shop-api · claude-code / s-4 / ask_operator',
    );
  });
});

describe('toIpcError', () => {
  it('keeps an IpcError from Rust as it is', () => {
    const error = { code: 'invalid', message: '1 problem', problems: [{ pointer: '/q1', message: 'required' }] };
    expect(toIpcError(error)).toEqual(error);
  });

  it('turns a Tauri string rejection or an Error into bad_input', () => {
    expect(toIpcError('command list_pending not found')).toEqual({
      code: 'bad_input',
      message: 'command list_pending not found',
      problems: [],
    });
    expect(toIpcError(new TypeError('no runtime')).message).toBe('no runtime');
    expect(toIpcError(undefined).code).toBe('bad_input');
  });

  it('fills in missing problems', () => {
    expect(toIpcError({ code: 'storage', message: 'disk full' }).problems).toEqual([]);
  });
});

describe('refusalText', () => {
  it('says a changed request was not answered, and why', () => {
    const text = refusalText({ code: 'changed', message: 'its file was replaced.', problems: [] });
    expect(text).toBe('This request changed after you opened it: its file was replaced; it was not answered.');
  });

  it('says a blocked request got nothing', () => {
    const text = refusalText({ code: 'blocked', message: 'an invalid outcome file blocks it', problems: [] });
    expect(text).toBe('This request was blocked after you opened it: an invalid outcome file blocks it; nothing was sent.');
  });

  it('leaves out a reason the request already shows', () => {
    const error = { code: 'blocked' as const, message: 'its file changed', problems: [] };
    expect(refusalText(error, true)).toBe('This request was blocked after you opened it; nothing was sent.');
  });

  it('leaves other errors to their own messages', () => {
    expect(refusalText({ code: 'storage', message: 'disk full', problems: [] })).toBeNull();
    expect(refusalText({ code: 'invalid', message: 'bad', problems: [] })).toBeNull();
  });
});

describe('sentence', () => {
  it('capitalises and ends a reason', () => {
    expect(sentence(' its file changed after it was placed ')).toBe('Its file changed after it was placed.');
    expect(sentence('ask again (later)')).toBe('Ask again (later)');
    expect(sentence('Done.')).toBe('Done.');
    expect(sentence('')).toBe('');
  });
});

describe('trustLabel', () => {
  it('says who shares the spool', () => {
    expect(trustLabel('private')).toBe('Private to your account');
    expect(trustLabel('team:ops')).toBe('Shared with the group ops');
    expect(trustLabel('other')).toBe('other');
  });
});
