import { Resampler, type ResamplerRateHz } from '../../media/resample/resampler.js';
import type {
  Transcriber,
  TranscriberEvent,
  TranscriberStream,
} from '../../providers/stt/transcriber.js';
import type { CallerVad, CallerVadFactory } from '../vad/caller-vad.js';
import { createEnergyCallerVad } from '../vad/energy-caller-vad.js';
import { VadStateMachine, type VadEvent } from '../vad/vad-state-machine.js';
import { CallerDenoiser, type BackgroundSpeechDenoisingPlan } from './caller-denoiser.js';
import type { PipelineVendorConfig } from './options.js';

/** The rate the transcriber receives. */
export const TRANSCRIBER_RATE_HZ = 16000;
/** Audio kept while the transcriber connects (frames beyond are dropped, oldest first). */
const MAX_QUEUED_FRAMES = 250;

export interface CallerInputOptions {
  readonly sampleRateHz: ResamplerRateHz;
  readonly transcriber: Transcriber;
  readonly transcriberConfig: PipelineVendorConfig;
  /** Default: createEnergyCallerVad. */
  readonly vad?: CallerVadFactory | undefined;
  readonly denoisingPlan?: BackgroundSpeechDenoisingPlan | undefined;
  /** The pipeline's latest nowMs: when a late VAD decision is made. */
  now(): number;
  /** Every VAD decision, for the barge-in detector (may come later than its audio). */
  onVadFrame(isSpeech: boolean, frameStartMs: number, frameDurationMs: number): void;
  /** Debounced speech start/stop (the event object is the state machine's: copy to keep). */
  onVadEvent(event: VadEvent): void;
  onTranscriberEvent(event: TranscriberEvent): void;
}

/**
 * The caller's side: each frame is denoised (backgroundSpeechDenoisingPlan), resampled to 16 kHz
 * for the transcriber stream, and given to the caller VAD. The VAD's decisions, whenever they
 * arrive (at once for the energy VAD, a few frames later for batched Silero), drive the
 * debouncing state machine with their own spans; the event's `decidedAtMs` is the later of the
 * span's end and the pipeline's clock. When speech stops, the transcriber is asked to finalise.
 * Frames arriving while the stream connects are queued and sent once it is open. While muted,
 * caller audio reaches neither VAD nor transcriber.
 */
export class CallerInput {
  readonly #options: CallerInputOptions;
  readonly #vad: CallerVad;
  readonly #denoiser: CallerDenoiser;
  readonly #states = new VadStateMachine();
  readonly #resampler: Resampler;
  readonly #resampled: Int16Array;
  /** Views of #resampled by length (a handful of lengths occur): no allocation per frame. */
  readonly #views: (Int16Array | undefined)[] = [];
  #stream: TranscriberStream | null = null;
  #queue: Int16Array[] = [];
  #muted = false;
  #closed = false;

  constructor(options: CallerInputOptions) {
    this.#options = options;
    this.#denoiser = new CallerDenoiser(options.denoisingPlan, options.sampleRateHz);
    this.#resampler = new Resampler({
      inputRateHz: options.sampleRateHz,
      outputRateHz: TRANSCRIBER_RATE_HZ,
    });
    // Room for 40 ms at the call rate; longer frames get a buffer of their own.
    this.#resampled = new Int16Array(this.#resampler.maxOutputLength(options.sampleRateHz / 25));
    const factory = options.vad ?? createEnergyCallerVad;
    this.#vad = factory(options.sampleRateHz, (probability, startMs, endMs) =>
      this.#onDecision(probability, startMs, endMs),
    );
  }

  get inSpeech(): boolean {
    return this.#states.inSpeech;
  }

  get denoiser(): CallerDenoiser {
    return this.#denoiser;
  }

  get muted(): boolean {
    return this.#muted;
  }

  /** Mutes the caller; speech in progress ends at once (speech-stop, transcriber finalised). */
  setMuted(muted: boolean): void {
    if (muted === this.#muted || this.#closed) {
      return;
    }
    this.#muted = muted;
    if (muted) {
      const event = this.#states.finish(this.#options.now());
      if (event !== null) {
        this.#options.onVadEvent(event);
        this.#stream?.finalize();
      }
    }
  }

  /** Connects the transcriber (rejects with its error) and loads the denoisers. */
  async open(signal: AbortSignal): Promise<void> {
    const denoiserReady = this.#denoiser.open();
    const { transcriber, transcriberConfig } = this.#options;
    const stream = await transcriber.open(
      {
        sampleRateHz: TRANSCRIBER_RATE_HZ,
        config: transcriberConfig.config,
        apiKey: transcriberConfig.apiKey,
        ...(transcriberConfig.baseUrl === undefined ? {} : { baseUrl: transcriberConfig.baseUrl }),
        onEvent: (event) => {
          if (!this.#closed) {
            this.#options.onTranscriberEvent(event);
          }
        },
      },
      signal,
    );
    if (this.#closed) {
      await stream.close();
      return;
    }
    this.#stream = stream;
    for (const frame of this.#queue) {
      stream.pushAudio(frame);
    }
    this.#queue = [];
    await denoiserReady;
  }

  /**
   * One caller frame starting at nowMs. With denoising on, frames must be 10 or 20 ms (a
   * RangeError otherwise).
   */
  push(samples: Int16Array, nowMs: number): void {
    if (this.#closed || this.#muted) {
      return;
    }
    const denoiser = this.#denoiser;
    const startMs = nowMs - denoiser.latencyMs;
    const clean = denoiser.process(samples);
    this.#toTranscriber(clean);
    this.#vad.push(clean, startMs);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#queue = [];
    this.#vad.close();
    this.#denoiser.close();
    const stream = this.#stream;
    this.#stream = null;
    if (stream !== null) {
      await stream.close();
    }
  }

  #toTranscriber(samples: Int16Array): void {
    const needed = this.#resampler.maxOutputLength(samples.length);
    const stream = this.#stream;
    // The stream may reuse the samples after pushAudio returns; queued frames need their own.
    const out =
      stream !== null && needed <= this.#resampled.length
        ? this.#resampled
        : new Int16Array(needed);
    const length = this.#resampler.process(samples, out);
    let frame: Int16Array;
    if (out === this.#resampled) {
      frame = this.#views[length] ?? (this.#views[length] = out.subarray(0, length));
    } else {
      frame = length === out.length ? out : out.subarray(0, length);
    }
    if (stream !== null) {
      stream.pushAudio(frame);
      return;
    }
    this.#queue.push(frame);
    if (this.#queue.length > MAX_QUEUED_FRAMES) {
      this.#queue.shift();
    }
  }

  #onDecision(probability: number, startMs: number, endMs: number): void {
    if (this.#closed || this.#muted) {
      return;
    }
    const states = this.#states;
    this.#options.onVadFrame(probability >= states.onThreshold, startMs, endMs - startMs);
    const event = states.update(probability, startMs, endMs);
    if (event === null) {
      return;
    }
    event.decidedAtMs = Math.max(event.decidedAtMs, this.#options.now());
    this.#options.onVadEvent(event);
    if (event.type === 'speech-stop') {
      this.#stream?.finalize();
    }
  }
}
