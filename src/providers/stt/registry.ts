import { CustomTranscriber, type CustomTranscriberOptions } from './custom-transcriber.js';
import { DeepgramTranscriber, type DeepgramOptions } from './deepgram.js';
import {
  FallbackTranscriber,
  type FallbackCandidate,
  type FallbackOptions,
} from './fallback-transcriber.js';
import type { Transcriber } from './transcriber.js';

export interface TranscriberRegistryConfig {
  /** The server's Deepgram key, used when an assistant brings no credential of its own. */
  deepgramApiKey?: string;
  /** A self-hosted Deepgram, e.g. `ws://deepgram:8080`. */
  deepgramBaseUrl?: string;
  /** Timing knobs (tests). */
  deepgram?: Omit<DeepgramOptions, 'apiKey' | 'baseUrl'>;
  customTranscriber?: CustomTranscriberOptions;
}

export interface TranscriberRegistry {
  /** The adapter serving `transcriber.provider`, if any. */
  get(provider: string): Transcriber | undefined;
  /**
   * The transcriber for an assistant's `transcriber` object: its provider's adapter, wrapped in
   * a FallbackTranscriber when it has a `fallbackPlan` (unknown fallback providers are skipped).
   */
  forConfig(
    config: Readonly<Record<string, unknown>>,
    options?: FallbackOptions,
  ): Transcriber | undefined;
}

export function createTranscriberRegistry(
  config: TranscriberRegistryConfig = {},
): TranscriberRegistry {
  const deepgram = new DeepgramTranscriber({
    ...config.deepgram,
    ...(config.deepgramApiKey === undefined || config.deepgramApiKey === ''
      ? {}
      : { apiKey: config.deepgramApiKey }),
    ...(config.deepgramBaseUrl === undefined || config.deepgramBaseUrl === ''
      ? {}
      : { baseUrl: config.deepgramBaseUrl }),
  });
  const transcribers = new Map<string, Transcriber>([
    [deepgram.name, deepgram],
    ['custom-transcriber', new CustomTranscriber(config.customTranscriber)],
  ]);
  const get = (provider: string): Transcriber | undefined => transcribers.get(provider);
  return {
    get,
    forConfig(transcriberConfig, options) {
      const primary = providerOf(transcriberConfig, get);
      if (primary === undefined) {
        return undefined;
      }
      const plan = transcriberConfig.fallbackPlan as { transcribers?: unknown } | undefined;
      const candidates: FallbackCandidate[] = [{ transcriber: primary, config: transcriberConfig }];
      for (const entry of Array.isArray(plan?.transcribers) ? plan.transcribers : []) {
        if (entry !== null && typeof entry === 'object') {
          const fallbackConfig = entry as Record<string, unknown>;
          const transcriber = providerOf(fallbackConfig, get);
          if (transcriber !== undefined) {
            candidates.push({ transcriber, config: fallbackConfig });
          }
        }
      }
      return candidates.length === 1 ? primary : new FallbackTranscriber(candidates, options);
    },
  };
}

function providerOf(
  config: Readonly<Record<string, unknown>>,
  get: (provider: string) => Transcriber | undefined,
): Transcriber | undefined {
  return typeof config.provider === 'string' ? get(config.provider) : undefined;
}
