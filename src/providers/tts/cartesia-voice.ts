import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { ParlaError } from '../../core/errors.js';
import { ProviderError } from '../provider-error.js';
import {
  boundedChunks,
  DEFAULT_FIRST_BYTE_TIMEOUT_MS,
  failure,
  Pcm16Assembler,
  stringField,
  trimSlash,
} from './pcm-stream.js';
import type { SynthesisRequest, Voice, VoiceCapabilities } from './voice.js';

export interface CartesiaVoiceOptions {
  /** Used when the request names no base URL; `wss://api.cartesia.ai` by default. */
  baseUrl?: string;
  firstByteTimeoutMs?: number;
}

export const CARTESIA_DEFAULT_BASE_URL = 'wss://api.cartesia.ai';
export const CARTESIA_VERSION = '2024-11-13';
export const CARTESIA_DEFAULT_MODEL = 'sonic-2';
export const CARTESIA_SAMPLE_RATES_HZ = [8000, 16_000, 22_050, 24_000, 44_100, 48_000] as const;

/** The largest message accepted from the vendor (a base64 chunk). */
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Chunks queued ahead of the consumer before the socket is paused, and when it resumes. */
const HIGH_WATER_CHUNKS = 64;
const LOW_WATER_CHUNKS = 16;

interface WireMessage {
  type?: unknown;
  data?: unknown;
  done?: unknown;
  error?: unknown;
  message?: unknown;
  status_code?: unknown;
}

/**
 * Cartesia over its websocket: one connection per utterance, one `continue: false` request with
 * a raw `pcm_s16le` output format; `chunk` messages carry base64 audio until `done` or `error`.
 */
export class CartesiaVoice implements Voice {
  readonly name = 'cartesia';
  readonly capabilities: VoiceCapabilities = {
    streamingOutput: true,
    sampleRatesHz: CARTESIA_SAMPLE_RATES_HZ,
  };
  readonly #baseUrl: string;
  readonly #firstByteTimeoutMs: number;

  constructor(options: CartesiaVoiceOptions = {}) {
    this.#baseUrl = options.baseUrl ?? CARTESIA_DEFAULT_BASE_URL;
    this.#firstByteTimeoutMs = options.firstByteTimeoutMs ?? DEFAULT_FIRST_BYTE_TIMEOUT_MS;
  }

  async *synthesize(request: SynthesisRequest, signal: AbortSignal): AsyncGenerator<Int16Array> {
    const config = request.config;
    const voiceId = stringField(config, 'voiceId');
    if (voiceId === null) {
      throw new ParlaError('ERR_BAD_REQUEST', 'cartesia: voice.voiceId is required');
    }
    if (!(CARTESIA_SAMPLE_RATES_HZ as readonly number[]).includes(request.sampleRateHz)) {
      throw new ParlaError(
        'ERR_BAD_REQUEST',
        `cartesia: no PCM output at ${request.sampleRateHz} Hz`,
      );
    }
    signal.throwIfAborted();
    const query = new URLSearchParams({ cartesia_version: CARTESIA_VERSION });
    if (request.apiKey !== null) {
      query.set('api_key', request.apiKey);
    }
    const base = trimSlash(request.baseUrl ?? this.#baseUrl);
    const contextId = randomUUID();
    const controls = config['experimentalControls'];
    const language = stringField(config, 'language');
    const message = {
      model_id: stringField(config, 'model') ?? CARTESIA_DEFAULT_MODEL,
      transcript: request.text,
      voice: {
        mode: 'id',
        id: voiceId,
        ...(controls !== null && typeof controls === 'object'
          ? { __experimental_controls: controls }
          : {}),
      },
      output_format: {
        container: 'raw',
        encoding: 'pcm_s16le',
        sample_rate: request.sampleRateHz,
      },
      ...(language === null ? {} : { language }),
      context_id: contextId,
      continue: false,
    };

    const queue: Int16Array[] = [];
    const assembler = new Pcm16Assembler();
    let error: unknown = null;
    let done = false;
    let wake: (() => void) | null = null;
    const notify = (): void => {
      const resolve = wake;
      wake = null;
      resolve?.();
    };
    const fail = (reason: unknown): void => {
      error ??= reason;
      notify();
    };
    const socket = new WebSocket(`${base}/tts/websocket?${query.toString()}`, {
      maxPayload: MAX_MESSAGE_BYTES,
      headers: { 'cartesia-version': CARTESIA_VERSION },
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      fail(failure(this.name, new Error('timeout'), signal, this.#firstByteTimeoutMs));
      socket.terminate();
    }, this.#firstByteTimeoutMs);
    const onAbort = (): void => {
      socket.terminate();
      notify();
    };
    signal.addEventListener('abort', onAbort, { once: true });

    socket.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 502;
      res.resume();
      fail(new ProviderError(this.name, `HTTP ${status} on connect`, status));
      socket.terminate();
    });
    socket.on('open', () => socket.send(JSON.stringify(message)));
    socket.on('message', (data: WebSocket.RawData) => {
      if (error !== null || done) {
        return;
      }
      let wire: WireMessage;
      try {
        wire = JSON.parse(rawText(data)) as WireMessage;
        if (wire === null || typeof wire !== 'object') {
          throw new TypeError('not an object');
        }
      } catch {
        fail(new ProviderError(this.name, 'malformed message from the vendor', null));
        socket.terminate();
        return;
      }
      if (wire.type === 'chunk' && typeof wire.data === 'string') {
        clearTimeout(timer);
        for (const piece of boundedChunks(Buffer.from(wire.data, 'base64'))) {
          const samples = assembler.push(piece);
          if (samples.length > 0) {
            queue.push(samples);
          }
        }
        if (queue.length >= HIGH_WATER_CHUNKS && !socket.isPaused) {
          socket.pause();
        }
      } else if (wire.type === 'error') {
        const status = typeof wire.status_code === 'number' ? wire.status_code : null;
        const text =
          typeof wire.error === 'string'
            ? wire.error
            : typeof wire.message === 'string'
              ? wire.message
              : '';
        fail(new ProviderError(this.name, `error: ${text || 'unknown'}`, status));
        socket.close();
        return;
      }
      if (wire.type === 'done' || wire.done === true) {
        done = true;
        socket.close();
      }
      notify();
    });
    socket.on('error', (cause) => fail(failure(this.name, cause, signal, null)));
    socket.on('close', () => {
      if (!done) {
        fail(new ProviderError(this.name, 'the connection closed before the audio was done', null));
      }
    });

    try {
      for (;;) {
        if (signal.aborted) {
          throw signal.reason;
        }
        const next = queue.shift();
        if (next !== undefined) {
          if (socket.isPaused && queue.length <= LOW_WATER_CHUNKS) {
            socket.resume();
          }
          yield next;
          continue;
        }
        if (error !== null) {
          throw timedOut || !signal.aborted ? error : signal.reason;
        }
        if (done) {
          return;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      if (socket.readyState !== WebSocket.CLOSED) {
        socket.terminate();
      }
    }
  }
}

function rawText(data: WebSocket.RawData): string {
  if (Array.isArray(data)) {
    return Buffer.concat(data).toString('utf8');
  }
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}
