import {
  Resampler,
  RESAMPLER_RATES_HZ,
  type ResamplerRateHz,
} from '../../media/resample/resampler.js';
import type {
  ModelProvider,
  ModelRequest,
  ModelToolCall,
} from '../../providers/llm/model-provider.js';
import type { Voice } from '../../providers/tts/voice.js';
import type { PipelineEvent } from '../events.js';
import { spokenPrefix } from '../interruption/spoken-prefix.js';
import type { TurnMetrics } from '../metrics/turn-metrics.js';
import type { PlayoutBuffer } from '../playout/playout-buffer.js';
import type { ChunkPlan } from '../text/chunk-plan.js';
import { TextChunker } from '../text/text-chunker.js';
import { TextFormatter } from '../text/text-formatter.js';
import type { PipelineVendorConfig } from './options.js';

/** What a reply needs from its call. */
export interface ReplyHost {
  readonly callRateHz: ResamplerRateHz;
  readonly playout: PlayoutBuffer;
  readonly metrics: TurnMetrics;
  readonly chunkPlan: ChunkPlan;
  readonly model: ModelProvider;
  readonly voice: Voice;
  readonly voiceConfig: PipelineVendorConfig;
  now(): number;
  emit(event: PipelineEvent): void;
  /** Resolves after the next media tick (playout made room). */
  nextTick(): Promise<void>;
  /** Audio of this reply was just queued for playout. */
  audioQueued(): void;
  /**
   * The model's stream ended with tool calls after saying `roundText`: runs them, records the
   * round in the history, and gives the request that continues the reply (null: stop here).
   */
  toolRound(
    calls: readonly ModelToolCall[],
    roundText: string,
    reply: AssistantReply,
  ): Promise<ModelRequest | null>;
}

/** Tool rounds one reply may run; tool calls beyond are not run and the reply ends. */
export const MAX_TOOL_ROUNDS = 5;

export type ReplySource =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'model'; readonly request: ModelRequest };

export interface ReplyFailure {
  readonly kind: 'model' | 'voice';
  readonly error: unknown;
}

/** The voice's output rate: the call's if it has it, else the nearest higher, else its highest. */
export function pickVoiceRate(supported: readonly number[], callRateHz: number): ResamplerRateHz {
  const usable = supported
    .filter((rate): rate is ResamplerRateHz =>
      (RESAMPLER_RATES_HZ as readonly number[]).includes(rate),
    )
    .sort((a, b) => a - b);
  if (usable.length === 0) {
    throw new RangeError(`voice offers no usable sample rate (${supported.join(', ')})`);
  }
  return (
    usable.find((rate) => rate >= callRateHz) ?? (usable[usable.length - 1] as ResamplerRateHz)
  );
}

/**
 * One assistant message: text (the first message) or a model stream, cut into chunks by the
 * chunk plan, each chunk formatted, synthesised in order and queued, resampled to the call's
 * rate, in the playout buffer. `text` is what was queued so far (chunks joined by spaces); each
 * chunk's playout segment counts its characters in that text, so the playout buffer's
 * playedChars indexes it. abort() stops the model and the voice at once; nothing more is queued.
 *
 * When the model's stream ends with tool calls, what it said so far is flushed to the voice (it
 * plays while the tools run), host.toolRound runs them, and the model's next stream continues
 * the same message (at most MAX_TOOL_ROUNDS rounds). The text after the last round is the
 * "round text" that the history records as the assistant's message.
 */
export class AssistantReply {
  readonly turnId: number;
  readonly #host: ReplyHost;
  readonly #source: ReplySource;
  readonly #controller = new AbortController();
  readonly #chunker: TextChunker;
  readonly #formatter: TextFormatter;
  #voiceChain: Promise<void> = Promise.resolve();
  #failure: ReplyFailure | null = null;
  #text = '';
  #modelText = '';
  /** Where the current round starts in #text, and the model's text of the round. */
  #roundStart = 0;
  #roundModelText = '';
  #toolRounds = 0;

  constructor(host: ReplyHost, turnId: number, source: ReplySource) {
    this.#host = host;
    this.turnId = turnId;
    this.#source = source;
    this.#formatter = new TextFormatter(host.chunkPlan.formatPlan);
    this.#chunker = new TextChunker(host.chunkPlan, (chunk) => {
      this.#voiceChain = this.#voiceChain
        .then(() => this.#speak(chunk))
        .catch((error: unknown) => this.#fail('voice', error));
    });
  }

  /** The message as queued for playout so far. */
  get text(): string {
    return this.#text;
  }

  /** Everything the model said (or the given text), whether or not it was queued. */
  get fullText(): string {
    return this.#source.kind === 'text' ? this.#source.text : this.#modelText;
  }

  /** What was queued since the last tool round (all of `text` without tool rounds). */
  get roundText(): string {
    return this.#text.slice(this.#roundStart).trim();
  }

  /** What the model said since the last tool round (or the given text), queued or not. */
  get roundModelText(): string {
    return this.#source.kind === 'text' ? this.#source.text : this.#roundModelText.trim();
  }

  /** The part of the round text heard when `playedChars` of `text` have played. */
  heardRoundText(playedChars: number): string {
    return spokenPrefix(this.#text, playedChars).slice(this.#roundStart).trim();
  }

  get toolRounds(): number {
    return this.#toolRounds;
  }

  get aborted(): boolean {
    return this.#controller.signal.aborted;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  abort(): void {
    this.#controller.abort(new Error('reply aborted'));
    this.#chunker.reset();
  }

  /** Generates the whole message; resolves once its audio is queued, with the failure if any. */
  async run(): Promise<ReplyFailure | null> {
    if (this.#source.kind === 'text') {
      this.#chunker.push(this.#source.text);
    } else {
      await this.#streamModel(this.#source.request);
    }
    if (!this.aborted) {
      this.#chunker.flush();
    }
    await this.#voiceChain;
    return this.#failure;
  }

  async #streamModel(first: ModelRequest): Promise<void> {
    const host = this.#host;
    const signal = this.#controller.signal;
    let request: ModelRequest | null = first;
    try {
      while (request !== null) {
        const calls = await this.#streamRound(request, signal);
        if (signal.aborted || calls.length === 0 || this.#toolRounds >= MAX_TOOL_ROUNDS) {
          return;
        }
        this.#toolRounds += 1;
        // What was said before the tools plays while they run; the next round starts after it.
        this.#chunker.flush();
        const roundText = this.#roundModelText.trim();
        this.#voiceChain = this.#voiceChain.then(() => {
          this.#roundStart = this.#text.length;
        });
        this.#roundModelText = '';
        request = await host.toolRound(calls, roundText, this);
        if (signal.aborted) {
          return;
        }
      }
    } catch (error) {
      this.#fail('model', error);
    }
  }

  /** One model stream; returns the tool calls it ended with. */
  async #streamRound(request: ModelRequest, signal: AbortSignal): Promise<ModelToolCall[]> {
    const host = this.#host;
    const calls: ModelToolCall[] = [];
    host.metrics.markModelRequest(host.now());
    for await (const event of host.model.stream(request, signal)) {
      if (signal.aborted) {
        break;
      }
      if (event.type === 'text' && event.delta !== '') {
        host.metrics.markModelFirstToken(host.now());
        this.#modelText += event.delta;
        this.#roundModelText += event.delta;
        host.emit({
          type: 'model-output',
          atMs: host.now(),
          output: event.delta,
          turnId: this.turnId,
        });
        this.#chunker.push(event.delta);
      } else if (event.type === 'tool-call') {
        calls.push(event.call);
      } else if (event.type === 'usage') {
        host.emit({
          type: 'model-usage',
          atMs: host.now(),
          promptTokens: event.promptTokens,
          completionTokens: event.completionTokens,
          turnId: this.turnId,
        });
      } else if (event.type === 'done') {
        break;
      }
    }
    return calls;
  }

  #fail(kind: ReplyFailure['kind'], error: unknown): void {
    if (this.#failure === null && !this.aborted) {
      this.#failure = { kind, error };
    }
    this.abort();
  }

  async #speak(chunk: string): Promise<void> {
    const host = this.#host;
    const signal = this.#controller.signal;
    if (signal.aborted) {
      return;
    }
    const input = this.#formatter.format(chunk);
    if (input === '') {
      return;
    }
    const voiceRate = pickVoiceRate(host.voice.capabilities.sampleRatesHz, host.callRateHz);
    const resampler = new Resampler({ inputRateHz: voiceRate, outputRateHz: host.callRateHz });
    host.emit({ type: 'voice-input', atMs: host.now(), input });
    host.metrics.markVoiceRequest(host.now());
    const separator = this.#text === '' ? 0 : 1;
    this.#text = this.#text === '' ? chunk : `${this.#text} ${chunk}`;
    host.playout.beginSegment(separator + chunk.length);
    const request = {
      text: input,
      sampleRateHz: voiceRate,
      config: host.voiceConfig.config,
      apiKey: host.voiceConfig.apiKey,
      ...(host.voiceConfig.baseUrl === undefined ? {} : { baseUrl: host.voiceConfig.baseUrl }),
    };
    for await (const audio of host.voice.synthesize(request, signal)) {
      if (signal.aborted) {
        return;
      }
      host.metrics.markVoiceFirstByte(host.now());
      const out = new Int16Array(resampler.maxOutputLength(audio.length));
      const length = resampler.process(audio, out);
      while (host.playout.freeSamples < length) {
        await host.nextTick();
        if (signal.aborted) {
          return;
        }
      }
      host.playout.write(out, 0, length);
      host.audioQueued();
    }
    if (!signal.aborted) {
      host.playout.endSegment();
    }
  }
}
