import type { Clock, TimerHandle } from './clock.js';

export type TickListener = (nowMs: number) => void;

/**
 * One timer for every simulated caller: ticks each `frameMs` on a fixed grid (start + k·frameMs,
 * so lateness does not accumulate) and calls each listener once per tick. A late tick is not
 * repeated; listeners work out from the time how many frames are due. Records how late ticks
 * fire: when the harness's own event loop falls behind, its measures are suspect.
 */
export class PacingTimer {
  readonly frameMs: number;
  readonly #clock: Clock;
  readonly #listeners = new Set<TickListener>();
  #timer: TimerHandle | null = null;
  #startMs = 0;
  #tick = 0;
  #lateSamplesMs: number[] = [];
  #maxLateMs = 0;

  constructor(clock: Clock, frameMs = 20) {
    if (!(frameMs > 0)) {
      throw new RangeError(`frameMs must be positive, got ${frameMs}`);
    }
    this.#clock = clock;
    this.frameMs = frameMs;
  }

  /** Adds a listener (starting the timer if it was idle); returns its removal. */
  add(listener: TickListener): () => void {
    this.#listeners.add(listener);
    if (this.#timer === null) {
      this.#startMs = this.#clock.nowMs();
      this.#tick = 0;
      this.#schedule();
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0 && this.#timer !== null) {
        this.#clock.clearTimer(this.#timer);
        this.#timer = null;
      }
    };
  }

  /** The latest grid point at or before now: callers start their frame clock on it. */
  gridMs(): number {
    const nowMs = this.#clock.nowMs();
    return this.#startMs + Math.floor((nowMs - this.#startMs) / this.frameMs) * this.frameMs;
  }

  /** How late ticks fired (ms), sampled once per 50 ticks, and the worst seen. */
  lateness(): { samplesMs: readonly number[]; maxMs: number } {
    return { samplesMs: this.#lateSamplesMs, maxMs: this.#maxLateMs };
  }

  #schedule(): void {
    this.#tick++;
    const dueMs = this.#startMs + this.#tick * this.frameMs;
    this.#timer = this.#clock.setTimer(() => this.#fire(dueMs), dueMs - this.#clock.nowMs());
  }

  #fire(dueMs: number): void {
    const nowMs = this.#clock.nowMs();
    const lateMs = Math.max(0, nowMs - dueMs);
    this.#maxLateMs = Math.max(this.#maxLateMs, lateMs);
    if (this.#tick % 50 === 0 && this.#lateSamplesMs.length < 100_000) {
      this.#lateSamplesMs.push(lateMs);
    }
    // Skip grid points already past, so one stall does not cause a burst of ticks.
    while (this.#startMs + (this.#tick + 1) * this.frameMs <= nowMs) {
      this.#tick++;
    }
    for (const listener of this.#listeners) {
      listener(nowMs);
    }
    if (this.#listeners.size > 0) {
      this.#schedule();
    } else {
      this.#timer = null;
    }
  }
}
