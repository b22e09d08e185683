import { describe, expect, it } from 'vitest';

import { coalesce } from './refresh';

/** A fetch that waits until the test lets it finish. */
function controlledFetch() {
  const pending: Array<() => void> = [];
  let started = 0;
  let running = 0;
  let maxRunning = 0;
  const fetch = () => {
    started++;
    running++;
    maxRunning = Math.max(maxRunning, running);
    return new Promise<void>((resolve) =>
      pending.push(() => {
        running--;
        resolve();
      }),
    );
  };
  return {
    fetch,
    finishNext: async () => {
      pending.shift()?.();
      // Let the promise chains run.
      for (let i = 0; i < 5; i++) await Promise.resolve();
    },
    get started() {
      return started;
    },
    get maxRunning() {
      return maxRunning;
    },
  };
}

describe('coalesce', () => {
  it('runs at once when idle', async () => {
    const f = controlledFetch();
    const refresher = coalesce(f.fetch);
    const done = refresher.run();
    expect(f.started).toBe(1);
    expect(refresher.busy).toBe(true);
    await f.finishNext();
    await done;
    expect(refresher.busy).toBe(false);
  });

  it('queues one run behind a running one, however many are asked for', async () => {
    const f = controlledFetch();
    const refresher = coalesce(f.fetch);
    refresher.run();
    const second = refresher.run();
    const third = refresher.run();
    expect(second).toBe(third);
    expect(f.started).toBe(1);
    await f.finishNext();
    expect(f.started).toBe(2);
    await f.finishNext();
    await second;
    expect(f.started).toBe(2);
    expect(f.maxRunning).toBe(1);
  });

  it('queues again once the queued run has started', async () => {
    const f = controlledFetch();
    const refresher = coalesce(f.fetch);
    refresher.run();
    refresher.run();
    await f.finishNext(); // the queued run starts
    refresher.run(); // asked during the second run: needs a third
    await f.finishNext();
    expect(f.started).toBe(3);
    await f.finishNext();
    expect(f.maxRunning).toBe(1);
  });

  it('keeps going after a failed fetch', async () => {
    let calls = 0;
    const refresher = coalesce(async () => {
      calls++;
      if (calls === 1) throw new Error('boom');
    });
    await expect(refresher.run()).rejects.toThrow('boom');
    await refresher.run();
    expect(calls).toBe(2);
    expect(refresher.busy).toBe(false);
  });
});
