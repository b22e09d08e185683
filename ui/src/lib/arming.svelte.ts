// Arming, as a component holds it: when what it shows appeared, and whether keys and taps
// may act on it yet (the rule itself is lib/quick.ts's `isArmed`). Re-armed when the window
// comes to the front or the page becomes visible again: what is shown may not have been
// seen, and a key meant for another window must not land here.

import { ARM_MS, isArmed } from './quick';

export class Arming {
  /** For the screen (a meter, a hint); `ready()` is what decides. */
  armed = $state(false);
  #shownAt: number | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** What is shown just appeared or changed: keys wait ARM_MS from now. */
  arm(): void {
    this.disarm();
    const at = performance.now();
    this.#shownAt = at;
    this.#timer = setTimeout(() => (this.armed = this.#shownAt === at), ARM_MS);
  }

  /** Nothing is shown (or it is going): no key acts. */
  disarm(): void {
    clearTimeout(this.#timer);
    this.#shownAt = null;
    this.armed = false;
  }

  /** Whether a key pressed now may act: by the clock, not only the timer's flag. */
  ready(): boolean {
    return isArmed(this.#shownAt, performance.now());
  }

  /**
   * Re-arms on the window's focus and the page's becoming visible while `shown()` says
   * something is on screen; returns the cleanup (for `onMount`).
   */
  watchWindow(shown: () => boolean): () => void {
    const rearm = () => {
      if (shown()) this.arm();
    };
    const onVisibility = () => {
      if (document.visibilityState === 'visible') rearm();
      else this.disarm();
    };
    window.addEventListener('focus', rearm);
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      window.removeEventListener('focus', rearm);
      document.removeEventListener('visibilitychange', onVisibility);
      this.disarm();
    };
  }
}
