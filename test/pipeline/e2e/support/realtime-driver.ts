import { performance } from 'node:perf_hooks';
import { CallPipeline, type CallPipelineOptions } from '../../../../src/pipeline/call-pipeline.js';
import type { PipelineEvent } from '../../../../src/pipeline/events.js';

export const FRAME_MS = 20;
export const RATE_HZ = 16_000;
const FRAME_SAMPLES = (RATE_HZ * FRAME_MS) / 1000;

export type DriverPipelineOptions = Omit<CallPipelineOptions, 'onEvent' | 'sampleRateHz' | 'clock'>;

/** One output frame: when it was ticked and whether it carried any non-zero sample. */
export interface OutputFrame {
  readonly atMs: number;
  readonly samples: number;
  readonly audible: boolean;
}

/** Something to do once `atMs` of an utterance has been sent (e.g. a vendor's transcript). */
export interface Cue {
  readonly atMs: number;
  readonly run: () => void;
}

interface QueuedFrame {
  readonly samples: Int16Array;
  readonly cues: (() => void)[];
}

/**
 * Drives a CallPipeline in real time, as a call worker does: a self-correcting 20 ms timer
 * pushes the next caller frame (queued WAV speech, else silence) and ticks, on the
 * `performance.now()` timeline since start. Provider work (real adapters talking to the local
 * fake vendors) runs between ticks on the event loop. Records every event and output frame.
 */
export class RealtimeDriver {
  readonly pipeline: CallPipeline;
  readonly events: PipelineEvent[] = [];
  readonly frames: OutputFrame[] = [];
  readonly #queue: QueuedFrame[] = [];
  /** Copies of the output frames' samples (recordAudio only). */
  readonly #audio: Int16Array[] = [];
  readonly #recordAudio: boolean;
  readonly #silence = new Int16Array(FRAME_SAMPLES);
  readonly #out = new Int16Array(FRAME_SAMPLES);
  #originMs = 0;
  #frameIndex = 0;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;
  /** Longest a tick came late, for the report of a failing timing assertion. */
  maxLatenessMs = 0;

  constructor(options: DriverPipelineOptions, recordAudio = false) {
    this.#recordAudio = recordAudio;
    this.pipeline = new CallPipeline({
      ...options,
      sampleRateHz: RATE_HZ,
      onEvent: (event) => this.events.push(event),
    });
  }

  /** Milliseconds since start on the call's media timeline. */
  get nowMs(): number {
    return performance.now() - this.#originMs;
  }

  start(): void {
    this.#originMs = performance.now();
    this.pipeline.start(0);
    this.#schedule();
  }

  /**
   * Queues 16 kHz speech, sent frame by frame after what is already queued; each cue runs once
   * the frame holding its offset has been pushed. Resolves when the last frame is sent.
   */
  play(samples: Int16Array, cues: readonly Cue[] = []): Promise<number> {
    const first = this.#queue.length;
    for (let at = 0; at < samples.length; at += FRAME_SAMPLES) {
      const frame = new Int16Array(FRAME_SAMPLES);
      frame.set(samples.subarray(at, Math.min(samples.length, at + FRAME_SAMPLES)));
      this.#queue.push({ samples: frame, cues: [] });
    }
    const frames = this.#queue.length - first;
    for (const cue of cues) {
      const index = Math.min(frames - 1, Math.max(0, Math.floor(cue.atMs / FRAME_MS)));
      this.#queue[first + index]!.cues.push(cue.run);
    }
    return new Promise((resolve) => {
      this.#queue[this.#queue.length - 1]!.cues.push(() => resolve(this.nowMs));
    });
  }

  /** Resolves once `condition` holds (checked every 5 ms); rejects after `timeoutMs`. */
  async waitFor(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!condition()) {
      if (performance.now() > deadline) {
        throw new Error(
          `timed out waiting for ${what} (ticks up to ${Math.round(this.maxLatenessMs)} ms late); ` +
            `events: ${this.describe()}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** Waits for the first event of `type` that `match` accepts (after index `from`) and returns it. */
  async next<T extends PipelineEvent['type']>(
    type: T,
    match: (event: Extract<PipelineEvent, { type: T }>) => boolean = () => true,
    timeoutMs = 10_000,
  ): Promise<Extract<PipelineEvent, { type: T }>> {
    let found: Extract<PipelineEvent, { type: T }> | undefined;
    await this.waitFor(
      type,
      () => {
        found = this.eventsOf(type).find(match);
        return found !== undefined;
      },
      timeoutMs,
    );
    return found!;
  }

  /** Waits `ms` of real time. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  eventsOf<T extends PipelineEvent['type']>(type: T): Extract<PipelineEvent, { type: T }>[] {
    return this.events.filter(
      (event): event is Extract<PipelineEvent, { type: T }> => event.type === type,
    );
  }

  speech(role: 'user' | 'assistant', status: 'started' | 'stopped'): number[] {
    return this.eventsOf('speech-update')
      .filter((e) => e.role === role && e.status === status)
      .map((e) => e.atMs);
  }

  /** Every sample that went out, in order (recordAudio only). */
  audio(): Int16Array {
    const all = new Int16Array(this.#audio.reduce((n, frame) => n + frame.length, 0));
    let at = 0;
    for (const frame of this.#audio) {
      all.set(frame, at);
      at += frame.length;
    }
    return all;
  }

  /** Samples of audio that went out (what tick() returned, summed). */
  get playedSamples(): number {
    return this.frames.reduce((n, frame) => n + frame.samples, 0);
  }

  /** Output frames ticked in [fromMs, toMs). */
  framesBetween(fromMs: number, toMs = Infinity): OutputFrame[] {
    return this.frames.filter((frame) => frame.atMs >= fromMs && frame.atMs < toMs);
  }

  /** Stops the clock and ends the call if it is still running; resolves after a short drain. */
  async stop(): Promise<void> {
    if (!this.pipeline.ended) {
      this.pipeline.end('customer-ended-call');
    }
    this.#stopped = true;
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
    }
    await this.sleep(30);
  }

  describe(): string {
    return this.events
      .filter((e) => e.type !== 'model-output' && e.type !== 'conversation-update')
      .map((e) => `${Math.round(e.atMs)}:${e.type}${detail(e)}`)
      .join(' ');
  }

  #schedule(): void {
    if (this.#stopped) {
      return;
    }
    // Self-correcting: every frame has its own deadline on the origin's timeline.
    const dueMs = this.#frameIndex * FRAME_MS;
    this.#timer = setTimeout(() => this.#frame(), Math.max(0, dueMs - this.nowMs));
  }

  #frame(): void {
    // A late timer runs the frames it missed, as a media clock catching up does.
    while (!this.#stopped && this.#frameIndex * FRAME_MS <= this.nowMs) {
      const nowMs = this.nowMs;
      this.maxLatenessMs = Math.max(this.maxLatenessMs, nowMs - this.#frameIndex * FRAME_MS);
      this.#frameIndex++;
      if (this.pipeline.ended) {
        this.#stopped = true;
        return;
      }
      const queued = this.#queue.shift();
      this.pipeline.pushCallerFrame(queued?.samples ?? this.#silence, nowMs);
      const samples = this.pipeline.tick(nowMs, this.#out);
      let audible = false;
      for (let i = 0; i < samples; i++) {
        if (this.#out[i] !== 0) {
          audible = true;
          break;
        }
      }
      this.frames.push({ atMs: nowMs, samples, audible });
      if (this.#recordAudio) {
        this.#audio.push(this.#out.slice(0, samples));
      }
      for (const cue of queued?.cues ?? []) {
        cue();
      }
    }
    this.#schedule();
  }
}

function detail(event: PipelineEvent): string {
  switch (event.type) {
    case 'speech-update':
      return `(${event.role} ${event.status})`;
    case 'transcript':
      return `(${event.role} ${event.transcriptType} "${event.transcript}")`;
    case 'call-ended':
      return `(${event.endedReason})`;
    case 'voice-input':
      return `("${event.input.slice(0, 20)}")`;
    default:
      return '';
  }
}
