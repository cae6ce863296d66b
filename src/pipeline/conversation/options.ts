import type { ModelProvider, ModelTool } from '../../providers/llm/model-provider.js';
import type { Transcriber } from '../../providers/stt/transcriber.js';
import type { Voice } from '../../providers/tts/voice.js';
import type { ChunkPlanInput } from '../text/chunk-plan.js';
import type { StartSpeakingPlanInput, StopSpeakingPlanInput } from '../plans.js';
import type { PipelineEventSink } from '../events.js';

export type FirstMessageMode =
  | 'assistant-speaks-first'
  | 'assistant-waits-for-user'
  | 'assistant-speaks-first-with-model-generated-message';

/** The model request without its messages: what the assistant's `model` object resolves to. */
export interface PipelineModelConfig {
  readonly model: string;
  readonly systemPrompt?: string | undefined;
  readonly tools?: ModelTool[] | undefined;
  readonly temperature?: number | undefined;
  readonly maxTokens?: number | undefined;
  readonly apiKey: string | null;
  readonly baseUrl?: string | undefined;
}

export interface PipelineVendorConfig {
  /** The assistant's `transcriber` / `voice` object, handed to the adapter as is. */
  readonly config: Readonly<Record<string, unknown>>;
  readonly apiKey: string | null;
  readonly baseUrl?: string | undefined;
}

export interface CallPipelineOptions {
  /** PCM16 mono rate of the call's audio, both ways; one of the resampler's rates. */
  readonly sampleRateHz: 8000 | 16000 | 24000 | 44100 | 48000;
  readonly model: ModelProvider;
  readonly modelConfig: PipelineModelConfig;
  readonly transcriber: Transcriber;
  readonly transcriberConfig: PipelineVendorConfig;
  readonly voice: Voice;
  readonly voiceConfig: PipelineVendorConfig;
  readonly onEvent: PipelineEventSink;
  readonly firstMessage?: string | undefined;
  /** Default `assistant-speaks-first`. */
  readonly firstMessageMode?: FirstMessageMode | undefined;
  readonly firstMessageInterruptionsEnabled?: boolean | undefined;
  readonly variableValues?: Readonly<Record<string, unknown>> | undefined;
  readonly startSpeakingPlan?: StartSpeakingPlanInput | undefined;
  readonly stopSpeakingPlan?: StopSpeakingPlanInput | undefined;
  readonly chunkPlan?: ChunkPlanInput | undefined;
  readonly endCallPhrases?: readonly string[] | undefined;
  /** Default 600 (the platform's default). */
  readonly maxDurationSeconds?: number | undefined;
  /** Default 30 (the platform's default). */
  readonly silenceTimeoutSeconds?: number | undefined;
  /** A `hang` event when no assistant audio follows the end of a turn this long. Default 5000. */
  readonly hangNotificationMs?: number | undefined;
}

export const DEFAULT_MAX_DURATION_SECONDS = 600;
export const DEFAULT_SILENCE_TIMEOUT_SECONDS = 30;
export const DEFAULT_HANG_NOTIFICATION_MS = 5000;

const VARIABLE = /\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}/g;

/**
 * `{{name}}` replaced by `variableValues[name]` (strings as is, other values as JSON). Unknown
 * names are left in place, as the platform does.
 */
export function substituteVariables(
  text: string,
  values: Readonly<Record<string, unknown>> | undefined,
): string {
  if (values === undefined) {
    return text;
  }
  return text.replace(VARIABLE, (whole, name: string) => {
    if (!Object.prototype.hasOwnProperty.call(values, name)) {
      return whole;
    }
    const value = values[name];
    return typeof value === 'string' ? value : (JSON.stringify(value) ?? whole);
  });
}

function normalizePhrase(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Whether the assistant's message contains one of the end-call phrases (case and punctuation ignored). */
export function saysEndCallPhrase(message: string, phrases: readonly string[]): boolean {
  const said = ` ${normalizePhrase(message)} `;
  return phrases.some((phrase) => {
    const normalized = normalizePhrase(phrase);
    return normalized !== '' && said.includes(` ${normalized} `);
  });
}
