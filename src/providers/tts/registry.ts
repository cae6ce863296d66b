import { CartesiaVoice } from './cartesia-voice.js';
import { CustomVoice } from './custom-voice.js';
import { ElevenLabsVoice } from './elevenlabs-voice.js';
import { OpenAiVoice } from './openai-voice.js';
import type { Voice } from './voice.js';

export interface VoiceRegistry {
  get(provider: string): Voice | undefined;
  /** Default base URL and key per provider, from the server config. */
  defaults(provider: string): { baseUrl?: string; apiKey?: string };
}

export interface VoiceRegistryConfig {
  /** e.g. `https://api.openai.com/v1`; also the default key's endpoint. */
  openaiBaseUrl?: string;
  openaiApiKey?: string;
  /** `https://api.elevenlabs.io` when absent. */
  elevenLabsBaseUrl?: string;
  /** `wss://api.cartesia.ai` when absent. */
  cartesiaBaseUrl?: string;
  /** First-byte timeout of every adapter; 30 s when absent. */
  firstByteTimeoutMs?: number;
}

const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/**
 * The voice adapters this server has: `openai`, `11labs`, `cartesia` and `custom-voice` (the
 * assistant's `voice.server.url`). Only OpenAI has a server-wide default key.
 */
export function createVoiceRegistry(config: VoiceRegistryConfig = {}): VoiceRegistry {
  const timeout =
    config.firstByteTimeoutMs === undefined
      ? {}
      : { firstByteTimeoutMs: config.firstByteTimeoutMs };
  const openaiBaseUrl = config.openaiBaseUrl ?? OPENAI_DEFAULT_BASE_URL;
  const voices: Voice[] = [
    new OpenAiVoice({ baseUrl: openaiBaseUrl, ...timeout }),
    new ElevenLabsVoice({
      ...(config.elevenLabsBaseUrl === undefined ? {} : { baseUrl: config.elevenLabsBaseUrl }),
      ...timeout,
    }),
    new CartesiaVoice({
      ...(config.cartesiaBaseUrl === undefined ? {} : { baseUrl: config.cartesiaBaseUrl }),
      ...timeout,
    }),
    new CustomVoice(timeout),
  ];
  const byName = new Map(voices.map((voice) => [voice.name, voice]));
  return {
    get: (provider) => byName.get(provider),
    defaults: (provider) => {
      if (provider !== 'openai') {
        return {};
      }
      return {
        baseUrl: openaiBaseUrl,
        ...(config.openaiApiKey === undefined || config.openaiApiKey === ''
          ? {}
          : { apiKey: config.openaiApiKey }),
      };
    },
  };
}
