import { ProviderError } from '../provider-error.js';
import type {
  Transcriber,
  TranscriberCapabilities,
  TranscriberEvent,
  TranscriberOpenOptions,
  TranscriberStream,
} from './transcriber.js';

export interface FallbackCandidate {
  transcriber: Transcriber;
  /** This candidate's `transcriber` object (the primary's, or an entry of its fallback plan). */
  config: Readonly<Record<string, unknown>>;
}

export interface FallbackOptions {
  /** Key and endpoint for a fallback vendor; by default none (the adapter's own defaults apply). */
  credentialsFor?: (provider: string) => { apiKey: string | null; baseUrl?: string } | undefined;
  /** Audio kept to replay to the next transcriber until the current one produces something. */
  maxReplaySeconds?: number;
}

/**
 * `transcriber.fallbackPlan.transcribers`: opens the candidates in order. The next is opened when
 * opening one fails, or when it errors before producing any event; once one has produced
 * something it is kept, and its errors are the caller's. Audio heard so far (bounded) is replayed
 * to the next candidate so the start of the call is not lost.
 */
export class FallbackTranscriber implements Transcriber {
  readonly name: string;
  readonly capabilities: TranscriberCapabilities;
  readonly #candidates: readonly FallbackCandidate[];
  readonly #options: FallbackOptions;

  constructor(candidates: readonly FallbackCandidate[], options: FallbackOptions = {}) {
    const first = candidates[0];
    if (first === undefined) {
      throw new Error('FallbackTranscriber needs at least one candidate');
    }
    this.name = first.transcriber.name;
    this.#candidates = candidates;
    this.#options = options;
    // The pipeline may rely only on what every candidate can do.
    this.capabilities = {
      interimResults: candidates.every((c) => c.transcriber.capabilities.interimResults),
      endOfTurn: candidates.every((c) => c.transcriber.capabilities.endOfTurn),
    };
  }

  async open(options: TranscriberOpenOptions, signal: AbortSignal): Promise<TranscriberStream> {
    const stream = new FallbackStream(this.#candidates, this.#options, options, signal);
    await stream.openFrom(0);
    return stream;
  }
}

class FallbackStream implements TranscriberStream {
  readonly #candidates: readonly FallbackCandidate[];
  readonly #fallback: FallbackOptions;
  readonly #options: TranscriberOpenOptions;
  readonly #signal: AbortSignal;
  readonly #maxReplaySamples: number;
  #index = -1;
  #current: TranscriberStream | null = null;
  #produced = false;
  #switching: Promise<void> | null = null;
  #closing = false;
  readonly #replay: Int16Array[] = [];
  #replaySamples = 0;

  constructor(
    candidates: readonly FallbackCandidate[],
    fallback: FallbackOptions,
    options: TranscriberOpenOptions,
    signal: AbortSignal,
  ) {
    this.#candidates = candidates;
    this.#fallback = fallback;
    this.#options = options;
    this.#signal = signal;
    this.#maxReplaySamples = Math.round((fallback.maxReplaySeconds ?? 5) * options.sampleRateHz);
  }

  /** Opens candidate `start`, or the first after it that opens; rejects with the last failure. */
  async openFrom(start: number): Promise<void> {
    let lastError: unknown = new Error('no transcriber to open');
    for (let index = start; index < this.#candidates.length; index++) {
      const candidate = this.#candidates[index];
      if (candidate === undefined || this.#closing) {
        break;
      }
      this.#index = index;
      try {
        const stream = await candidate.transcriber.open(
          {
            ...this.#openOptions(candidate, index),
            onEvent: (event) => this.#onEvent(index, event),
          },
          this.#signal,
        );
        if (this.#index !== index) {
          // It failed while we were still opening it, and a later one took over.
          void stream.close().catch(() => undefined);
          return;
        }
        this.#current = stream;
        for (const chunk of this.#replay) {
          stream.pushAudio(chunk);
        }
        return;
      } catch (error) {
        lastError = error;
        if (this.#signal.aborted) {
          break;
        }
      }
    }
    throw lastError;
  }

  pushAudio(samples: Int16Array): void {
    if (this.#closing) {
      return;
    }
    if (!this.#produced) {
      const copy = samples.slice();
      this.#replay.push(copy);
      this.#replaySamples += copy.length;
      while (this.#replaySamples > this.#maxReplaySamples) {
        this.#replaySamples -= this.#replay.shift()?.length ?? this.#replaySamples;
      }
    }
    // While switching there is no current stream: the replay buffer carries the audio over.
    this.#current?.pushAudio(samples);
  }

  finalize(): void {
    this.#current?.finalize();
  }

  async close(): Promise<void> {
    this.#closing = true;
    await this.#switching?.catch(() => undefined);
    await this.#current?.close();
  }

  #openOptions(
    candidate: FallbackCandidate,
    index: number,
  ): Omit<TranscriberOpenOptions, 'onEvent'> {
    const base = { sampleRateHz: this.#options.sampleRateHz, config: candidate.config };
    if (index === 0) {
      return {
        ...base,
        apiKey: this.#options.apiKey,
        ...(this.#options.baseUrl === undefined ? {} : { baseUrl: this.#options.baseUrl }),
      };
    }
    const provider = typeof candidate.config.provider === 'string' ? candidate.config.provider : '';
    const credentials = this.#fallback.credentialsFor?.(provider);
    return {
      ...base,
      apiKey: credentials?.apiKey ?? null,
      ...(credentials?.baseUrl === undefined ? {} : { baseUrl: credentials.baseUrl }),
    };
  }

  #onEvent(index: number, event: TranscriberEvent): void {
    if (index !== this.#index) {
      return; // A candidate we have given up on.
    }
    if (
      event.type === 'error' &&
      !this.#produced &&
      !this.#closing &&
      index + 1 < this.#candidates.length
    ) {
      const failed = this.#current;
      this.#current = null;
      this.#index = index + 1;
      void failed?.close().catch(() => undefined);
      this.#switching = this.openFrom(index + 1).then(
        () => {
          this.#switching = null;
        },
        (error: unknown) => {
          this.#switching = null;
          const last = error instanceof ProviderError ? error : event.error;
          if (!this.#closing) {
            this.#options.onEvent({ type: 'error', error: last });
          }
          this.#options.onEvent({ type: 'closed' });
        },
      );
      return;
    }
    if (event.type !== 'error' && event.type !== 'closed') {
      this.#produced = true;
      this.#replay.length = 0;
      this.#replaySamples = 0;
    }
    this.#options.onEvent(event);
  }
}
