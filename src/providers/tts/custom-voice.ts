import { ParlaError } from '../../core/errors.js';
import { DEFAULT_FIRST_BYTE_TIMEOUT_MS, streamHttpPcm } from './pcm-stream.js';
import type { SynthesisRequest, Voice, VoiceCapabilities } from './voice.js';

export interface CustomVoiceOptions {
  firstByteTimeoutMs?: number;
}

export const CUSTOM_VOICE_SAMPLE_RATES_HZ = [8000, 16_000, 22_050, 24_000, 44_100] as const;

interface ServerConfig {
  url?: unknown;
  secret?: unknown;
  headers?: unknown;
  timeoutSeconds?: unknown;
}

/**
 * A tenant's own TTS server: POST `voice.server.url` with
 * `{message: {type: 'voice-request', text, sampleRate}}`; the reply body is raw PCM16 mono at
 * that rate. `server.secret` goes in `x-vapi-secret`, `server.headers` are sent as given.
 */
export class CustomVoice implements Voice {
  readonly name = 'custom-voice';
  readonly capabilities: VoiceCapabilities = {
    streamingOutput: true,
    sampleRatesHz: CUSTOM_VOICE_SAMPLE_RATES_HZ,
  };
  readonly #firstByteTimeoutMs: number;

  constructor(options: CustomVoiceOptions = {}) {
    this.#firstByteTimeoutMs = options.firstByteTimeoutMs ?? DEFAULT_FIRST_BYTE_TIMEOUT_MS;
  }

  async *synthesize(request: SynthesisRequest, signal: AbortSignal): AsyncGenerator<Int16Array> {
    const server = (request.config['server'] ?? {}) as ServerConfig;
    const url = typeof server.url === 'string' && server.url !== '' ? server.url : request.baseUrl;
    if (url === undefined || url === '') {
      throw new ParlaError('ERR_BAD_REQUEST', 'custom-voice: voice.server.url is required');
    }
    const headers: Record<string, string> = { accept: 'audio/pcm, application/octet-stream' };
    if (server.headers !== null && typeof server.headers === 'object') {
      for (const [key, value] of Object.entries(server.headers as Record<string, unknown>)) {
        if (typeof value === 'string') {
          headers[key.toLowerCase()] = value;
        }
      }
    }
    if (typeof server.secret === 'string' && server.secret !== '') {
      headers['x-vapi-secret'] = server.secret;
    }
    if (request.apiKey !== null && headers['authorization'] === undefined) {
      headers['authorization'] = `Bearer ${request.apiKey}`;
    }
    const timeoutMs =
      typeof server.timeoutSeconds === 'number' && server.timeoutSeconds > 0
        ? server.timeoutSeconds * 1000
        : this.#firstByteTimeoutMs;
    yield* streamHttpPcm(
      {
        provider: this.name,
        url,
        headers,
        body: {
          message: { type: 'voice-request', text: request.text, sampleRate: request.sampleRateHz },
        },
        firstByteTimeoutMs: timeoutMs,
      },
      signal,
    );
  }
}
