import type { ModelMessage } from '../providers/llm/model-provider.js';
import type { TranscriberEvent } from '../providers/stt/transcriber.js';
import type { ProviderKind } from '../providers/ended-reason.js';
import { startActiveReply, type ActiveReply } from './conversation/active-reply.js';
import type { ReplyHost, ReplySource } from './conversation/assistant-reply.js';
import { CallerInput } from './conversation/caller-input.js';
import { endedReasonForFailure } from './conversation/failure.js';
import { ConversationHistory } from './conversation/history.js';
import {
  DEFAULT_HANG_NOTIFICATION_MS,
  DEFAULT_MAX_DURATION_SECONDS,
  DEFAULT_SILENCE_TIMEOUT_SECONDS,
  saysEndCallPhrase,
  substituteVariables,
  type CallPipelineOptions,
} from './conversation/options.js';
import { Endpointer } from './endpointing/endpointer.js';
import { compileEndpointingPlan } from './endpointing/endpointing-plan.js';
import type { PipelineEvent } from './events.js';
import { BargeInDetector, type InterruptionDecision } from './interruption/barge-in.js';
import { spokenPrefix } from './interruption/spoken-prefix.js';
import { TurnMetrics } from './metrics/turn-metrics.js';
import {
  resolveStartSpeakingPlan,
  resolveStopSpeakingPlan,
  secondsToMs,
  type ResolvedStartSpeakingPlan,
} from './plans.js';
import { PlayoutBuffer } from './playout/playout-buffer.js';
import { resolveChunkPlan } from './text/chunk-plan.js';
import type { VadEvent } from './vad/vad-state-machine.js';

export type { CallPipelineOptions, FirstMessageMode } from './conversation/options.js';

/**
 * One call's voice pipeline, driven by its owner's media clock: caller frames in
 * (pushCallerFrame), assistant frames out (tick), events to `onEvent`. See docs/architecture.md,
 * "Voice pipeline". Providers are injected; their asynchronous work runs between ticks, and
 * everything that depends on time is decided in pushCallerFrame or tick with the given nowMs.
 */
export class CallPipeline {
  readonly #options: CallPipelineOptions;
  readonly #startPlan: ResolvedStartSpeakingPlan;
  readonly #endpointer: Endpointer;
  readonly #bargeIn: BargeInDetector;
  readonly #playout: PlayoutBuffer;
  readonly #metrics = new TurnMetrics();
  readonly #caller: CallerInput;
  readonly #host: ReplyHost;
  readonly #openController = new AbortController();
  readonly #history: ConversationHistory;
  readonly #maxDurationMs: number;
  readonly #silenceTimeoutMs: number;
  readonly #hangMs: number;
  #tickWaiters: (() => void)[] = [];
  #active: ActiveReply | null = null;
  #nowMs = 0;
  #startMs = 0;
  #lastActivityMs = 0;
  #turns = 0;
  #started = false;
  #ended = false;

  constructor(options: CallPipelineOptions) {
    this.#options = options;
    this.#history = new ConversationHistory(options.modelConfig, options.variableValues);
    this.#startPlan = resolveStartSpeakingPlan(options.startSpeakingPlan);
    this.#endpointer = new Endpointer(compileEndpointingPlan(this.#startPlan), {
      transcriberEndOfTurn: options.transcriber.capabilities.endOfTurn,
    });
    this.#bargeIn = new BargeInDetector(resolveStopSpeakingPlan(options.stopSpeakingPlan), {
      firstMessageInterruptionsEnabled: options.firstMessageInterruptionsEnabled ?? false,
    });
    this.#playout = new PlayoutBuffer(options.sampleRateHz);
    this.#maxDurationMs = secondsToMs(options.maxDurationSeconds ?? DEFAULT_MAX_DURATION_SECONDS);
    this.#silenceTimeoutMs = secondsToMs(
      options.silenceTimeoutSeconds ?? DEFAULT_SILENCE_TIMEOUT_SECONDS,
    );
    this.#hangMs = options.hangNotificationMs ?? DEFAULT_HANG_NOTIFICATION_MS;
    this.#caller = new CallerInput({
      sampleRateHz: options.sampleRateHz,
      transcriber: options.transcriber,
      transcriberConfig: options.transcriberConfig,
      onVadFrame: (isSpeech, startMs, durationMs) => {
        if (this.#active?.audible === true) {
          this.#onInterruption(this.#bargeIn.onVadFrame(isSpeech, startMs, durationMs), false);
        }
      },
      onVadEvent: (event) => this.#onVadEvent(event),
      onTranscriberEvent: (event) => this.#onTranscriberEvent(event),
    });
    const chunkPlan = resolveChunkPlan(options.chunkPlan);
    this.#host = {
      callRateHz: options.sampleRateHz,
      playout: this.#playout,
      metrics: this.#metrics,
      chunkPlan,
      model: options.model,
      voice: options.voice,
      voiceConfig: options.voiceConfig,
      now: () => this.#nowMs,
      emit: (event) => this.#emit(event),
      nextTick: () => new Promise<void>((resolve) => this.#tickWaiters.push(resolve)),
    };
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** The conversation so far (system prompt first), as the model sees it. */
  get messages(): readonly ModelMessage[] {
    return this.#history.messages();
  }

  get metrics(): TurnMetrics {
    return this.#metrics;
  }

  /** Opens the transcriber and, depending on firstMessageMode, starts the first message. */
  start(nowMs: number): void {
    if (this.#started) {
      return;
    }
    this.#started = true;
    this.#nowMs = nowMs;
    this.#startMs = nowMs;
    this.#lastActivityMs = nowMs;
    this.#caller.open(this.#openController.signal).catch((error: unknown) => {
      this.#fail('transcriber', this.#options.transcriber.name, error);
    });
    const mode = this.#options.firstMessageMode ?? 'assistant-speaks-first';
    const firstMessage = substituteVariables(
      this.#options.firstMessage ?? '',
      this.#options.variableValues,
    ).trim();
    if (mode === 'assistant-speaks-first' && firstMessage !== '') {
      this.#startReply({ kind: 'text', text: firstMessage }, true, nowMs, '');
    } else if (mode === 'assistant-speaks-first-with-model-generated-message') {
      this.#startReply({ kind: 'model', request: this.#history.request() }, true, nowMs, '');
    }
  }

  /** One caller frame (PCM16 mono at the call's rate, normally 20 ms) starting at nowMs. */
  pushCallerFrame(samples: Int16Array, nowMs: number): void {
    if (this.#ended || !this.#started) {
      return;
    }
    this.#nowMs = nowMs;
    this.#caller.push(samples, nowMs);
  }

  /**
   * Fills `out` (one frame at the call's rate) with the assistant's next audio, silence where
   * there is none; returns the samples of real audio. Also decides everything that is due.
   */
  tick(nowMs: number, out: Int16Array): number {
    this.#nowMs = nowMs;
    const waiters = this.#tickWaiters;
    this.#tickWaiters = [];
    for (const resolve of waiters) {
      resolve();
    }
    if (this.#ended || !this.#started) {
      out.fill(0);
      return 0;
    }
    if (nowMs - this.#startMs >= this.#maxDurationMs) {
      out.fill(0);
      this.end('exceeded-max-duration');
      return 0;
    }
    this.#pollEndOfTurn(nowMs);
    const active = this.#active;
    if (active?.audible === true) {
      this.#onInterruption(this.#bargeIn.poll(nowMs), false);
    }
    const got = this.#pullAudio(nowMs, out);
    this.#checkTimeouts(nowMs);
    return got;
  }

  /** Ends the call (once): stops every provider and reports `call-ended`. */
  end(reason: string): void {
    if (this.#ended) {
      return;
    }
    this.#ended = true;
    const active = this.#active;
    this.#active = null;
    if (active !== null) {
      active.reply.abort();
      if (active.audible) {
        this.#assistantSpeech('stopped', this.#nowMs);
      }
    }
    this.#playout.clear();
    this.#openController.abort(new Error('call ended'));
    this.#caller.close().catch(() => undefined);
    this.#emit({ type: 'call-ended', atMs: this.#nowMs, endedReason: reason });
  }

  #emit(event: PipelineEvent): void {
    this.#options.onEvent(event);
  }

  #assistantSpeech(status: 'started' | 'stopped', atMs: number): void {
    this.#emit({ type: 'speech-update', atMs, role: 'assistant', status, turn: this.#turns });
  }

  #fail(kind: ProviderKind, provider: string, error: unknown): void {
    this.end(endedReasonForFailure(kind, provider, error));
  }

  #conversationUpdate(): void {
    this.#emit({
      type: 'conversation-update',
      atMs: this.#nowMs,
      messages: this.#history.messages(),
    });
  }

  #startReply(
    source: ReplySource,
    isFirstMessage: boolean,
    notBeforeMs: number,
    userText: string,
  ): void {
    this.#playout.startMessage();
    const spec = {
      turnId: this.#turns + 1,
      source,
      isFirstMessage,
      notBeforeMs,
      startedAtMs: this.#nowMs,
      userText,
    };
    this.#active = startActiveReply(this.#host, spec, (failure) => {
      const provider =
        failure.kind === 'model' ? this.#options.model.name : this.#options.voice.name;
      this.#fail(failure.kind, provider, failure.error);
    });
  }

  #onVadEvent(event: VadEvent): void {
    this.#lastActivityMs = this.#nowMs;
    const status = event.type === 'speech-start' ? 'started' : 'stopped';
    this.#emit({
      type: 'speech-update',
      atMs: this.#nowMs,
      role: 'user',
      status,
      turn: this.#turns,
    });
    if (event.type === 'speech-start') {
      this.#endpointer.onSpeechStart(event.atMs);
      if (this.#active === null) {
        this.#metrics.markCallerSpeechResumed();
      } else if (this.#active.audible) {
        this.#onInterruption(this.#bargeIn.onSpeechStart(event.decidedAtMs), false);
      }
    } else {
      this.#endpointer.onSpeechStop(event.atMs);
      this.#bargeIn.onSpeechStop(event.atMs);
      if (this.#active === null) {
        this.#metrics.markCallerAudioEnd(event.atMs);
      }
    }
  }

  #onTranscriberEvent(event: TranscriberEvent): void {
    if (this.#ended) {
      return;
    }
    if (event.type === 'error') {
      this.#fail('transcriber', this.#options.transcriber.name, event.error);
      return;
    }
    if (event.type !== 'transcript') {
      return;
    }
    const now = this.#nowMs;
    if (event.text.trim() !== '') {
      this.#emit({
        type: 'transcript',
        atMs: now,
        role: 'user',
        transcriptType: event.isFinal ? 'final' : 'partial',
        transcript: event.text,
      });
    }
    if (event.isFinal) {
      this.#metrics.markTranscriptFinal(now);
    }
    if (this.#active?.audible === true) {
      // While the assistant speaks, the customer's words only count towards interrupting it.
      const decision = this.#bargeIn.onTranscript(event.text, event.isFinal, now);
      this.#onInterruption(decision, event.isFinal);
      return;
    }
    this.#endpointer.onTranscript(event.text, event.isFinal, now);
    if (event.speechFinal) {
      this.#endpointer.onTranscriberEndOfTurn(now);
    }
  }

  #onInterruption(decision: InterruptionDecision | null, isFinal: boolean): void {
    const active = this.#active;
    if (decision === null || active === null || this.#ended) {
      return;
    }
    active.reply.abort();
    const heard = this.#playout.clear();
    this.#active = null;
    this.#bargeIn.onAssistantSpeechEnd(decision.atMs);
    this.#emit({ type: 'user-interrupted', atMs: this.#nowMs, turnId: active.reply.turnId });
    this.#assistantSpeech('stopped', this.#nowMs);
    this.#addAssistantMessage(spokenPrefix(active.reply.text, heard));
    this.#endpointer.clearTurn();
    if (this.#caller.inSpeech) {
      this.#endpointer.onSpeechStart(this.#nowMs);
    }
    if (decision.transcript !== '') {
      this.#endpointer.onTranscript(decision.transcript, isFinal, this.#nowMs);
    }
  }

  #addAssistantMessage(text: string): void {
    if (text === '') {
      return;
    }
    this.#history.add('assistant', text);
    this.#endpointer.setLastAssistantMessage(text);
    this.#emit({
      type: 'transcript',
      atMs: this.#nowMs,
      role: 'assistant',
      transcriptType: 'final',
      transcript: text,
    });
    this.#conversationUpdate();
  }

  #pollEndOfTurn(nowMs: number): void {
    const decision = this.#endpointer.poll(nowMs);
    if (decision === null || decision.transcript === '') {
      return;
    }
    let userText = decision.transcript;
    const previous = this.#active;
    if (previous !== null) {
      if (previous.audible) {
        return;
      }
      // The customer went on before the reply was heard: answer everything they said instead.
      previous.reply.abort();
      if (previous.userText !== '' && this.#history.takeBackUser(previous.userText)) {
        userText = `${previous.userText} ${userText}`;
      }
      this.#active = null;
    }
    this.#metrics.markEndOfTurn(decision.endOfTurnAtMs);
    this.#history.add('user', userText);
    this.#conversationUpdate();
    const notBeforeMs = decision.endOfTurnAtMs + secondsToMs(this.#startPlan.waitSeconds);
    this.#startReply(
      { kind: 'model', request: this.#history.request() },
      false,
      notBeforeMs,
      userText,
    );
  }

  #pullAudio(nowMs: number, out: Int16Array): number {
    const active = this.#active;
    if (active === null || nowMs < active.notBeforeMs || !this.#bargeIn.canSpeakAt(nowMs)) {
      out.fill(0);
      return 0;
    }
    const got = this.#playout.pullFrame(out);
    if (got > 0) {
      this.#lastActivityMs = nowMs;
      if (!active.audible) {
        active.audible = true;
        this.#turns += 1;
        this.#bargeIn.onAssistantSpeechStart(nowMs, active.isFirstMessage);
        this.#assistantSpeech('started', nowMs);
        const latency = this.#metrics.markAssistantAudioOut(nowMs);
        if (latency !== null) {
          this.#emit({ type: 'metrics', atMs: nowMs, latency });
        }
      }
    }
    if (active.generated && this.#playout.queuedSamples === 0) {
      this.#finishReply(active, nowMs);
    }
    return got;
  }

  #finishReply(active: ActiveReply, nowMs: number): void {
    this.#active = null;
    if (active.audible) {
      this.#bargeIn.onAssistantSpeechEnd(nowMs);
      this.#assistantSpeech('stopped', nowMs);
    }
    const text = active.reply.text;
    this.#addAssistantMessage(text);
    const phrases = this.#options.endCallPhrases ?? [];
    if (phrases.length > 0 && saysEndCallPhrase(text, phrases)) {
      this.end('assistant-said-end-call-phrase');
    }
  }

  #checkTimeouts(nowMs: number): void {
    const active = this.#active;
    if (active !== null) {
      if (!active.audible && !active.hangSent && nowMs - active.startedAtMs >= this.#hangMs) {
        active.hangSent = true;
        this.#emit({ type: 'hang', atMs: nowMs });
      }
      return;
    }
    if (!this.#caller.inSpeech && nowMs - this.#lastActivityMs >= this.#silenceTimeoutMs) {
      this.end('silence-timed-out');
    }
  }
}
