import { ParlaError } from '../../core/errors.js';
import {
  DEFAULT_FIRST_BYTE_TIMEOUT_MS,
  numberField,
  streamHttpPcm,
  stringField,
  trimSlash,
} from './pcm-stream.js';
import type { SynthesisRequest, Voice, VoiceCapabilities } from './voice.js';

export interface ElevenLabsVoiceOptions {
  /** Used when the request names no base URL; `https://api.elevenlabs.io` by default. */
  baseUrl?: string;
  firstByteTimeoutMs?: number;
}

export const ELEVENLABS_DEFAULT_BASE_URL = 'https://api.elevenlabs.io';
export const ELEVENLABS_DEFAULT_MODEL = 'eleven_turbo_v2_5';
export const ELEVENLABS_SAMPLE_RATES_HZ = [16_000, 22_050, 24_000, 44_100] as const;

/** The assistant's camelCase voice fields and their wire names in `voice_settings`. */
const VOICE_SETTINGS: readonly (readonly [string, string])[] = [
  ['stability', 'stability'],
  ['similarityBoost', 'similarity_boost'],
  ['style', 'style'],
  ['speed', 'speed'],
];

/**
 * ElevenLabs streaming speech: POST `{baseUrl}/v1/text-to-speech/{voiceId}/stream` with
 * `output_format=pcm_{rate}` (raw 16-bit little-endian mono) and the `xi-api-key` header.
 */
export class ElevenLabsVoice implements Voice {
  readonly name = '11labs';
  readonly capabilities: VoiceCapabilities = {
    streamingOutput: true,
    sampleRatesHz: ELEVENLABS_SAMPLE_RATES_HZ,
  };
  readonly #baseUrl: string;
  readonly #firstByteTimeoutMs: number;

  constructor(options: ElevenLabsVoiceOptions = {}) {
    this.#baseUrl = options.baseUrl ?? ELEVENLABS_DEFAULT_BASE_URL;
    this.#firstByteTimeoutMs = options.firstByteTimeoutMs ?? DEFAULT_FIRST_BYTE_TIMEOUT_MS;
  }

  async *synthesize(request: SynthesisRequest, signal: AbortSignal): AsyncGenerator<Int16Array> {
    const config = request.config;
    const voiceId = stringField(config, 'voiceId');
    if (voiceId === null) {
      throw new ParlaError('ERR_BAD_REQUEST', '11labs: voice.voiceId is required');
    }
    if (!(ELEVENLABS_SAMPLE_RATES_HZ as readonly number[]).includes(request.sampleRateHz)) {
      throw new ParlaError(
        'ERR_BAD_REQUEST',
        `11labs: no PCM output at ${request.sampleRateHz} Hz (${ELEVENLABS_SAMPLE_RATES_HZ.join(', ')})`,
      );
    }
    const query = new URLSearchParams({ output_format: `pcm_${request.sampleRateHz}` });
    const latency = numberField(config, 'optimizeStreamingLatency');
    if (latency !== null) {
      query.set('optimize_streaming_latency', String(latency));
    }
    const settings: Record<string, unknown> = {};
    for (const [field, wire] of VOICE_SETTINGS) {
      const value = numberField(config, field);
      if (value !== null) {
        settings[wire] = value;
      }
    }
    if (typeof config['useSpeakerBoost'] === 'boolean') {
      settings['use_speaker_boost'] = config['useSpeakerBoost'];
    }
    const language = stringField(config, 'language');
    const base = trimSlash(request.baseUrl ?? this.#baseUrl);
    yield* streamHttpPcm(
      {
        provider: this.name,
        url: `${base}/v1/text-to-speech/${encodeURIComponent(voiceId)}/stream?${query.toString()}`,
        headers: {
          accept: 'audio/pcm',
          ...(request.apiKey === null ? {} : { 'xi-api-key': request.apiKey }),
        },
        body: {
          text: request.text,
          model_id: stringField(config, 'model') ?? ELEVENLABS_DEFAULT_MODEL,
          ...(Object.keys(settings).length === 0 ? {} : { voice_settings: settings }),
          ...(language === null ? {} : { language_code: language }),
        },
        firstByteTimeoutMs: this.#firstByteTimeoutMs,
        errorMessage: elevenLabsError,
      },
      signal,
    );
  }
}

/** `{detail: {status, message}}` or `{detail: "…"}`. */
function elevenLabsError(body: unknown): string | undefined {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') {
    return detail;
  }
  const message = (detail as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : undefined;
}
