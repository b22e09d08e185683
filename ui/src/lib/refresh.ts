// Refetching a list when Rust says it changed. Events can come in bursts (a thousand files
// dropped at once become a handful of `changed` events), and a fetch of 10,000 rows takes a
// while, so fetches never overlap: at most one runs, and at most one more waits behind it.
// Any number of requests made while one runs are served by that single queued run, which
// starts after the running one and so sees everything that changed.

export interface Refresher {
  /** Ask for a fetch; resolves when a fetch that started after this call has finished. */
  run(): Promise<void>;
  /** Whether a fetch is running now. */
  readonly busy: boolean;
}

export function coalesce(fetch: () => Promise<void>): Refresher {
  let running: Promise<void> | null = null;
  let queued: Promise<void> | null = null;

  const start = (): Promise<void> => {
    const p = (async () => {
      try {
        await fetch();
      } finally {
        running = null;
      }
    })();
    running = p;
    return p;
  };

  return {
    run() {
      if (!running) return start();
      if (!queued) {
        queued = running
          .catch(() => undefined)
          .then(() => {
            queued = null;
            return start();
          });
      }
      return queued;
    },
    get busy() {
      return running !== null;
    },
  };
}
