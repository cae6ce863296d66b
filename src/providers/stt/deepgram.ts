import type { WebSocket } from 'ws';
import { ProviderError } from '../provider-error.js';
import {
  connectWebSocket,
  SocketTranscriberStream,
  type SocketStreamOptions,
} from './socket-stream.js';
import type {
  Transcriber,
  TranscriberCapabilities,
  TranscriberOpenOptions,
  TranscriberStream,
} from './transcriber.js';

export const DEEPGRAM_BASE_URL = 'wss://api.deepgram.com';

export interface DeepgramOptions {
  /** Used when the open options carry no key. */
  apiKey?: string;
  /** Used when the open options carry no base URL; a self-hosted Deepgram, e.g. `ws://dg:8080`. */
  baseUrl?: string;
  connectTimeoutMs?: number;
  /** KeepAlive is sent after this long without audio (Deepgram closes after 10 s of silence). */
  keepAliveIntervalMs?: number;
  /** How long close() waits for Deepgram to close after CloseStream. */
  closeTimeoutMs?: number;
  /** Audio held while connecting or while the socket is slow: this many seconds, oldest dropped. */
  maxQueuedSeconds?: number;
}

const DEFAULTS = {
  connectTimeoutMs: 10_000,
  keepAliveIntervalMs: 4_000,
  closeTimeoutMs: 3_000,
  maxQueuedSeconds: 5,
};

/** The Deepgram live streaming API (`/v1/listen` over a websocket). */
export class DeepgramTranscriber implements Transcriber {
  readonly name = 'deepgram';
  readonly capabilities: TranscriberCapabilities = { interimResults: true, endOfTurn: true };
  readonly #options: DeepgramOptions;

  constructor(options: DeepgramOptions = {}) {
    this.#options = options;
  }

  async open(options: TranscriberOpenOptions, signal: AbortSignal): Promise<TranscriberStream> {
    const stream = this.start(options, signal);
    await stream.ready;
    return stream;
  }

  /** Returns the stream at once (audio pushed while connecting is queued); `ready` tells the rest. */
  start(options: TranscriberOpenOptions, signal: AbortSignal): DeepgramStream {
    const baseUrl = options.baseUrl ?? this.#options.baseUrl;
    const apiKey = options.apiKey ?? this.#options.apiKey ?? null;
    const maxQueuedSeconds = this.#options.maxQueuedSeconds ?? DEFAULTS.maxQueuedSeconds;
    const streamOptions: SocketStreamOptions = {
      provider: this.name,
      onEvent: options.onEvent,
      maxQueuedBytes: Math.round(maxQueuedSeconds * options.sampleRateHz * 2),
      closeTimeoutMs: this.#options.closeTimeoutMs ?? DEFAULTS.closeTimeoutMs,
    };
    const keepAliveMs = this.#options.keepAliveIntervalMs ?? DEFAULTS.keepAliveIntervalMs;
    if ((apiKey === null || apiKey === '') && baseUrl === undefined) {
      // Only a self-hosted Deepgram (a base URL of its own) may go without a key.
      const refused = new ProviderError(this.name, 'no API key configured', 401);
      return new DeepgramStream(streamOptions, Promise.reject(refused), keepAliveMs);
    }
    const connecting = connectWebSocket({
      provider: this.name,
      url: listenUrl(baseUrl ?? DEEPGRAM_BASE_URL, options.config, options.sampleRateHz),
      headers: apiKey === null || apiKey === '' ? {} : { Authorization: `Token ${apiKey}` },
      timeoutMs: this.#options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
      signal,
      errorMessage: deepgramErrorMessage,
    });
    return new DeepgramStream(streamOptions, connecting, keepAliveMs);
  }
}

interface WireResults {
  type: 'Results';
  start?: number;
  duration?: number;
  is_final?: boolean;
  speech_final?: boolean;
  channel?: { alternatives?: { transcript?: string; confidence?: number }[] };
}

type WireMessage =
  | WireResults
  | { type: 'SpeechStarted'; timestamp?: number }
  | { type: 'UtteranceEnd'; last_word_end?: number }
  | { type: 'Metadata' }
  | { type: 'Error'; description?: string; message?: string; err_msg?: string };

export class DeepgramStream extends SocketTranscriberStream {
  readonly #keepAliveMs: number;
  #keepAlive: NodeJS.Timeout | null = null;

  constructor(options: SocketStreamOptions, connecting: Promise<WebSocket>, keepAliveMs: number) {
    super(options, connecting);
    this.#keepAliveMs = keepAliveMs;
  }

  finalize(): void {
    if (!this.isClosing) {
      this.queue.flushAll();
      this.sendText({ type: 'Finalize' });
    }
  }

  protected onOpen(): void {
    // Re-armed by every chunk of audio, so it fires only after `keepAliveMs` without any.
    this.#keepAlive = setTimeout(() => this.#sendKeepAlive(), this.#keepAliveMs);
  }

  protected onAudio(): void {
    this.#keepAlive?.refresh();
  }

  protected requestClose(): void {
    this.#stopKeepAlive();
    this.sendText({ type: 'CloseStream' });
  }

  protected onSocketClosed(): void {
    this.#stopKeepAlive();
  }

  protected onText(text: string): void {
    let message: WireMessage;
    try {
      message = JSON.parse(text) as WireMessage;
    } catch {
      return;
    }
    if (message === null || typeof message !== 'object') {
      return;
    }
    switch (message.type) {
      case 'Results': {
        const alternative = message.channel?.alternatives?.[0];
        const transcript = alternative?.transcript ?? '';
        const speechFinal = message.speech_final === true;
        // Silence yields empty results; only an empty end-of-speech still says something.
        if (transcript === '' && !speechFinal) {
          return;
        }
        const start = message.start ?? 0;
        this.emit({
          type: 'transcript',
          text: transcript,
          isFinal: message.is_final === true,
          speechFinal,
          confidence: alternative?.confidence ?? 0,
          startMs: Math.round(start * 1000),
          endMs: Math.round((start + (message.duration ?? 0)) * 1000),
        });
        return;
      }
      case 'SpeechStarted':
        this.emit({ type: 'speech-started', atMs: Math.round((message.timestamp ?? 0) * 1000) });
        return;
      case 'UtteranceEnd':
        this.emit({
          type: 'utterance-end',
          atMs: Math.round((message.last_word_end ?? 0) * 1000),
        });
        return;
      case 'Error': {
        const detail = message.description ?? message.message ?? message.err_msg ?? 'unknown';
        this.emit({ type: 'error', error: new ProviderError(this.provider, detail, null) });
        return;
      }
      default:
        return;
    }
  }

  #sendKeepAlive(): void {
    this.sendText({ type: 'KeepAlive' });
    this.#keepAlive?.refresh();
  }

  #stopKeepAlive(): void {
    if (this.#keepAlive !== null) {
      clearTimeout(this.#keepAlive);
      this.#keepAlive = null;
    }
  }
}

/** `{base}/v1/listen?…` with the assistant's transcriber settings as Deepgram query parameters. */
export function listenUrl(
  baseUrl: string,
  config: Readonly<Record<string, unknown>>,
  sampleRateHz: number,
): string {
  let base = baseUrl.replace(/\/+$/, '').replace(/^http(s?):\/\//, 'ws$1://');
  if (!base.endsWith('/listen')) {
    base += base.endsWith('/v1') ? '/listen' : '/v1/listen';
  }
  const model = stringField(config, 'model') ?? 'nova-2';
  const params = new URLSearchParams({
    model,
    language: stringField(config, 'language') ?? 'en',
    encoding: 'linear16',
    sample_rate: String(sampleRateHz),
    channels: '1',
    interim_results: 'true',
    endpointing: String(numberField(config, 'endpointing') ?? 300),
    utterance_end_ms: String(Math.max(1000, numberField(config, 'utteranceEndMs') ?? 1000)),
    vad_events: 'true',
    smart_format: String(config.smartFormat !== false),
  });
  if (typeof config.numerals === 'boolean') {
    params.set('numerals', String(config.numerals));
  }
  if (config.mipOptOut === true) {
    params.set('mip_opt_out', 'true');
  }
  const keywords = [...stringList(config.keywords), ...stringList(config.wordBoost)];
  const keyterms = stringList(config.keyterm);
  if (model.startsWith('nova-3')) {
    // Nova-3 takes key terms only (keywords are refused); a keyword's `:boost` has no meaning there.
    keyterms.push(...keywords.map((word) => word.replace(/:-?[\d.]+$/, '')));
  } else {
    keywords.forEach((word) => params.append('keywords', word));
  }
  keyterms.forEach((term) => params.append('keyterm', term));
  return `${base}?${params.toString()}`;
}

function stringField(config: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const value = config[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function numberField(config: Readonly<Record<string, unknown>>, key: string): number | undefined {
  const value = config[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string' && item !== '')
    : [];
}

function deepgramErrorMessage(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { err_msg?: unknown; message?: unknown };
    const message = parsed.err_msg ?? parsed.message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    return undefined;
  }
}
