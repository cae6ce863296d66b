import { Resampler, type ResamplerRateHz } from '../../media/resample/resampler.js';
import type {
  Transcriber,
  TranscriberEvent,
  TranscriberStream,
} from '../../providers/stt/transcriber.js';
import { EnergyVad } from '../vad/energy-vad.js';
import { VadStateMachine, type VadEvent } from '../vad/vad-state-machine.js';
import type { PipelineVendorConfig } from './options.js';

/** The rate the transcriber receives. */
export const TRANSCRIBER_RATE_HZ = 16000;
/** Audio kept while the transcriber connects (frames beyond are dropped, oldest first). */
const MAX_QUEUED_FRAMES = 250;

export interface CallerInputOptions {
  readonly sampleRateHz: ResamplerRateHz;
  readonly transcriber: Transcriber;
  readonly transcriberConfig: PipelineVendorConfig;
  /** Every frame's raw VAD decision, for the barge-in detector. */
  onVadFrame(isSpeech: boolean, frameStartMs: number, frameDurationMs: number): void;
  /** Debounced speech start/stop (the event object is the state machine's: copy to keep). */
  onVadEvent(event: VadEvent): void;
  onTranscriberEvent(event: TranscriberEvent): void;
}

/**
 * The caller's side: each 20 ms frame goes through the energy VAD and its debouncing state
 * machine, then (resampled to 16 kHz) to the transcriber stream. Frames arriving while the
 * stream connects are queued and sent once it is open.
 */
export class CallerInput {
  readonly #options: CallerInputOptions;
  readonly #vad: EnergyVad;
  readonly #states = new VadStateMachine();
  readonly #resampler: Resampler;
  #stream: TranscriberStream | null = null;
  #queue: Int16Array[] = [];
  #closed = false;

  constructor(options: CallerInputOptions) {
    this.#options = options;
    this.#vad = new EnergyVad({ sampleRateHz: options.sampleRateHz });
    this.#resampler = new Resampler({
      inputRateHz: options.sampleRateHz,
      outputRateHz: TRANSCRIBER_RATE_HZ,
    });
  }

  get inSpeech(): boolean {
    return this.#states.inSpeech;
  }

  /** Connects the transcriber; rejects with its error. */
  async open(signal: AbortSignal): Promise<void> {
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
  }

  push(samples: Int16Array, nowMs: number): void {
    if (this.#closed) {
      return;
    }
    const durationMs = (samples.length * 1000) / this.#options.sampleRateHz;
    const isSpeech = this.#vad.process(samples);
    this.#options.onVadFrame(isSpeech, nowMs, durationMs);
    const event = this.#states.update(isSpeech ? 1 : 0, nowMs, nowMs + durationMs);
    if (event !== null) {
      this.#options.onVadEvent(event);
    }
    const out = new Int16Array(this.#resampler.maxOutputLength(samples.length));
    const length = this.#resampler.process(samples, out);
    const frame = length === out.length ? out : out.subarray(0, length);
    if (this.#stream !== null) {
      this.#stream.pushAudio(frame);
    } else {
      this.#queue.push(frame);
      if (this.#queue.length > MAX_QUEUED_FRAMES) {
        this.#queue.shift();
      }
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#queue = [];
    const stream = this.#stream;
    this.#stream = null;
    if (stream !== null) {
      await stream.close();
    }
  }
}
