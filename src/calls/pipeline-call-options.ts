/**
 * The pipeline call's parameters as CallPipeline options: checks the structured-cloned
 * PipelineCallParams a worker receives and maps the stored assistant (model, voice, plans, hooks,
 * messages) onto the pipeline's options, without the providers.
 */
import type {
  CallPipelineOptions,
  FirstMessageMode,
  PipelineModelConfig,
  ToolRunner,
} from '../pipeline/conversation/options.js';
import type { PipelineEventSink } from '../pipeline/events.js';
import type { ModelMessage, ModelTool } from '../providers/llm/model-provider.js';
import type { CallerVadFactory } from '../pipeline/vad/caller-vad.js';
import type { PipelineCallParams } from './pipeline-call-params.js';

export type ControlRecord = Record<string, unknown>;

export const isRecord = (value: unknown): value is ControlRecord =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const recordOr = (value: unknown, fallback: ControlRecord): ControlRecord =>
  isRecord(value) ? value : fallback;
export const stringOr = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;
const numberOr = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;
export const booleanOr = (value: unknown): boolean | undefined =>
  typeof value === 'boolean' ? value : undefined;

/** What the call uses when the assistant names no transcriber, voice or model. */
const DEFAULT_TRANSCRIBER = { provider: 'deepgram' };
/** The voice of an assistant without `voice`. */
export const DEFAULT_VOICE = Object.freeze({ provider: 'openai', voiceId: 'alloy' });
const DEFAULT_MODEL = { provider: 'openai', model: 'gpt-4o-mini' };
const FIRST_MESSAGE_MODES = new Set<string>([
  'assistant-speaks-first',
  'assistant-waits-for-user',
  'assistant-speaks-first-with-model-generated-message',
]);
/** The built-in tool that ends the call (`{type: 'endCall'}`, or endCallFunctionEnabled). */
const END_CALL_TOOL: ModelTool = {
  name: 'endCall',
  description: 'End the call. Use it when the conversation is over.',
  parameters: { type: 'object', properties: {} },
};

/** User and assistant messages of model.messages kept as the conversation's start. */
const MAX_START_MESSAGES = 100;

/**
 * Checks the structured-cloned params (the main thread built them, but a worker trusts no
 * message): throws a TypeError naming the first bad field.
 */
export function parsePipelineCallParams(raw: unknown, sampleRateHz: number): PipelineCallParams {
  if (!isRecord(raw)) {
    throw new TypeError('pipeline call params must be an object');
  }
  for (const field of ['assistant', 'variableValues', 'credentials', 'providers']) {
    if (!isRecord(raw[field])) {
      throw new TypeError(`pipeline call params: ${field} must be an object`);
    }
  }
  const rate = raw.transportSampleRateHz;
  if (
    rate !== sampleRateHz ||
    !Number.isInteger(rate) ||
    sampleRateHz < 8000 ||
    sampleRateHz > 48000
  ) {
    throw new TypeError(
      `pipeline call params: transportSampleRateHz (${String(rate)}) must be the call's rate ` +
        `(${sampleRateHz}), an integer in 8000–48000`,
    );
  }
  if (raw.vad !== 'silero' && raw.vad !== 'energy') {
    throw new TypeError('pipeline call params: vad must be "silero" or "energy"');
  }
  return raw as unknown as PipelineCallParams;
}

/**
 * The assistant's `model` as the pipeline's model config: system prompt (its system messages,
 * else `systemPrompt`), the conversation's start (its user and assistant messages), tools,
 * sampling.
 */
function modelConfigOf(
  model: ControlRecord,
  assistant: ControlRecord,
): { config: PipelineModelConfig; endCallToolNames: string[] } {
  const messages = Array.isArray(model.messages) ? model.messages : [];
  const system = messages
    .filter((m): m is ControlRecord => isRecord(m) && m.role === 'system')
    .map((m) => stringOr(m.content) ?? '')
    .filter((text) => text !== '');
  const systemPrompt = system.length > 0 ? system.join('\n\n') : stringOr(model.systemPrompt);
  const start: ModelMessage[] = [];
  for (const m of messages) {
    if (start.length === MAX_START_MESSAGES) {
      break;
    }
    if (isRecord(m) && (m.role === 'user' || m.role === 'assistant')) {
      const content = stringOr(m.content);
      if (content !== undefined && content !== '') {
        start.push({ role: m.role, content });
      }
    }
  }
  const tools: ModelTool[] = [];
  const endCallToolNames: string[] = [];
  const addEndCall = (): void => {
    if (!endCallToolNames.includes(END_CALL_TOOL.name)) {
      tools.push(END_CALL_TOOL);
      endCallToolNames.push(END_CALL_TOOL.name);
    }
  };
  for (const tool of Array.isArray(model.tools) ? model.tools : []) {
    if (!isRecord(tool)) {
      continue;
    }
    if (tool.type === 'endCall') {
      addEndCall();
      continue;
    }
    const fn = recordOr(tool.function, {});
    const name = stringOr(fn.name);
    if (name !== undefined && name !== '') {
      const description = stringOr(fn.description);
      tools.push({
        name,
        ...(description === undefined ? {} : { description }),
        ...(isRecord(fn.parameters) ? { parameters: fn.parameters } : {}),
      });
    }
  }
  if (assistant.endCallFunctionEnabled === true) {
    addEndCall();
  }
  const temperature = numberOr(model.temperature);
  const maxTokens = numberOr(model.maxTokens);
  return {
    config: {
      model: stringOr(model.model) ?? DEFAULT_MODEL.model,
      apiKey: null,
      ...(systemPrompt === undefined ? {} : { systemPrompt }),
      ...(start.length === 0 ? {} : { messages: start }),
      ...(tools.length === 0 ? {} : { tools }),
      ...(temperature === undefined ? {} : { temperature }),
      ...(maxTokens === undefined ? {} : { maxTokens }),
    },
    endCallToolNames,
  };
}

type BuiltOptions = Omit<
  CallPipelineOptions,
  'model' | 'transcriber' | 'transcriberConfig' | 'voice' | 'voiceConfig'
>;

/** The CallPipeline options the assistant asks for, without the providers. */
export function buildPipelineOptions(
  params: PipelineCallParams,
  call: {
    sampleRateHz: 8000 | 16000;
    vad: CallerVadFactory | undefined;
    runTools: ToolRunner;
    onEvent: PipelineEventSink;
  },
): {
  configs: { model: ControlRecord; transcriber: ControlRecord; voice: ControlRecord };
  options: BuiltOptions;
} {
  const a = params.assistant as ControlRecord;
  const model = recordOr(a.model, DEFAULT_MODEL);
  const voice = recordOr(a.voice, DEFAULT_VOICE);
  const { config: modelConfig, endCallToolNames } = modelConfigOf(model, a);
  const mode = stringOr(a.firstMessageMode);
  const phrases = Array.isArray(a.endCallPhrases)
    ? a.endCallPhrases.filter((p): p is string => typeof p === 'string')
    : undefined;
  const options: BuiltOptions = {
    sampleRateHz: call.sampleRateHz,
    modelConfig,
    onEvent: call.onEvent,
    runTools: call.runTools,
    vad: call.vad,
    variableValues: params.variableValues,
    firstMessage: stringOr(a.firstMessage),
    firstMessageMode:
      mode !== undefined && FIRST_MESSAGE_MODES.has(mode) ? (mode as FirstMessageMode) : undefined,
    firstMessageInterruptionsEnabled: booleanOr(a.firstMessageInterruptionsEnabled),
    startSpeakingPlan: isRecord(a.startSpeakingPlan) ? a.startSpeakingPlan : undefined,
    stopSpeakingPlan: isRecord(a.stopSpeakingPlan) ? a.stopSpeakingPlan : undefined,
    chunkPlan: isRecord(voice.chunkPlan) ? voice.chunkPlan : undefined,
    endCallPhrases: phrases,
    endCallMessage: stringOr(a.endCallMessage),
    endCallToolNames: endCallToolNames.length === 0 ? undefined : endCallToolNames,
    maxDurationSeconds: numberOr(a.maxDurationSeconds),
    silenceTimeoutSeconds: numberOr(a.silenceTimeoutSeconds),
    backgroundSpeechDenoisingPlan: isRecord(a.backgroundSpeechDenoisingPlan)
      ? a.backgroundSpeechDenoisingPlan
      : undefined,
    messagePlan: isRecord(a.messagePlan) ? a.messagePlan : undefined,
    hooks: Array.isArray(a.hooks) ? a.hooks.filter(isRecord) : undefined,
    backgroundSound: a.backgroundSound === 'office' ? 'office' : 'off',
    modelOutputInMessagesEnabled: booleanOr(a.modelOutputInMessagesEnabled),
  } as BuiltOptions;
  return {
    configs: { model, transcriber: recordOr(a.transcriber, DEFAULT_TRANSCRIBER), voice },
    options,
  };
}
