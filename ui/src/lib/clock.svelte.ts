// One ticking clock for every age and countdown on screen. A timer per row would mean
// thousands of timers; this is one, and only the rows on screen read it.

export const clock = $state({ now: Date.now() });

setInterval(() => {
  clock.now = Date.now();
}, 1000);
