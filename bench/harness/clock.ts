/**
 * Time for the harness. Everything (pacing, the caller scripts, the fake transport) reads and
 * schedules through one Clock, so tests can run whole conversations on a VirtualClock: instant,
 * and exact to the millisecond.
 */
export interface Clock {
  /** Milliseconds on a monotonic clock. */
  nowMs(): number;
  /** Runs `callback` once, `delayMs` from now. */
  setTimer(callback: () => void, delayMs: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

export interface TimerHandle {
  readonly id: number;
}

/** The process's monotonic clock and timers. */
export class RealClock implements Clock {
  readonly #timers = new Map<number, NodeJS.Timeout>();
  #nextId = 1;

  nowMs(): number {
    return performance.now();
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
    const id = this.#nextId++;
    const timer = setTimeout(
      () => {
        this.#timers.delete(id);
        callback();
      },
      Math.max(0, delayMs),
    );
    this.#timers.set(id, timer);
    return { id };
  }

  clearTimer(handle: TimerHandle): void {
    const timer = this.#timers.get(handle.id);
    if (timer !== undefined) {
      clearTimeout(timer);
      this.#timers.delete(handle.id);
    }
  }
}

interface VirtualTimer {
  id: number;
  atMs: number;
  callback: () => void;
}

/**
 * A clock that moves only when told. Timers due at the same time run in the order they were set.
 * `runUntil` advances timer by timer, letting promises settle between timers, until a promise
 * settles: the way a test drives async code that waits on this clock.
 */
export class VirtualClock implements Clock {
  #nowMs: number;
  #nextId = 1;
  #timers: VirtualTimer[] = [];

  constructor(startMs = 0) {
    this.#nowMs = startMs;
  }

  nowMs(): number {
    return this.#nowMs;
  }

  /** Timers set and not yet run or cleared. */
  get pendingTimerCount(): number {
    return this.#timers.length;
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
    const id = this.#nextId++;
    const timer: VirtualTimer = { id, atMs: this.#nowMs + Math.max(0, delayMs), callback };
    // Keep the list sorted by due time, stable for equal times.
    let index = this.#timers.length;
    while (index > 0 && this.#timers[index - 1]!.atMs > timer.atMs) {
      index--;
    }
    this.#timers.splice(index, 0, timer);
    return { id };
  }

  clearTimer(handle: TimerHandle): void {
    this.#timers = this.#timers.filter((timer) => timer.id !== handle.id);
  }

  /** Runs every timer due up to `nowMs + ms` (synchronously), then sets the time to that. */
  advanceBy(ms: number): void {
    const untilMs = this.#nowMs + ms;
    for (;;) {
      const next = this.#timers[0];
      if (next === undefined || next.atMs > untilMs) {
        break;
      }
      this.#timers.shift();
      this.#nowMs = next.atMs;
      next.callback();
    }
    this.#nowMs = untilMs;
  }

  /**
   * Advances timer by timer until `promise` settles, and returns its value. Throws when it has not
   * settled after `limitMs` of virtual time or when no timer is left to move the clock.
   */
  async runUntil<T>(promise: Promise<T>, limitMs: number): Promise<T> {
    let settled = false;
    const watched = promise.finally(() => {
      settled = true;
    });
    const endMs = this.#nowMs + limitMs;
    for (;;) {
      await flushPromises();
      if (settled) {
        return watched;
      }
      const next = this.#timers[0];
      if (next === undefined) {
        throw new Error(`virtual clock: nothing scheduled at ${this.#nowMs} ms and still waiting`);
      }
      if (next.atMs > endMs) {
        throw new Error(`virtual clock: still waiting after ${limitMs} ms`);
      }
      this.#timers.shift();
      this.#nowMs = next.atMs;
      next.callback();
    }
  }
}

async function flushPromises(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
