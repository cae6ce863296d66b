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
import { performance } from 'node:perf_hooks';
import { FrameChunker } from '../media/framing/frame-chunker.js';
import { Resampler } from '../media/resample/resampler.js';
import { CallPipeline } from '../pipeline/call-pipeline.js';
import { endedReasonForFailure } from '../pipeline/conversation/failure.js';
import type { CallPipelineOptions } from '../pipeline/conversation/options.js';
import type { PipelineEvent } from '../pipeline/events.js';
import type { CallerVadFactory } from '../pipeline/vad/caller-vad.js';
import { createSileroCallerVad, SileroScheduler } from '../pipeline/vad/silero-scheduler.js';
import type { CallHandler, CallHandlerContext, CallHandlerFactory } from '../workers/protocol.js';
import { ENDED_REASON_HANDLER_ERROR } from '../workers/protocol.js';
import type { ProviderServerSettings } from './pipeline-call-params.js';
import {
  booleanOr,
  buildPipelineOptions,
  isRecord,
  parsePipelineCallParams,
  type ControlRecord,
} from './pipeline-call-options.js';
import { ToolResultsBroker } from './tool-results-broker.js';
import {
  callProviders,
  UnknownProviderError,
  workerProviders,
  type WorkerProviders,
} from './worker-providers.js';

export { buildPipelineOptions, parsePipelineCallParams } from './pipeline-call-options.js';

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
  #tickQueued = false;

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
      ctx.addShutdownHook(scheduler.releaseHook);
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
    // The worker's clock and the frames' stamps are both performance.now().
    const clock = (): number => performance.now();
    const onAudioReady = (): void => this.#tickSoon();
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
      clock,
      onAudioReady,
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
    // A frame's stamp is its start: the last frame of the push ends at its arrival.
    const stampedMs = nowMs - (framesAfter + 1) * FRAME_MS;
    const ptsMs = Math.min(nowMs - FRAME_MS, Math.max(stampedMs, this.#lastFramePtsMs + FRAME_MS));
    this.#lastFramePtsMs = ptsMs;
    this.#pipeline?.pushCallerFrame(frame, ptsMs);
  }

  /**
   * The first audio of a reply is queued: the call ticks at once (after the voice's stream has
   * returned to the event loop's microtasks) rather than at the next clock tick.
   */
  #tickSoon(): void {
    if (this.#tickQueued) {
      return;
    }
    this.#tickQueued = true;
    queueMicrotask(() => {
      this.#tickQueued = false;
      if (!this.#ended) {
        this.#ctx.tickNow();
      }
    });
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
