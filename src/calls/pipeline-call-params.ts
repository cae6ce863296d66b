/**
 * What the main thread hands the call worker when it starts a voice-pipeline call: everything the
 * worker needs, structured-cloneable, secrets already unsealed. The worker's handler registered
 * as PIPELINE_CALL_HANDLER builds the providers and the CallPipeline from it.
 */
import type { Config } from '../config/schema.js';

/** Handler name of the voice pipeline in the call worker. */
export const PIPELINE_CALL_HANDLER = 'pipeline';

/** A vendor key and, when a credential points elsewhere, its endpoint. */
export interface VendorEndpoint {
  readonly apiKey: string | null;
  /** A credential's `baseUrl` (OpenAI-compatible) or `apiUrl` (Deepgram). */
  readonly baseUrl?: string | undefined;
}

/** Server-wide provider settings from the config; empty strings mean "the vendor's own". */
export interface ProviderServerSettings {
  readonly openaiBaseUrl: string;
  readonly openaiApiKey: string;
  readonly anthropicBaseUrl: string;
  readonly anthropicApiKey: string;
  readonly deepgramBaseUrl: string;
  readonly deepgramApiKey: string;
  readonly elevenLabsBaseUrl: string;
  readonly elevenLabsApiKey: string;
  readonly cartesiaBaseUrl: string;
  readonly cartesiaApiKey: string;
}

export interface PipelineCallParams {
  readonly callId: string;
  readonly orgId: string;
  /**
   * The assistant as this call runs it: the stored one (assistantId) or the inline one, with
   * `assistantOverrides` merged in. Variables are not substituted yet (the pipeline does it).
   */
  readonly assistant: Readonly<Record<string, unknown>>;
  readonly variableValues: Readonly<Record<string, unknown>>;
  /**
   * Keys and endpoints found on the main thread (assistant credentials, credentialIds, the org's
   * credentials), by provider name (`openai`, `deepgram`, `11labs`, …), for every provider the
   * assistant names, fallbacks included. A provider missing here uses `providers`.
   */
  readonly credentials: Readonly<Record<string, VendorEndpoint>>;
  readonly providers: ProviderServerSettings;
  /**
   * PCM16 mono rate of the audio crossing the call's port, both ways (the transport's rate, any
   * of 8000–48000 Hz; the transport decodes and encodes codecs such as mu-law itself).
   */
  readonly transportSampleRateHz: number;
  readonly vad: 'silero' | 'energy';
  /**
   * The call's phone number (a phone call's), secrets open: the reporting side sends server
   * messages to its `server` when the assistant has none. The worker does not read it.
   */
  readonly phoneNumber?: Readonly<Record<string, unknown>>;
}

/*
 * Over the call port (see src/workers/protocol.ts):
 * - worker → host events: name = a PipelineEvent's `type`, data = the event (src/pipeline/events.ts).
 * - host → worker control messages: the live-call-control messages (`say`, `add-message`,
 *   `control`, `end-call`, …) as validated by the transport, and `{type: 'tool-results', …}`
 *   answering a `tool-calls` event.
 */

/** Server settings with no key and no endpoint override for any vendor (tests, benchmarks). */
export const NO_PROVIDER_DEFAULTS: ProviderServerSettings = Object.freeze({
  openaiBaseUrl: '',
  openaiApiKey: '',
  anthropicBaseUrl: '',
  anthropicApiKey: '',
  deepgramBaseUrl: '',
  deepgramApiKey: '',
  elevenLabsBaseUrl: '',
  elevenLabsApiKey: '',
  cartesiaBaseUrl: '',
  cartesiaApiKey: '',
});

/** The server's own vendor endpoints and keys, from its configuration. */
export function providerSettingsOf(config: Config): ProviderServerSettings {
  return {
    openaiBaseUrl: config.openaiBaseUrl,
    openaiApiKey: config.openaiApiKey,
    anthropicBaseUrl: config.anthropicBaseUrl,
    anthropicApiKey: config.anthropicApiKey,
    deepgramBaseUrl: config.deepgramBaseUrl,
    deepgramApiKey: config.deepgramApiKey,
    elevenLabsBaseUrl: config.elevenLabsBaseUrl,
    elevenLabsApiKey: config.elevenLabsApiKey,
    cartesiaBaseUrl: config.cartesiaBaseUrl,
    cartesiaApiKey: config.cartesiaApiKey,
  };
}
