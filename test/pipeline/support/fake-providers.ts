import type {
  ModelEvent,
  ModelProvider,
  ModelRequest,
  ModelToolCall,
} from '../../../src/providers/llm/model-provider.js';
import type {
  Transcriber,
  TranscriberOpenOptions,
  TranscriberStream,
} from '../../../src/providers/stt/transcriber.js';
import type { SynthesisRequest, Voice } from '../../../src/providers/tts/voice.js';
import { levelDbfs } from '../../../src/pipeline/vad/energy-vad.js';
import type { VirtualClock } from './virtual-clock.js';

export interface ScriptedUtterance {
  /** The final transcript. */
  readonly text: string;
  /** A partial (the first word) after this much speech audio. Default 300 ms; null: none. */
  readonly partialAfterMs?: number | null;
}

/**
 * Transcribes by script: while it receives loud audio it counts speech; after `partialAfterMs`
 * of it, a partial (the utterance's first word); after 100 ms of quiet following speech, the
 * final. Each run of speech consumes the next utterance. Events arrive on a microtask.
 */
export class ScriptedTranscriber implements Transcriber {
  readonly name = 'fake-stt';
  readonly capabilities = { interimResults: true, endOfTurn: false };
  readonly pushedSamples: number[] = [];
  /** Copies of the audio received, when `recordAudio` is set. */
  readonly pushedAudio: Int16Array[] = [];
  recordAudio = false;
  finalizeCalls = 0;
  openedRateHz = 0;
  closed = false;
  failOpen: Error | null = null;
  #script: ScriptedUtterance[];

  constructor(script: readonly ScriptedUtterance[]) {
    this.#script = [...script];
  }

  async open(options: TranscriberOpenOptions, _signal: AbortSignal): Promise<TranscriberStream> {
    await Promise.resolve();
    if (this.failOpen !== null) {
      throw this.failOpen;
    }
    this.openedRateHz = options.sampleRateHz;
    const emit = (text: string, isFinal: boolean, atMs: number): void => {
      queueMicrotask(() =>
        options.onEvent({
          type: 'transcript',
          text,
          isFinal,
          speechFinal: isFinal,
          confidence: 0.9,
          startMs: 0,
          endMs: atMs,
        }),
      );
    };
    let receivedMs = 0;
    let speechMs = 0;
    let quietMs = 0;
    let partialSent = false;
    return {
      pushAudio: (samples) => {
        const ms = (samples.length * 1000) / options.sampleRateHz;
        receivedMs += ms;
        this.pushedSamples.push(samples.length);
        if (this.recordAudio) {
          this.pushedAudio.push(samples.slice());
        }
        const utterance = this.#script[0];
        if (levelDbfs(samples) > -40) {
          speechMs += ms;
          quietMs = 0;
          const after = utterance?.partialAfterMs === undefined ? 300 : utterance.partialAfterMs;
          if (utterance !== undefined && !partialSent && after !== null && speechMs >= after) {
            partialSent = true;
            emit(utterance.text.split(' ')[0] ?? '', false, receivedMs);
          }
          return;
        }
        quietMs += ms;
        if (speechMs > 0 && quietMs >= 100) {
          speechMs = 0;
          partialSent = false;
          this.#script.shift();
          if (utterance !== undefined) {
            emit(utterance.text, true, receivedMs);
          }
        }
      },
      finalize: () => {
        this.finalizeCalls += 1;
      },
      close: () => {
        this.closed = true;
        return Promise.resolve();
      },
    };
  }
}

/** A reply that ends asking for tools (after saying `text`, if any). */
export interface ScriptedToolReply {
  readonly text?: string;
  readonly toolCalls: readonly ModelToolCall[];
}

export interface ScriptedModelOptions {
  /** One reply per request, in order; text is streamed word by word. */
  readonly replies: readonly (string | ScriptedToolReply)[];
  /** Virtual ms before the first delta and between deltas. Default 100 and 20. */
  readonly firstTokenDelayMs?: number;
  readonly tokenDelayMs?: number;
  /** Thrown (after the first-token delay) instead of replying. */
  readonly failWith?: Error;
  /** Reported as a `usage` event before `done` in every reply. */
  readonly usage?: { readonly promptTokens: number; readonly completionTokens: number };
}

export class ScriptedModel implements ModelProvider {
  readonly name = 'openai';
  readonly requests: ModelRequest[] = [];
  /** Virtual time of each request. */
  readonly requestTimes: number[] = [];
  readonly aborted: number[] = [];
  readonly #clock: VirtualClock;
  readonly #options: ScriptedModelOptions;

  constructor(clock: VirtualClock, options: ScriptedModelOptions) {
    this.#clock = clock;
    this.#options = options;
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    const index = this.requests.length;
    this.requests.push(structuredClone(request));
    this.requestTimes.push(this.#clock.now);
    const scripted = this.#options.replies[index] ?? 'Okay.';
    const reply = typeof scripted === 'string' ? { text: scripted, toolCalls: [] } : scripted;
    await this.#clock.sleep(this.#options.firstTokenDelayMs ?? 100);
    if (this.#options.failWith !== undefined) {
      throw this.#options.failWith;
    }
    const words = reply.text === undefined || reply.text === '' ? [] : reply.text.split(' ');
    try {
      for (let i = 0; i < words.length; i += 1) {
        if (signal.aborted) {
          throw signal.reason;
        }
        yield { type: 'text', delta: i === 0 ? words[i]! : ` ${words[i]!}` };
        await this.#clock.sleep(this.#options.tokenDelayMs ?? 20);
      }
      for (const call of reply.toolCalls) {
        yield { type: 'tool-call', call: { ...call } };
      }
      if (this.#options.usage !== undefined) {
        yield { type: 'usage', ...this.#options.usage };
      }
      yield { type: 'done', finishReason: reply.toolCalls.length > 0 ? 'tool_calls' : 'stop' };
    } finally {
      if (signal.aborted) {
        this.aborted.push(index);
      }
    }
  }
}

export interface ToneVoiceOptions {
  /** Audio per character of text. Default 40 ms. */
  readonly msPerChar?: number;
  /** Virtual delay before the first audio. Default 60 ms. */
  readonly firstByteDelayMs?: number;
  /** Virtual delay between 100 ms pieces of audio. Default 10 ms (10 times real time). */
  readonly pieceDelayMs?: number;
}

/** A voice that answers each chunk with `msPerChar` ms of a 440 Hz tone per character. */
export class ToneVoice implements Voice {
  readonly name = 'cartesia';
  readonly capabilities = { streamingOutput: true, sampleRatesHz: [24000] };
  readonly requests: SynthesisRequest[] = [];
  aborted = 0;
  failWith: Error | null = null;
  readonly #clock: VirtualClock;
  readonly #msPerChar: number;
  readonly #firstByteDelayMs: number;
  readonly #pieceDelayMs: number;

  constructor(clock: VirtualClock, options: ToneVoiceOptions = {}) {
    this.#clock = clock;
    this.#msPerChar = options.msPerChar ?? 40;
    this.#firstByteDelayMs = options.firstByteDelayMs ?? 60;
    this.#pieceDelayMs = options.pieceDelayMs ?? 10;
  }

  async *synthesize(request: SynthesisRequest, signal: AbortSignal): AsyncIterable<Int16Array> {
    this.requests.push(request);
    await this.#clock.sleep(this.#firstByteDelayMs);
    if (this.failWith !== null) {
      throw this.failWith;
    }
    const rate = request.sampleRateHz;
    const total = Math.round((request.text.length * this.#msPerChar * rate) / 1000);
    const piece = rate / 10;
    try {
      for (let at = 0; at < total; at += piece) {
        if (signal.aborted) {
          throw signal.reason;
        }
        const samples = new Int16Array(Math.min(piece, total - at));
        for (let i = 0; i < samples.length; i += 1) {
          samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * (at + i)) / rate));
        }
        yield samples;
        await this.#clock.sleep(this.#pieceDelayMs);
      }
    } finally {
      if (signal.aborted) {
        this.aborted += 1;
      }
    }
  }
}
