import { readFileSync } from 'node:fs';
import { readWav } from '../../../src/media/codecs/wav.js';
import { Resampler } from '../../../src/media/resample/resampler.js';
import { CallPipeline, type CallPipelineOptions } from '../../../src/pipeline/call-pipeline.js';
import type { PipelineEvent } from '../../../src/pipeline/events.js';
import {
  ScriptedModel,
  ScriptedTranscriber,
  ToneVoice,
  type ToneVoiceOptions,
  type ScriptedModelOptions,
  type ScriptedUtterance,
} from './fake-providers.js';
import { settle, VirtualClock } from './virtual-clock.js';

const FIXTURE = new URL('../../fixtures/denoise/clean-speech-16k.wav', import.meta.url);
const FRAME_MS = 20;
const RATE_HZ = 16000;

let speechCache: Int16Array | null = null;

/** `ms` of real speech (espeak, 16 kHz) from the fixture, skipping its leading silence. */
export function speech(ms: number, fromMs = 300): Int16Array {
  speechCache ??= readWav(readFileSync(FIXTURE)).samples;
  const start = (fromMs * RATE_HZ) / 1000;
  return speechCache.slice(start, start + (ms * RATE_HZ) / 1000);
}

export interface DriverOptions {
  /** The call's rate; speech given to say() at 16 kHz is resampled to it. Default 16000. */
  readonly sampleRateHz?: 8000 | 16000;
  readonly script?: readonly ScriptedUtterance[];
  readonly model?: ScriptedModelOptions;
  readonly voice?: ToneVoiceOptions;
  /** Keep a copy of every output frame in `output`. */
  readonly recordOutput?: boolean;
  readonly pipeline?: Partial<
    Omit<CallPipelineOptions, 'model' | 'transcriber' | 'voice' | 'onEvent' | 'sampleRateHz'>
  >;
}

export interface FrameOut {
  readonly atMs: number;
  readonly samples: number;
}

/**
 * Runs a CallPipeline at 16 kHz on a virtual clock: every 20 ms it advances the clock, pushes
 * the next caller frame (queued speech, else silence), ticks, and lets pending promises run.
 */
export class PipelineDriver {
  readonly clock = new VirtualClock();
  readonly events: PipelineEvent[] = [];
  readonly frames: FrameOut[] = [];
  /** Output frames (recordOutput only). */
  readonly output: Int16Array[] = [];
  readonly #recordOutput: boolean;
  readonly transcriber: ScriptedTranscriber;
  readonly model: ScriptedModel;
  readonly voice: ToneVoice;
  readonly pipeline: CallPipeline;
  readonly sampleRateHz: 8000 | 16000;
  readonly #frameSamples: number;
  #callerQueue: Int16Array[] = [];
  #nowMs = 0;
  readonly #out: Int16Array;

  constructor(options: DriverOptions = {}) {
    this.sampleRateHz = options.sampleRateHz ?? RATE_HZ;
    this.#recordOutput = options.recordOutput ?? false;
    this.#frameSamples = (this.sampleRateHz * FRAME_MS) / 1000;
    this.#out = new Int16Array(this.#frameSamples);
    this.transcriber = new ScriptedTranscriber(options.script ?? []);
    this.model = new ScriptedModel(this.clock, options.model ?? { replies: [] });
    this.voice = new ToneVoice(this.clock, options.voice);
    this.pipeline = new CallPipeline({
      sampleRateHz: this.sampleRateHz,
      model: this.model,
      modelConfig: { model: 'gpt-test', systemPrompt: 'You are helpful.', apiKey: null },
      transcriber: this.transcriber,
      transcriberConfig: { config: { provider: 'fake-stt' }, apiKey: null },
      voice: this.voice,
      voiceConfig: { config: { provider: 'cartesia' }, apiKey: null },
      firstMessageMode: 'assistant-waits-for-user',
      onEvent: (event) => this.events.push(event),
      ...options.pipeline,
    });
  }

  get nowMs(): number {
    return this.#nowMs;
  }

  async start(): Promise<void> {
    this.pipeline.start(this.#nowMs);
    await settle();
  }

  /** Queues caller audio, sent frame by frame from the next step on. */
  say(speech16k: Int16Array): void {
    let samples = speech16k;
    if (this.sampleRateHz !== RATE_HZ) {
      const resampler = new Resampler({ inputRateHz: RATE_HZ, outputRateHz: this.sampleRateHz });
      samples = new Int16Array(resampler.maxOutputLength(speech16k.length));
      resampler.process(speech16k, samples);
    }
    const n = this.#frameSamples;
    for (let at = 0; at + n <= samples.length; at += n) {
      this.#callerQueue.push(samples.subarray(at, at + n));
    }
  }

  /** Runs `ms` of call time; stops early when `until` holds after a step. */
  async run(ms: number, until?: () => boolean): Promise<void> {
    const end = this.#nowMs + ms;
    while (this.#nowMs < end && !this.pipeline.ended) {
      await this.step();
      if (until?.() === true) {
        return;
      }
    }
  }

  async step(): Promise<void> {
    const now = this.#nowMs;
    this.clock.advanceTo(now);
    await settle();
    this.pipeline.pushCallerFrame(
      this.#callerQueue.shift() ?? new Int16Array(this.#frameSamples),
      now,
    );
    await settle();
    const samples = this.pipeline.tick(now, this.#out);
    this.frames.push({ atMs: now, samples });
    if (this.#recordOutput) {
      this.output.push(this.#out.slice());
    }
    await settle();
    this.#nowMs = now + FRAME_MS;
  }

  eventsOf<T extends PipelineEvent['type']>(type: T): Extract<PipelineEvent, { type: T }>[] {
    return this.events.filter(
      (event): event is Extract<PipelineEvent, { type: T }> => event.type === type,
    );
  }

  /** Runs until the assistant's speech has `status` (after `fromMs`), at most `ms`. */
  async runUntilAssistant(
    status: 'started' | 'stopped',
    ms = 10_000,
    fromMs = this.#nowMs,
  ): Promise<number> {
    const found = (): number | undefined =>
      this.eventsOf('speech-update').find(
        (e) => e.role === 'assistant' && e.status === status && e.atMs >= fromMs,
      )?.atMs;
    await this.run(ms, () => found() !== undefined);
    const at = found();
    if (at === undefined) {
      throw new Error(`assistant speech never ${status}`);
    }
    return at;
  }

  /** Time of the first frame with assistant audio at or after `fromMs`, or null. */
  firstAudioAt(fromMs = 0): number | null {
    return this.frames.find((frame) => frame.atMs >= fromMs && frame.samples > 0)?.atMs ?? null;
  }
}
