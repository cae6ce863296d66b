/**
 * The voice pipeline as a call-worker handler (PIPELINE_CALL_HANDLER): from PipelineCallParams it
 * builds the call's providers and CallPipeline, cuts the transport's audio (any chunk size, any
 * rate in 8–48 kHz) into 20 ms frames at the pipeline's rate (16 kHz, or 8 kHz for 8 kHz
 * transports), resamples the assistant's frames back to the transport's rate, forwards every
 * PipelineEvent to the host (`ctx.emit(event.type, event)`), routes the host's control messages
 * (say, add-message, control, end-call, tool-results) to the pipeline, and ends the call when the
 * pipeline ends it. A control message the pipeline refuses is reported as a `control-rejected`
 * event; the call goes on.
 *
 * A provider failure ends only this call, with the pipeline's endedReason; no error escapes to
 * the worker thread.
 */
import { FrameChunker } from '../media/framing/frame-chunker.js';
import { Resampler } from '../media/resample/resampler.js';
import { CallPipeline } from '../pipeline/call-pipeline.js';
import { endedReasonForFailure } from '../pipeline/conversation/failure.js';
import type {
  CallPipelineOptions,
  FirstMessageMode,
  PipelineModelConfig,
  ToolCallResult,
  ToolRunner,
} from '../pipeline/conversation/options.js';
import type { PipelineEvent, PipelineEventSink } from '../pipeline/events.js';
import type { ModelTool, ModelToolCall } from '../providers/llm/model-provider.js';
import type { CallerVadFactory } from '../pipeline/vad/caller-vad.js';
import { createSileroCallerVad, SileroScheduler } from '../pipeline/vad/silero-scheduler.js';
import type { CallHandler, CallHandlerContext, CallHandlerFactory } from '../workers/protocol.js';
import { ENDED_REASON_HANDLER_ERROR } from '../workers/protocol.js';
import {
  callProviders,
  UnknownProviderError,
  workerProviders,
  type WorkerProviders,
} from './worker-providers.js';
import type { PipelineCallParams, ProviderServerSettings } from './pipeline-call-params.js';

const FRAME_MS = 20;
/** Caller audio is resampled this many input samples at a time (bounds the scratch buffer). */
const RESAMPLE_BLOCK_SAMPLES = 1024;
/** The assistant's end-call answer to `{type: 'end-call'}` (the main thread ends it the same way). */
export const ENDED_REASON_END_CALL = 'assistant-ended-call';
export const ENDED_REASON_NO_MODEL = 'pipeline-no-available-llm-model';

export interface PipelineCallHandlerDeps {
  /** The thread's provider registries for a call's settings. Default: workerProviders. */
  providers?: (settings: ProviderServerSettings) => WorkerProviders;
  /** The thread's Silero scheduler. Default: SileroScheduler.forThread(). */
  sileroScheduler?: () => SileroScheduler;
  /** Extra pipeline options (tests and benchmarks: timeouts, hang notifications). */
  pipelineOverrides?: Partial<CallPipelineOptions>;
}

type ControlRecord = Record<string, unknown>;

const isRecord = (value: unknown): value is ControlRecord =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const recordOr = (value: unknown, fallback: ControlRecord): ControlRecord =>
  isRecord(value) ? value : fallback;
const stringOr = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;
const numberOr = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;
const booleanOr = (value: unknown): boolean | undefined =>
  typeof value === 'boolean' ? value : undefined;

/** What the call uses when the assistant names no transcriber, voice or model. */
const DEFAULT_TRANSCRIBER = { provider: 'deepgram' };
const DEFAULT_VOICE = { provider: 'openai', voiceId: 'alloy' };
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
/** A tool call the host has not answered this long gets an error result. */
const TOOL_RESULT_TIMEOUT_MS = 20_000;

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

/** The assistant's `model` as the pipeline's model config (system prompt, tools, sampling). */
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

interface PendingTools {
  readonly ids: readonly string[];
  readonly results: Map<string, ToolCallResult>;
  readonly resolve: (results: readonly ToolCallResult[]) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * The pipeline's runTools: each batch of tool calls waits for the host's `tool-results` message
 * (the pipeline has already emitted `tool-calls`); a call not answered within
 * TOOL_RESULT_TIMEOUT_MS gets an error result. Interruption or the end of the call drops the batch.
 */
class ToolResultsBroker {
  readonly #pending = new Set<PendingTools>();

  wait(
    toolCalls: readonly ModelToolCall[],
    _turnId: number,
    signal: AbortSignal,
  ): Promise<readonly ToolCallResult[]> {
    return new Promise((resolve) => {
      const batch: PendingTools = {
        ids: toolCalls.map((call) => call.id),
        results: new Map(),
        resolve,
        timer: setTimeout(
          () => this.#settle(batch, 'no result from the tool server'),
          TOOL_RESULT_TIMEOUT_MS,
        ),
      };
      batch.timer.unref();
      this.#pending.add(batch);
      signal.addEventListener('abort', () => this.#settle(batch, 'cancelled'), { once: true });
    });
  }

  /** A `tool-results` message's `results`: `[{toolCallId, name?, result?, error?}]`. */
  resolve(results: unknown): void {
    if (!Array.isArray(results)) {
      throw new TypeError('tool-results: results must be an array');
    }
    for (const entry of results) {
      if (!isRecord(entry) || typeof entry.toolCallId !== 'string') {
        continue;
      }
      for (const batch of this.#pending) {
        if (batch.ids.includes(entry.toolCallId)) {
          const name = stringOr(entry.name);
          const error = stringOr(entry.error);
          batch.results.set(entry.toolCallId, {
            toolCallId: entry.toolCallId,
            ...(name === undefined ? {} : { name }),
            ...(error === undefined ? { result: entry.result } : { error }),
          });
          if (batch.results.size === batch.ids.length) {
            this.#settle(batch, '');
          }
        }
      }
    }
  }

  cancel(): void {
    for (const batch of [...this.#pending]) {
      this.#settle(batch, 'the call ended');
    }
  }

  #settle(batch: PendingTools, missingError: string): void {
    if (!this.#pending.delete(batch)) {
      return;
    }
    clearTimeout(batch.timer);
    batch.resolve(
      batch.ids.map(
        (id) => batch.results.get(id) ?? { toolCallId: id, error: missingError || 'no result' },
      ),
    );
  }
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function createPipelineCallHandler(deps: PipelineCallHandlerDeps = {}): CallHandlerFactory {
  const providersFor = deps.providers ?? workerProviders;
  const schedulerFor = deps.sileroScheduler ?? (() => SileroScheduler.forThread());
  return (ctx) => new PipelineCall(ctx, providersFor, schedulerFor, deps.pipelineOverrides);
}

class PipelineCall implements CallHandler {
  readonly #ctx: CallHandlerContext;
  readonly #pipeline: CallPipeline | null = null;
  readonly #tools = new ToolResultsBroker();
  readonly #transportRateHz: number;
  readonly #pipelineRateHz: 8000 | 16000;
  readonly #inbound: Resampler | null;
  readonly #outbound: Resampler | null;
  readonly #chunker: FrameChunker;
  readonly #resampledIn: Int16Array;
  readonly #pipelineOut: Int16Array;
  #framesInPush = 0;
  #frameIndex = 0;
  #pushNowMs = 0;
  #lastFramePtsMs = Number.NEGATIVE_INFINITY;
  /** Frames of resampler tail still to send after the assistant's audio stopped. */
  #tailFrames = 0;
  #ended = false;

  constructor(
    ctx: CallHandlerContext,
    providersFor: (settings: ProviderServerSettings) => WorkerProviders,
    schedulerFor: () => SileroScheduler,
    overrides: Partial<CallPipelineOptions> | undefined,
  ) {
    this.#ctx = ctx;
    const params = parsePipelineCallParams(ctx.params, ctx.sampleRateHz);
    this.#transportRateHz = params.transportSampleRateHz;
    this.#pipelineRateHz = this.#transportRateHz === 8000 ? 8000 : 16000;
    this.#inbound = this.#resampler(this.#transportRateHz, this.#pipelineRateHz);
    this.#outbound = this.#resampler(this.#pipelineRateHz, this.#transportRateHz);
    const frameSamples = (this.#pipelineRateHz * FRAME_MS) / 1000;
    this.#pipelineOut = new Int16Array(frameSamples);
    this.#resampledIn = new Int16Array(
      this.#inbound?.maxOutputLength(RESAMPLE_BLOCK_SAMPLES) ?? RESAMPLE_BLOCK_SAMPLES,
    );
    this.#chunker = new FrameChunker(
      { sampleRateHz: this.#pipelineRateHz, frameDurationMs: FRAME_MS },
      (frame) => this.#onCallerFrame(frame.samples),
    );

    let vad: CallerVadFactory | undefined;
    if (params.vad === 'silero') {
      const scheduler = schedulerFor();
      ctx.addTickHook(scheduler.tickHook);
      ctx.setThreadStats('silero', () => scheduler.stats());
      vad = createSileroCallerVad(scheduler, (error) =>
        this.#fail(ENDED_REASON_HANDLER_ERROR, error),
      );
    }
    const { configs, options } = buildPipelineOptions(params, {
      sampleRateHz: this.#pipelineRateHz,
      vad,
      runTools: (toolCalls, turnId, signal) => this.#tools.wait(toolCalls, turnId, signal),
      onEvent: (event) => this.#onEvent(event),
    });
    let providers;
    try {
      providers = callProviders(providersFor(params.providers), params, configs);
    } catch (error) {
      if (error instanceof UnknownProviderError) {
        this.#endEarly(
          error.kind === 'model'
            ? ENDED_REASON_NO_MODEL
            : endedReasonForFailure(error.kind, error.provider, error),
          error,
        );
        return;
      }
      throw error;
    }
    this.#pipeline = new CallPipeline({
      ...options,
      ...overrides,
      model: providers.model,
      modelConfig: { ...options.modelConfig, ...providers.modelEndpoint },
      transcriber: providers.transcriber,
      transcriberConfig: { config: configs.transcriber, ...providers.transcriberEndpoint },
      voice: providers.voice,
      voiceConfig: { config: configs.voice, ...providers.voiceEndpoint },
    });
  }

  #resampler(fromHz: number, toHz: number): Resampler | null {
    return fromHz === toHz ? null : new Resampler({ inputRateHz: fromHz, outputRateHz: toHz });
  }

  onStart(nowMs: number): void {
    this.#pipeline?.start(nowMs);
  }

  onAudio(samples: Int16Array, nowMs: number): void {
    const pipeline = this.#pipeline;
    if (pipeline === null || pipeline.ended) {
      return;
    }
    this.#pushNowMs = nowMs;
    const inbound = this.#inbound;
    if (inbound === null) {
      this.#pushFrames(samples, 0, samples.length);
      return;
    }
    for (let offset = 0; offset < samples.length; offset += RESAMPLE_BLOCK_SAMPLES) {
      const length = Math.min(RESAMPLE_BLOCK_SAMPLES, samples.length - offset);
      const written = inbound.process(samples, this.#resampledIn, offset, length);
      this.#pushFrames(this.#resampledIn, 0, written);
    }
  }

  /** Frames of one push are stamped back from its arrival: the last one ends "now". */
  #pushFrames(samples: Int16Array, offset: number, length: number): void {
    const frameSamples = this.#chunker.frameSamples;
    this.#framesInPush = Math.floor((this.#chunker.pendingSamples + length) / frameSamples);
    this.#frameIndex = 0;
    this.#chunker.pushSamples(samples, offset, length);
  }

  #onCallerFrame(frame: Int16Array): void {
    const framesAfter = this.#framesInPush - 1 - this.#frameIndex;
    this.#frameIndex += 1;
    const nowMs = this.#pushNowMs;
    const stampedMs = nowMs - framesAfter * FRAME_MS;
    const ptsMs = Math.min(nowMs, Math.max(stampedMs, this.#lastFramePtsMs + FRAME_MS));
    this.#lastFramePtsMs = ptsMs;
    this.#pipeline?.pushCallerFrame(frame, ptsMs);
  }

  onTick(nowMs: number, out: Int16Array): number {
    const pipeline = this.#pipeline;
    if (pipeline === null) {
      return 0;
    }
    const outbound = this.#outbound;
    if (outbound === null) {
      return pipeline.tick(nowMs, out);
    }
    const got = pipeline.tick(nowMs, this.#pipelineOut);
    if (got > 0) {
      // One more frame after the audio stops lets the resampler's delay line drain.
      this.#tailFrames = 1;
    } else if (this.#tailFrames > 0) {
      this.#tailFrames -= 1;
    } else {
      return 0;
    }
    return outbound.process(this.#pipelineOut, out, 0, this.#pipelineOut.length);
  }

  onControl(message: unknown): void {
    const pipeline = this.#pipeline;
    if (pipeline === null || !isRecord(message)) {
      return;
    }
    try {
      this.#control(pipeline, message);
    } catch (error) {
      this.#ctx.emit('control-rejected', {
        type: 'control-rejected',
        controlType: typeof message.type === 'string' ? message.type : null,
        message: describeError(error),
      });
    }
  }

  #control(pipeline: CallPipeline, message: ControlRecord): void {
    switch (message.type) {
      case 'end-call':
        pipeline.end(ENDED_REASON_END_CALL);
        return;
      case 'tool-results':
        this.#tools.resolve(message.results);
        return;
      case 'say':
        pipeline.say(typeof message.content === 'string' ? message.content : '', {
          endCallAfterSpoken: booleanOr(message.endCallAfterSpoken),
          interruptionsEnabled: booleanOr(message.interruptionsEnabled),
          interruptAssistantEnabled: booleanOr(message.interruptAssistantEnabled),
        });
        return;
      case 'add-message':
        pipeline.addMessage(message.message, message.triggerResponseEnabled !== false);
        return;
      case 'control':
        this.#liveControl(pipeline, message.control);
        return;
      default:
        throw new Error(`control message "${String(message.type)}" is not supported`);
    }
  }

  #liveControl(pipeline: CallPipeline, action: unknown): void {
    switch (action) {
      case 'mute-assistant':
      case 'unmute-assistant':
        pipeline.setAssistantMuted(action === 'mute-assistant');
        return;
      case 'mute-customer':
      case 'unmute-customer':
        pipeline.setCustomerMuted(action === 'mute-customer');
        return;
      case 'say-first-message':
        pipeline.sayFirstMessage();
        return;
      default:
        throw new Error(`control "${String(action)}" is not supported`);
    }
  }

  onEnd(reason: string): void {
    this.#ended = true;
    this.#tools.cancel();
    this.#pipeline?.end(reason);
  }

  #onEvent(event: PipelineEvent): void {
    this.#ctx.emit(event.type, event);
    if (event.type === 'call-ended' && !this.#ended) {
      this.#ended = true;
      this.#tools.cancel();
      this.#ctx.end(event.endedReason);
    }
  }

  /** Ends the call before the pipeline exists (an unknown provider). */
  #endEarly(reason: string, error: unknown): void {
    this.#ctx.emit('call-ended', {
      type: 'call-ended',
      atMs: 0,
      endedReason: reason,
      message: describeError(error),
    });
    this.#ended = true;
    this.#ctx.end(reason);
  }

  #fail(reason: string, error: unknown): void {
    if (this.#ended) {
      return;
    }
    this.#ctx.emit('handler-error', { type: 'handler-error', message: describeError(error) });
    this.#pipeline?.end(reason);
  }
}
