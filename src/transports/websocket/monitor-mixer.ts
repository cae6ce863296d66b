import { Int16RingBuffer } from '../../media/framing/ring-buffer.js';
import { Resampler } from '../../media/resample/resampler.js';
import type { ListenSink } from './types.js';

/** The listen stream: PCM16 mono at 16 kHz, announced first as `{sampleRate, channels}`. */
export const MONITOR_SAMPLE_RATE_HZ = 16_000;
const FRAME_MS = 20;
const FRAME_SAMPLES = (MONITOR_SAMPLE_RATE_HZ * FRAME_MS) / 1000;
/** Per side: at most one second waits to be mixed; older audio is dropped. */
const BUFFER_SAMPLES = MONITOR_SAMPLE_RATE_HZ;
/** A side starts (again) being mixed once this much has arrived, to ride out bursty clients. */
const PRIME_SAMPLES = FRAME_SAMPLES * 3;
const BLOCK_SAMPLES = 1024;
/** Never catch up more than this many frames at once after a stalled timer. */
const MAX_CATCH_UP_FRAMES = 5;
export const MAX_LISTENERS_PER_CALL = 4;

/** One side of the call (caller or assistant): resampled to 16 kHz and buffered. */
class MixerSide {
  private readonly resampler: Resampler;
  private readonly scratch: Int16Array;
  private readonly buffer = new Int16RingBuffer(BUFFER_SAMPLES);
  private primed = false;

  constructor(inputRateHz: number) {
    this.resampler = new Resampler({ inputRateHz, outputRateHz: MONITOR_SAMPLE_RATE_HZ });
    this.scratch = new Int16Array(this.resampler.maxOutputLength(BLOCK_SAMPLES) + 1);
  }

  push(samples: Int16Array): void {
    for (let offset = 0; offset < samples.length; offset += BLOCK_SAMPLES) {
      const length = Math.min(BLOCK_SAMPLES, samples.length - offset);
      const written = this.resampler.process(samples, this.scratch, offset, length);
      const overflow = written - this.buffer.free;
      if (overflow > 0) {
        this.buffer.discard(overflow);
      }
      this.buffer.write(this.scratch, 0, written);
    }
  }

  /** Adds one frame of this side into `mix` (which holds the other side or zeros). */
  mixInto(mix: Int16Array, frame: Int16Array): void {
    if (!this.primed) {
      if (this.buffer.length < PRIME_SAMPLES) {
        return;
      }
      this.primed = true;
    }
    const read = this.buffer.read(frame, 0, FRAME_SAMPLES);
    if (read < FRAME_SAMPLES) {
      this.primed = false;
    }
    for (let i = 0; i < read; i++) {
      const sum = mix[i]! + frame[i]!;
      mix[i] = sum > 32767 ? 32767 : sum < -32768 ? -32768 : sum;
    }
  }
}

/**
 * Mixes a call's two sides for its monitor listeners and sends 20 ms frames on a drift-corrected
 * clock of its own. It costs nothing while nobody listens.
 */
export class MonitorMixer {
  private readonly listeners = new Set<ListenSink>();
  private readonly user: MixerSide;
  private readonly assistant: MixerSide;
  private readonly mix = new Int16Array(FRAME_SAMPLES);
  private readonly frame = new Int16Array(FRAME_SAMPLES);
  private timer: NodeJS.Timeout | undefined;
  private startedAtMs = 0;
  private framesSent = 0;

  constructor(inputRateHz: number) {
    this.user = new MixerSide(inputRateHz);
    this.assistant = new MixerSide(inputRateHz);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /** Returns false when the call already has its maximum of listeners. */
  add(sink: ListenSink): boolean {
    if (this.listeners.size >= MAX_LISTENERS_PER_CALL) {
      return false;
    }
    this.listeners.add(sink);
    sink.sendJson({ sampleRate: MONITOR_SAMPLE_RATE_HZ, channels: 1 });
    if (this.timer === undefined) {
      this.startedAtMs = performance.now();
      this.framesSent = 0;
      this.timer = setInterval(() => this.tick(), FRAME_MS);
      this.timer.unref();
    }
    return true;
  }

  remove(sink: ListenSink): void {
    this.listeners.delete(sink);
    if (this.listeners.size === 0) {
      this.stop();
    }
  }

  pushUser(samples: Int16Array): void {
    if (this.timer !== undefined) {
      this.user.push(samples);
    }
  }

  pushAssistant(samples: Int16Array): void {
    if (this.timer !== undefined) {
      this.assistant.push(samples);
    }
  }

  /** Closes every listener (the call ended). */
  close(code: number, reason: string): void {
    for (const sink of [...this.listeners]) {
      sink.close(code, reason);
    }
    this.listeners.clear();
    this.stop();
  }

  private stop(): void {
    if (this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private tick(): void {
    const dueFrames = Math.floor((performance.now() - this.startedAtMs) / FRAME_MS);
    let behind = dueFrames - this.framesSent;
    if (behind > MAX_CATCH_UP_FRAMES) {
      this.framesSent = dueFrames - MAX_CATCH_UP_FRAMES;
      behind = MAX_CATCH_UP_FRAMES;
    }
    for (; behind > 0; behind--) {
      this.mix.fill(0);
      this.user.mixInto(this.mix, this.frame);
      this.assistant.mixInto(this.mix, this.frame);
      for (const sink of this.listeners) {
        sink.sendAudio(this.mix);
      }
      this.framesSent += 1;
    }
  }
}
