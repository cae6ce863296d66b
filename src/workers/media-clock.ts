/**
 * One media clock per worker thread: every FRAME_MS it calls each registered
 * participant's tick in a single loop (no timer per call). Scheduling is
 * drift-corrected: deadlines are `startMs + n * periodMs` from performance.now(),
 * so timer jitter does not accumulate. Late ticks and skipped deadlines are counted.
 */
import { performance } from 'node:perf_hooks';
import { FRAME_MS, type MediaClockStats } from './protocol.js';

export interface MediaClockParticipant {
  tick(nowMs: number): void;
}

/** Runs once per tick after every participant ticked (e.g. a batched VAD flush). */
export type MediaClockHook = (nowMs: number) => void;

export interface MediaClockOptions {
  periodMs?: number;
  /** A tick running this much after its deadline counts as late. */
  lateThresholdMs?: number;
}

export class MediaClock {
  readonly periodMs: number;
  private readonly lateThresholdMs: number;
  private readonly participants = new Set<MediaClockParticipant>();
  private readonly hooks = new Set<MediaClockHook>();
  /** Participants snapshot for the running tick (reused; add/remove during a tick is safe). */
  private snapshot: MediaClockParticipant[] = [];
  private snapshotStale = true;
  /** Called with a hook's error; the clock keeps running. */
  onHookError: (error: unknown) => void = () => undefined;
  private timer: NodeJS.Timeout | undefined;
  private nextDeadlineMs = 0;
  private readonly counters: MediaClockStats = {
    ticks: 0,
    lateTicks: 0,
    missedDeadlines: 0,
    maxLateMs: 0,
  };

  constructor(options: MediaClockOptions = {}) {
    this.periodMs = options.periodMs ?? FRAME_MS;
    this.lateThresholdMs = options.lateThresholdMs ?? 5;
  }

  get size(): number {
    return this.participants.size;
  }

  stats(): MediaClockStats {
    return { ...this.counters };
  }

  /** Registers a hook run after the participants on every tick (once, however often added). */
  addHook(hook: MediaClockHook): void {
    this.hooks.add(hook);
  }

  removeHook(hook: MediaClockHook): void {
    this.hooks.delete(hook);
  }

  add(participant: MediaClockParticipant): void {
    this.participants.add(participant);
    this.snapshotStale = true;
    if (this.timer === undefined) {
      this.nextDeadlineMs = performance.now() + this.periodMs;
      this.schedule();
    }
  }

  remove(participant: MediaClockParticipant): void {
    this.participants.delete(participant);
    this.snapshotStale = true;
    if (this.participants.size === 0) {
      this.stop();
    }
  }

  stop(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private schedule(): void {
    const delayMs = Math.max(0, this.nextDeadlineMs - performance.now());
    this.timer = setTimeout(() => this.run(), delayMs);
  }

  private run(): void {
    const nowMs = performance.now();
    const lateMs = nowMs - this.nextDeadlineMs;
    if (lateMs > this.lateThresholdMs) {
      this.counters.lateTicks += 1;
    }
    if (lateMs > this.counters.maxLateMs) {
      this.counters.maxLateMs = lateMs;
    }
    if (lateMs >= this.periodMs) {
      // Fell more than a frame behind: skip the missed deadlines instead of bursting.
      const missed = Math.floor(lateMs / this.periodMs);
      this.counters.missedDeadlines += missed;
      this.nextDeadlineMs += missed * this.periodMs;
    }
    this.counters.ticks += 1;
    if (this.snapshotStale) {
      this.snapshot = [...this.participants];
      this.snapshotStale = false;
    }
    const participants = this.snapshot;
    for (let i = 0; i < participants.length; i++) {
      const participant = participants[i]!;
      // One that left during this tick (an earlier participant ended it) is skipped.
      if (this.snapshotStale && !this.participants.has(participant)) {
        continue;
      }
      participant.tick(nowMs);
    }
    for (const hook of this.hooks) {
      try {
        hook(nowMs);
      } catch (error) {
        this.onHookError(error);
      }
    }
    this.nextDeadlineMs += this.periodMs;
    if (this.participants.size > 0) {
      this.schedule();
    } else {
      this.timer = undefined;
    }
  }
}
