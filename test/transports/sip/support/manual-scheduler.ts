import type { TimerHandle, TimerScheduler } from '../../../../src/transports/sip/timers.js';

/** A virtual clock: timers fire only when a test advances time, in due order. */
export class ManualScheduler implements TimerScheduler {
  nowMs = 0;
  private nextId = 1;
  private readonly pending = new Map<number, { dueMs: number; callback: () => void }>();

  set(delayMs: number, callback: () => void): TimerHandle {
    const id = this.nextId++;
    this.pending.set(id, { dueMs: this.nowMs + delayMs, callback });
    return { id };
  }

  clear(handle: TimerHandle): void {
    this.pending.delete(handle.id);
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** Moves the clock forward, firing every timer that falls due on the way. */
  advance(ms: number): void {
    const endMs = this.nowMs + ms;
    for (;;) {
      let nextId = -1;
      let nextDue = Infinity;
      for (const [id, timer] of this.pending) {
        if (
          timer.dueMs <= endMs &&
          (timer.dueMs < nextDue || (timer.dueMs === nextDue && id < nextId))
        ) {
          nextId = id;
          nextDue = timer.dueMs;
        }
      }
      if (nextId < 0) {
        break;
      }
      const timer = this.pending.get(nextId)!;
      this.pending.delete(nextId);
      this.nowMs = timer.dueMs;
      timer.callback();
    }
    this.nowMs = endMs;
  }
}
