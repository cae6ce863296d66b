import { ParlaError } from '../../core/errors.js';
import {
  DEFAULT_FIRST_BYTE_TIMEOUT_MS,
  numberField,
  streamHttpPcm,
  stringField,
  trimSlash,
} from './pcm-stream.js';
import type { SynthesisRequest, Voice, VoiceCapabilities } from './voice.js';

export interface OpenAiVoiceOptions {
  /** Used when the request names no base URL, e.g. `https://api.openai.com/v1`. */
  baseUrl?: string;
  firstByteTimeoutMs?: number;
}

export const OPENAI_DEFAULT_MODEL = 'gpt-4o-mini-tts';
export const OPENAI_DEFAULT_VOICE = 'alloy';

/**
 * OpenAI speech: one streamed POST to `{baseUrl}/audio/speech` with `response_format: 'pcm'`,
 * which is always 24 kHz 16-bit little-endian mono.
 */
export class OpenAiVoice implements Voice {
  readonly name = 'openai';
  readonly capabilities: VoiceCapabilities = { streamingOutput: true, sampleRatesHz: [24_000] };
  readonly #baseUrl: string | undefined;
  readonly #firstByteTimeoutMs: number;

  constructor(options: OpenAiVoiceOptions = {}) {
    this.#baseUrl = options.baseUrl;
    this.#firstByteTimeoutMs = options.firstByteTimeoutMs ?? DEFAULT_FIRST_BYTE_TIMEOUT_MS;
  }

  async *synthesize(request: SynthesisRequest, signal: AbortSignal): AsyncGenerator<Int16Array> {
    const baseUrl = request.baseUrl ?? this.#baseUrl;
    if (baseUrl === undefined || baseUrl === '') {
      throw new ParlaError('ERR_BAD_REQUEST', 'openai: no base URL to send the request to');
    }
    if (request.sampleRateHz !== 24_000) {
      throw new ParlaError(
        'ERR_BAD_REQUEST',
        `openai: speech comes at 24000 Hz only, not ${request.sampleRateHz}`,
      );
    }
    const config = request.config;
    const speed = numberField(config, 'speed');
    const instructions = stringField(config, 'instructions');
    yield* streamHttpPcm(
      {
        provider: this.name,
        url: `${trimSlash(baseUrl)}/audio/speech`,
        headers: {
          accept: 'audio/pcm',
          ...(request.apiKey === null ? {} : { authorization: `Bearer ${request.apiKey}` }),
        },
        body: {
          model: stringField(config, 'model') ?? OPENAI_DEFAULT_MODEL,
          input: request.text,
          voice: stringField(config, 'voiceId') ?? OPENAI_DEFAULT_VOICE,
          response_format: 'pcm',
          ...(speed === null ? {} : { speed }),
          ...(instructions === null ? {} : { instructions }),
        },
        firstByteTimeoutMs: this.#firstByteTimeoutMs,
      },
      signal,
    );
  }
}
