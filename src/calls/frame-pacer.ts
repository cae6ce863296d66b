/** The 20 ms media clock of every SIP stream on the main thread. */
const FRAME_MS = 20;
/** At most this many frames of one stream are caught up in one tick after the loop stalled. */
const MAX_CATCH_UP_FRAMES = 5;

export interface FramePacerOptions {
  /** Monotonic milliseconds. Default performance.now. */
  readonly now?: () => number;
  /** Default true: a timer runs while streams are paced. Off, tests call tick() themselves. */
  readonly timer?: boolean;
}

/** One paced stream; stop() takes it off the clock (idempotent). */
export interface PacedStream {
  stop(): void;
}

class Stream implements PacedStream {
  /** When its next frame is due, in the pacer's milliseconds. */
  dueMs: number;
  active = true;

  constructor(
    readonly onFrame: () => void,
    dueMs: number,
    private readonly pacer: FramePacer,
  ) {
    this.dueMs = dueMs;
  }

  stop(): void {
    if (this.active) {
      this.active = false;
      this.pacer.remove(this);
    }
  }
}

/**
 * One timer for all streams: each stream's frames run every 20 ms from its own start, so calls
 * keep their phases while the process wakes once per 10 ms instead of once per call. A stream
 * that fell behind (the event loop stalled) catches up at most 5 frames per tick and then skips
 * ahead rather than burst. The timer runs only while a stream is paced.
 *
 * Not the worker's MediaClock (src/workers/media-clock.ts), which ticks every participant in one
 * phase and lets a missed deadline go: RTP out must send every frame (catch-up), and streams on
 * their own phases spread the process's packets over the period instead of one burst.
 */
export class FramePacer {
  private readonly now: () => number;
  private readonly streams: Stream[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: FramePacerOptions = {}) {
    this.now = options.now ?? (() => performance.now());
  }

  get size(): number {
    return this.streams.length;
  }

  /** Calls `onFrame` every 20 ms, the first time 20 ms from now. */
  add(onFrame: () => void): PacedStream {
    const stream = new Stream(onFrame, this.now() + FRAME_MS, this);
    this.streams.push(stream);
    if (this.timer === undefined && this.options.timer !== false) {
      this.timer = setInterval(() => this.tick(), FRAME_MS / 2);
    }
    return stream;
  }

  /** Runs the frames that are due; public so tests can drive it. */
  tick(): void {
    const nowMs = this.now();
    // Backwards: a stream's onFrame may stop streams (its own included), which only moves
    // those already run this tick.
    const streams = this.streams;
    for (let i = streams.length - 1; i >= 0; i--) {
      const stream = streams[i];
      if (stream === undefined) {
        continue;
      }
      let frames = 0;
      while (stream.active && stream.dueMs <= nowMs && frames < MAX_CATCH_UP_FRAMES) {
        stream.dueMs += FRAME_MS;
        frames++;
        stream.onFrame();
      }
      if (stream.dueMs <= nowMs) {
        stream.dueMs = nowMs + FRAME_MS;
      }
    }
  }

  /** Called by a stream's stop(). */
  remove(stream: Stream): void {
    const index = this.streams.indexOf(stream);
    if (index >= 0) {
      this.streams.splice(index, 1);
    }
    if (this.streams.length === 0 && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

/** The pacer SIP media uses unless it is given another one. */
export const sharedFramePacer = new FramePacer();
