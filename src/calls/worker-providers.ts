/**
 * The vendor adapters a call worker thread uses, built once per thread (per distinct server
 * settings) from the ProviderServerSettings the main thread sends with each call, and the
 * resolution of one call's providers and keys: the assistant's credentials first
 * (`params.credentials[provider]`, whose `baseUrl` points the vendor elsewhere), else the server's
 * settings.
 */
import type { ModelProvider, ModelProviderRegistry } from '../providers/llm/model-provider.js';
import { createModelRegistry } from '../providers/llm/registry.js';
import { createTranscriberRegistry, type TranscriberRegistry } from '../providers/stt/registry.js';
import type { Transcriber } from '../providers/stt/transcriber.js';
import { voiceFor } from '../providers/tts/fallback-voice.js';
import { createVoiceRegistry, type VoiceRegistry } from '../providers/tts/registry.js';
import type { Voice } from '../providers/tts/voice.js';
import type { PipelineCallParams, ProviderServerSettings } from './pipeline-call-params.js';

export interface WorkerProviders {
  readonly models: ModelProviderRegistry;
  readonly transcribers: TranscriberRegistry;
  readonly voices: VoiceRegistry;
}

/** Where one vendor's requests go and with which key. */
export interface ResolvedEndpoint {
  apiKey: string | null;
  baseUrl?: string;
}

const OPENAI_BASE_URL = 'https://api.openai.com/v1';
/** Distinct settings seen by a thread are few (one per server config); bound them anyway. */
const MAX_CACHED_SETTINGS = 8;
const cache = new Map<string, WorkerProviders>();

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value === '' ? undefined : value;

/** The thread's registries for these settings, built on first use. */
export function workerProviders(settings: ProviderServerSettings): WorkerProviders {
  const key = JSON.stringify(settings);
  let providers = cache.get(key);
  if (providers === undefined) {
    providers = buildWorkerProviders(settings);
    if (cache.size >= MAX_CACHED_SETTINGS) {
      const oldest = cache.keys().next().value;
      if (oldest !== undefined) {
        cache.delete(oldest);
      }
    }
    cache.set(key, providers);
  }
  return providers;
}

export function buildWorkerProviders(settings: ProviderServerSettings): WorkerProviders {
  const openaiBaseUrl = nonEmpty(settings.openaiBaseUrl) ?? OPENAI_BASE_URL;
  const elevenLabsBaseUrl = nonEmpty(settings.elevenLabsBaseUrl);
  const cartesiaBaseUrl = nonEmpty(settings.cartesiaBaseUrl);
  const deepgramBaseUrl = nonEmpty(settings.deepgramBaseUrl);
  return {
    models: createModelRegistry({
      openaiBaseUrl,
      openaiApiKey: settings.openaiApiKey,
      anthropicBaseUrl: settings.anthropicBaseUrl,
      anthropicApiKey: settings.anthropicApiKey,
    }),
    transcribers: createTranscriberRegistry({
      deepgramApiKey: settings.deepgramApiKey,
      ...(deepgramBaseUrl === undefined ? {} : { deepgramBaseUrl }),
    }),
    voices: createVoiceRegistry({
      openaiBaseUrl,
      openaiApiKey: settings.openaiApiKey,
      ...(elevenLabsBaseUrl === undefined ? {} : { elevenLabsBaseUrl }),
      ...(cartesiaBaseUrl === undefined ? {} : { cartesiaBaseUrl }),
    }),
  };
}

/** The server's own key and endpoint for a vendor (empty settings mean the vendor's defaults). */
function serverEndpoint(provider: string, settings: ProviderServerSettings): ResolvedEndpoint {
  const pick = (apiKey: string, baseUrl: string): ResolvedEndpoint => {
    const url = nonEmpty(baseUrl);
    return { apiKey: nonEmpty(apiKey) ?? null, ...(url === undefined ? {} : { baseUrl: url }) };
  };
  switch (provider) {
    case 'openai':
      return pick(settings.openaiApiKey, settings.openaiBaseUrl);
    case 'anthropic':
      return pick(settings.anthropicApiKey, settings.anthropicBaseUrl);
    case 'deepgram':
      return pick(settings.deepgramApiKey, settings.deepgramBaseUrl);
    case '11labs':
      return pick(settings.elevenLabsApiKey, settings.elevenLabsBaseUrl);
    case 'cartesia':
      return pick(settings.cartesiaApiKey, settings.cartesiaBaseUrl);
    default:
      return { apiKey: null };
  }
}

/**
 * Key and endpoint for `provider` in this call: the call's credential (its key, and its
 * `baseUrl`/`apiUrl` when it has one), else the server's settings.
 */
export function endpointFor(provider: string, params: PipelineCallParams): ResolvedEndpoint {
  const server = serverEndpoint(provider, params.providers);
  const credential = Object.prototype.hasOwnProperty.call(params.credentials, provider)
    ? params.credentials[provider]
    : undefined;
  const apiKey = nonEmpty(credential?.apiKey ?? undefined) ?? server.apiKey;
  const baseUrl = nonEmpty(credential?.baseUrl) ?? server.baseUrl;
  return { apiKey, ...(baseUrl === undefined ? {} : { baseUrl }) };
}

const providerOf = (config: Readonly<Record<string, unknown>>): string =>
  typeof config['provider'] === 'string' ? config['provider'] : '';

export interface CallProviders {
  model: ModelProvider;
  modelEndpoint: ResolvedEndpoint;
  transcriber: Transcriber;
  transcriberEndpoint: ResolvedEndpoint;
  voice: Voice;
  voiceEndpoint: ResolvedEndpoint;
}

/** Thrown when the assistant names a provider this server has no adapter for. */
export class UnknownProviderError extends Error {
  constructor(
    readonly kind: 'model' | 'transcriber' | 'voice',
    readonly provider: string,
  ) {
    super(`no ${kind} provider named "${provider}"`);
  }
}

/**
 * The call's model, transcriber and voice (transcriber and voice wrapped in their fallbackPlan),
 * with the primary endpoints. Fallback transcribers and voices get their own endpoints.
 */
export function callProviders(
  providers: WorkerProviders,
  params: PipelineCallParams,
  configs: {
    model: Readonly<Record<string, unknown>>;
    transcriber: Readonly<Record<string, unknown>>;
    voice: Readonly<Record<string, unknown>>;
  },
): CallProviders {
  const modelName = providerOf(configs.model);
  const model = providers.models.get(modelName);
  if (model === undefined) {
    throw new UnknownProviderError('model', modelName);
  }
  const modelEndpoint = endpointFor(modelName, params);
  if (modelName === 'custom-llm' && typeof configs.model['url'] === 'string') {
    modelEndpoint.baseUrl = configs.model['url'];
  }
  const transcriberName = providerOf(configs.transcriber);
  const transcriber = providers.transcribers.forConfig(configs.transcriber, {
    credentialsFor: (provider) => endpointFor(provider, params),
  });
  if (transcriber === undefined) {
    throw new UnknownProviderError('transcriber', transcriberName);
  }
  const voiceName = providerOf(configs.voice);
  const voice = voiceFor(providers.voices, configs.voice, (config) =>
    endpointFor(providerOf(config), params),
  );
  if (voice === undefined) {
    throw new UnknownProviderError('voice', voiceName);
  }
  return {
    model,
    modelEndpoint,
    transcriber,
    transcriberEndpoint: endpointFor(transcriberName, params),
    voice,
    voiceEndpoint: endpointFor(voiceName, params),
  };
}
