import type {
  ModelMessage,
  ModelProvider,
  ModelTool,
  ModelToolCall,
} from '../../providers/llm/model-provider.js';
import type { Transcriber } from '../../providers/stt/transcriber.js';
import type { Voice } from '../../providers/tts/voice.js';
import type { ChunkPlanInput } from '../text/chunk-plan.js';
import type { StartSpeakingPlanInput, StopSpeakingPlanInput } from '../plans.js';
import type { PipelineEventSink } from '../events.js';
import type { CallerVadFactory } from '../vad/caller-vad.js';
import type { BackgroundSpeechDenoisingPlan } from './caller-denoiser.js';
import type { CallHookInput, MessagePlanInput } from './idle-triggers.js';

export type { BackgroundSpeechDenoisingPlan } from './caller-denoiser.js';
export type { CallHookInput, MessagePlanInput } from './idle-triggers.js';

export type FirstMessageMode =
  | 'assistant-speaks-first'
  | 'assistant-waits-for-user'
  | 'assistant-speaks-first-with-model-generated-message';

/** The model request without its messages: what the assistant's `model` object resolves to. */
export interface PipelineModelConfig {
  readonly model: string;
  readonly systemPrompt?: string | undefined;
  /**
   * The conversation's start, after the system prompt (the assistant's `model.messages` other
   * than system ones); `{{var}}` in their text is substituted like the prompt's.
   */
  readonly messages?: readonly ModelMessage[] | undefined;
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
  /** The caller's VAD. Default: the energy VAD (createEnergyCallerVad), deciding at once. */
  readonly vad?: CallerVadFactory | undefined;
  /** Denoising of the caller's audio before VAD and transcriber. Default: none. */
  readonly backgroundSpeechDenoisingPlan?: BackgroundSpeechDenoisingPlan | undefined;
  /** Runs the model's tool calls. Without it every call gets the error "no tool runner". */
  readonly runTools?: ToolRunner | undefined;
  /**
   * Tools whose call ends the call (`assistant-ended-call`) once what is queued has played,
   * after endCallMessage if one is set. They are not given to runTools.
   */
  readonly endCallToolNames?: readonly string[] | undefined;
  /** Spoken before the call ends through an end-call tool. */
  readonly endCallMessage?: string | undefined;
  /** The older idle-message fields (api-behaviour 2.4); silenceTimeoutMessage is used too. */
  readonly messagePlan?: MessagePlanInput | undefined;
  /** The assistant's hooks; `customer.speech.timeout` ones are run here, others ignored. */
  readonly hooks?: readonly CallHookInput[] | undefined;
  /**
   * `office` mixes a synthesised office ambience (about −40 dBFS) under every output frame, so
   * audio always flows and tick() returns a full frame. Default `off`: the owner chooses per
   * transport (`office` when the assistant says so; telephony transports may prefer it on, to
   * keep comfort noise on the line).
   */
  readonly backgroundSound?: 'off' | 'office' | undefined;
  /**
   * When true, an interrupted reply enters the history with the model's whole text rather than
   * only the part that was heard. Default false.
   */
  readonly modelOutputInMessagesEnabled?: boolean | undefined;
  /** Random numbers in [0, 1) for choosing among idle messages. Default Math.random. */
  readonly random?: (() => number) | undefined;
  /**
   * The owner's clock, on the timeline of the nowMs it passes (e.g. `performance.now`). With it,
   * decisions triggered between ticks (a late VAD decision, a final transcript) are stamped with
   * the current time rather than the last tick's. Default: the last nowMs given.
   */
  readonly clock?: (() => number) | undefined;
  /**
   * Called (synchronously, from the voice's stream) when the first audio of a message is queued
   * and nothing of it has gone out yet: the owner may tick at once instead of at its next tick,
   * so the first frame does not wait up to a frame period. Later frames keep the owner's pacing.
   */
  readonly onAudioReady?: (() => void) | undefined;
}

/** One tool call's outcome, as the owner's tool runner reports it. */
export interface ToolCallResult {
  readonly toolCallId: string;
  readonly name?: string | undefined;
  /** What the model is told (strings as is, anything else as JSON). */
  readonly result?: unknown;
  /** The call failed: the model is told this instead of a result. */
  readonly error?: string | undefined;
}

/**
 * Runs a reply's tool calls (the owner's webhooks, built-in tools). `signal` aborts when the
 * customer interrupts or the call ends; the results are then ignored.
 */
export type ToolRunner = (
  toolCalls: readonly ModelToolCall[],
  turnId: number,
  signal: AbortSignal,
) => Promise<readonly ToolCallResult[]>;

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
