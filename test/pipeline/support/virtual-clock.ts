/** Time for tests: sleep() resolves when the driver advances the clock past it, never by itself. */
export class VirtualClock {
  #now = 0;
  #timers: { atMs: number; resolve: () => void }[] = [];

  get now(): number {
    return this.#now;
  }

  sleep(ms: number): Promise<void> {
    if (ms <= 0) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#timers.push({ atMs: this.#now + ms, resolve }));
  }

  advanceTo(nowMs: number): void {
    this.#now = nowMs;
    const due = this.#timers.filter((timer) => timer.atMs <= nowMs);
    this.#timers = this.#timers.filter((timer) => timer.atMs > nowMs);
    for (const timer of due) {
      timer.resolve();
    }
  }
}

/** Lets every pending promise chain run (one macrotask turn drains the microtask queue). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
