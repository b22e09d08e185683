import { describe, expect, it } from 'vitest';

import { outcome } from './testing';
import {
  blocksText,
  notificationLabel,
  pairingErrorText,
  refusalText,
  sentence,
  trustLabel,
  settledElsewhere,
  settler,
  sourceText,
  statusLabel,
  toIpcError,
  viaText,
  whoWon,
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
    expect(settledElsewhere('expired', 'policy:expiry', { surface: 'policy' })).toBe(
      'Expired by policy:expiry while it was open here',
    );
  });

  it('says where, when that is known', () => {
    expect(settledElsewhere('answered', 'operator:dana', { surface: 'web', device: 'Phone' })).toBe(
      'Answered by operator:dana from Phone (web)',
    );
    expect(settledElsewhere('declined', 'operator:dana', { surface: 'cli', device: null })).toBe(
      'Declined by operator:dana on the command line',
    );
    expect(settledElsewhere('answered', 'operator:dana', { surface: null })).toBe('Answered by operator:dana elsewhere');
  });
});

describe('viaText', () => {
  it('names each surface', () => {
    expect(viaText({ surface: 'window', device: null })).toBe('in the window');
    expect(viaText({ surface: 'bubble', device: null })).toBe('from a desktop notification');
    expect(viaText({ surface: 'cli', device: null })).toBe('on the command line');
    expect(viaText({ surface: 'push', device: null })).toBe('from a phone notification');
    expect(viaText({ surface: 'web', device: 'Dana’s phone' })).toBe('from Dana’s phone (web)');
  });

  it('says "a browser" when a web answer names no device', () => {
    expect(viaText({ surface: 'web', device: null })).toBe('from a browser');
    expect(viaText({ surface: 'web', device: '  ' })).toBe('from a browser');
    expect(viaText({ surface: 'web' })).toBe('from a browser');
  });

  it('says nothing for a policy or an outcome that does not say', () => {
    expect(viaText({ surface: 'policy', device: null })).toBeNull();
    expect(viaText({ surface: null, device: null })).toBeNull();
    expect(viaText({})).toBeNull();
  });

  it('passes on a surface it does not know', () => {
    expect(viaText({ surface: 'watch', device: null })).toBe('through watch');
  });
});

describe('whoWon', () => {
  it('says who answered first and where', () => {
    expect(whoWon(outcome({ answered_by: 'operator:dana', surface: 'web', device: 'Phone' }))).toBe(
      'Answered by operator:dana from Phone (web)',
    );
    expect(whoWon(outcome({ answered_by: 'operator:dana', surface: 'window' }))).toBe(
      'Answered by operator:dana in the window',
    );
    expect(whoWon(outcome({ status: 'declined', answered_by: 'operator:sam', surface: 'bubble' }))).toBe(
      'Declined by operator:sam from a desktop notification',
    );
  });

  it('names the policy that settled it', () => {
    expect(whoWon(outcome({ status: 'defaulted', answered_by: 'policy:expiry', surface: 'policy' }))).toBe(
      'Answered with defaults by policy:expiry',
    );
  });

  it('leaves the wording to the caller when the outcome does not say where', () => {
    expect(whoWon(outcome({ surface: null }))).toBeNull();
    // An outcome view from before surfaces were recorded has neither field.
    expect(whoWon({ status: 'answered', answered_by: 'operator:dana' })).toBeNull();
  });
});

describe('pairingErrorText', () => {
  it('says a refused code needs a new link', () => {
    const text = pairingErrorText({ code: 'pairing_refused', message: 'this pairing code is used or expired', problems: [] });
    expect(text).toBe(
      "This pairing code is used or expired. Get a new pairing link from `answer-inbox serve` or the app's Settings.",
    );
    expect(pairingErrorText({ code: 'pairing_refused', message: '', problems: [] })).toMatch(/^The pairing code was refused\. /);
  });

  it("leaves the wait to the server's words", () => {
    expect(pairingErrorText({ code: 'rate_limited', message: 'too many attempts; try again in 60 s', problems: [] })).toBe(
      'Too many attempts; try again in 60 s.',
    );
    expect(pairingErrorText({ code: 'rate_limited', message: '', problems: [] })).toBe(
      'Too many attempts. Wait a minute, then try again.',
    );
  });

  it('says an unreachable server is one, and any other failure as a failure', () => {
    expect(pairingErrorText({ code: 'unreachable', message: 'Answer Inbox could not be reached (Failed to fetch)', problems: [] })).toBe(
      'Answer Inbox could not be reached (Failed to fetch)',
    );
    expect(pairingErrorText({ code: 'forbidden', message: 'the page is not on this server', problems: [] })).toBe(
      'Pairing failed: the page is not on this server.',
    );
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

describe('blocksText', () => {
  it('names the agent session or the run a request holds up', () => {
    expect(blocksText({ app: 'claude-code', run: '8d1e6b40' })).toBe('Blocks claude-code session 8d1e6b40');
    expect(blocksText({ app: 'release-bot', run: 'build-1187' })).toBe('Blocks release-bot run build-1187');
    expect(blocksText({ app: null, run: 'r-9' })).toBe('Blocks run r-9');
    expect(blocksText({ app: 'planu', run: null })).toBeNull();
  });
});
