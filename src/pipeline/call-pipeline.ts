import type { ModelMessage } from '../providers/llm/model-provider.js';
import type { TranscriberEvent } from '../providers/stt/transcriber.js';
import type { ProviderKind } from '../providers/ended-reason.js';
import { AssistantSpeaker } from './conversation/assistant-speaker.js';
import { CallEnding } from './conversation/call-ending.js';
import { CallTimeouts } from './conversation/call-timeouts.js';
import { CallerInput } from './conversation/caller-input.js';
import { endedReasonForFailure } from './conversation/failure.js';
import { ConversationHistory } from './conversation/history.js';
import { checkSayContent, toModelMessage, type SayOptions } from './conversation/live-control.js';
import { substituteVariables, type CallPipelineOptions } from './conversation/options.js';
import { answerTurn, MODEL_REPLY, type TurnAnswerContext } from './conversation/turn-answer.js';
import { Endpointer } from './endpointing/endpointer.js';
import { compileEndpointingPlan } from './endpointing/endpointing-plan.js';
import type { PipelineEvent } from './events.js';
import { BargeInDetector, type InterruptionDecision } from './interruption/barge-in.js';
import { TurnMetrics } from './metrics/turn-metrics.js';
import {
  resolveStartSpeakingPlan,
  resolveStopSpeakingPlan,
  secondsToMs,
  type ResolvedStartSpeakingPlan,
} from './plans.js';
import { OfficeAmbience } from './playout/office-ambience.js';
import type { VadEvent } from './vad/vad-state-machine.js';

export type {
  BackgroundSpeechDenoisingPlan,
  CallHookInput,
  CallPipelineOptions,
  FirstMessageMode,
  MessagePlanInput,
  ToolCallResult,
  ToolRunner,
} from './conversation/options.js';
export type { AddedMessage, SayOptions } from './conversation/live-control.js';

/**
 * One call's voice pipeline, driven by its owner's media clock: caller frames in
 * (pushCallerFrame), assistant frames out (tick), events to `onEvent`, live call control (say,
 * addMessage, mutes) from the transport. See docs/pipeline.md. Providers are injected; their
 * asynchronous work runs between ticks, and everything that depends on time is decided in
 * pushCallerFrame or tick with the given nowMs.
 */
export class CallPipeline {
  readonly #options: CallPipelineOptions;
  readonly #startPlan: ResolvedStartSpeakingPlan;
  readonly #endpointer: Endpointer;
  readonly #bargeIn: BargeInDetector;
  readonly #metrics = new TurnMetrics();
  readonly #caller: CallerInput;
  readonly #speaker: AssistantSpeaker;
  readonly #openController = new AbortController();
  readonly #history: ConversationHistory;
  readonly #timeouts: CallTimeouts;
  readonly #ending: CallEnding;
  readonly #turnAnswer: TurnAnswerContext;
  readonly #ambience: OfficeAmbience | null;
  #nowMs = 0;
  #started = false;
  #ended = false;

  /** Throws (ParlaError ERR_VALIDATION or RangeError) when an option is out of range. */
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
    this.#ambience =
      options.backgroundSound === 'office' ? new OfficeAmbience(options.sampleRateHz) : null;
    this.#speaker = new AssistantSpeaker({
      options,
      history: this.#history,
      endpointer: this.#endpointer,
      bargeIn: this.#bargeIn,
      metrics: this.#metrics,
      now: () => this.#catchUpClock(),
      emit: (event) => this.#emit(event),
      end: (reason) => this.#ending.request(reason, this.#nowMs),
      fail: (failure) => {
        const provider = failure.kind === 'model' ? options.model.name : options.voice.name;
        this.#fail(failure.kind, provider, failure.error);
      },
    });
    this.#timeouts = new CallTimeouts(options, {
      speaker: this.#speaker,
      customerHasFloor: () =>
        this.#caller.inSpeech || this.#endpointer.pendingEndOfTurnAtMs !== null,
      emit: (event) => this.#emit(event),
      end: (reason) => this.#ending.request(reason, this.#nowMs),
    });
    this.#ending = new CallEnding(options, this.#speaker, (reason) => this.end(reason));
    this.#turnAnswer = {
      speaker: this.#speaker,
      history: this.#history,
      metrics: this.#metrics,
      waitMs: secondsToMs(this.#startPlan.waitSeconds),
      conversationUpdate: () => this.#conversationUpdate(),
    };
    // Last: the VAD it creates may hold resources (a batched scheduler's slot) until close().
    this.#caller = new CallerInput({
      sampleRateHz: options.sampleRateHz,
      transcriber: options.transcriber,
      transcriberConfig: options.transcriberConfig,
      vad: options.vad,
      denoisingPlan: options.backgroundSpeechDenoisingPlan,
      now: () => this.#nowMs,
      onVadFrame: (isSpeech, startMs, durationMs) => {
        if (this.#speaker.active?.audible === true) {
          this.#onInterruption(this.#bargeIn.onVadFrame(isSpeech, startMs, durationMs), false);
        }
      },
      onVadEvent: (event) => this.#onVadEvent(event),
      onTranscriberEvent: (event) => this.#onTranscriberEvent(event),
    });
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
    this.#timeouts.start(nowMs);
    this.#caller.open(this.#openController.signal).catch((error: unknown) => {
      this.#fail('transcriber', this.#options.transcriber.name, error);
    });
    const mode = this.#options.firstMessageMode ?? 'assistant-speaks-first';
    if (mode === 'assistant-speaks-first') {
      this.sayFirstMessage();
    } else if (mode === 'assistant-speaks-first-with-model-generated-message') {
      this.#speaker.speak({ ...MODEL_REPLY, isFirstMessage: true });
    }
  }

  /**
   * One caller frame (PCM16 mono at the call's rate; 10 or 20 ms, as denoising requires)
   * starting at nowMs.
   */
  pushCallerFrame(samples: Int16Array, nowMs: number): void {
    if (this.#ended || !this.#started) {
      return;
    }
    this.#nowMs = nowMs;
    this.#caller.push(samples, nowMs);
  }

  /**
   * Fills `out` (one frame at the call's rate) with the assistant's next audio, silence where
   * there is none, with the background sound mixed in; returns the samples of real audio (all
   * of them with a background sound). Also decides everything that is due.
   */
  tick(nowMs: number, out: Int16Array): number {
    this.#nowMs = nowMs;
    this.#speaker.onTick();
    if (this.#ended || !this.#started) {
      out.fill(0);
      return 0;
    }
    this.#ending.checkMaxDuration(nowMs, this.#timeouts);
    if (this.#ended) {
      out.fill(0);
      return 0;
    }
    this.#pollEndOfTurn(nowMs);
    if (this.#speaker.active?.audible === true) {
      this.#onInterruption(this.#bargeIn.poll(nowMs), false);
    }
    let got = this.#speaker.pull(nowMs, out);
    if (!this.#ended) {
      this.#timeouts.check(nowMs);
    }
    if (this.#ambience !== null && !this.#ended) {
      this.#ambience.mixInto(out);
      got = out.length;
    }
    return got;
  }

  /**
   * Live `say`: speaks `content` after what is being said, or at once with
   * interruptAssistantEnabled (the current message is cut where it was heard). Throws
   * ERR_VALIDATION for empty or oversized content, ERR_BAD_REQUEST when 32 messages wait.
   */
  say(content: string, options: SayOptions = {}): void {
    const text = substituteVariables(checkSayContent(content), this.#options.variableValues);
    if (this.#ended || !this.#started) {
      return;
    }
    this.#speaker.refuseWhenFull();
    const active = this.#speaker.active;
    if (options.interruptAssistantEnabled === true && active !== null) {
      this.#speaker.cut(active, this.#nowMs);
    }
    this.#speaker.speak({
      text: text.trim(),
      isFirstMessage: false,
      interruptible: options.interruptionsEnabled ?? false,
      endCallReason:
        options.endCallAfterSpoken === true ? 'assistant-ended-call-after-message-spoken' : null,
    });
  }

  /**
   * Live `add-message`: adds `message` ({role, content}; roles system, user, assistant, tool,
   * function) to the history and, unless triggerResponseEnabled is false, has the model reply
   * once nothing else is being said. Throws ERR_VALIDATION for a malformed message,
   * ERR_BAD_REQUEST when a reply is asked for and 32 messages wait.
   */
  addMessage(message: unknown, triggerResponseEnabled = true): void {
    const added = toModelMessage(message);
    if (this.#ended) {
      return;
    }
    if (triggerResponseEnabled) {
      this.#speaker.refuseWhenFull();
    }
    this.#history.addMessage(added);
    if (added.role === 'assistant' && added.content !== null) {
      this.#endpointer.setLastAssistantMessage(added.content);
    }
    this.#conversationUpdate();
    if (triggerResponseEnabled && this.#started) {
      this.#speaker.speak(MODEL_REPLY);
    }
  }

  /**
   * Muted, the assistant's audio goes out as silence; playout goes on regardless (a message
   * plays to its end unheard and counts as said), and the background sound stays.
   */
  setAssistantMuted(muted: boolean): void {
    this.#speaker.setMuted(muted);
  }

  /** Muted, caller audio reaches neither VAD nor transcriber (speech in progress ends). */
  setCustomerMuted(muted: boolean): void {
    this.#caller.setMuted(muted);
  }

  /** Says firstMessage (with variables; nothing when empty) as the first message. */
  sayFirstMessage(): void {
    const text = substituteVariables(
      this.#options.firstMessage ?? '',
      this.#options.variableValues,
    ).trim();
    if (text !== '' && this.#started && !this.#ended) {
      this.#speaker.speak({ text, isFirstMessage: true, interruptible: null, endCallReason: null });
    }
  }

  /** Ends the call (once): stops every provider and reports `call-ended`. */
  end(reason: string): void {
    if (this.#ended) {
      return;
    }
    this.#ended = true;
    this.#speaker.stop();
    this.#openController.abort(new Error('call ended'));
    this.#caller.close().catch(() => undefined);
    this.#emit({ type: 'call-ended', atMs: this.#nowMs, endedReason: reason });
  }

  #emit(event: PipelineEvent): void {
    this.#options.onEvent(event);
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

  /** Between ticks: moves the pipeline's time on to the owner's clock, if it has one. */
  #catchUpClock(): number {
    const clock = this.#options.clock;
    this.#nowMs = clock === undefined ? this.#nowMs : Math.max(this.#nowMs, clock());
    return this.#nowMs;
  }

  #onVadEvent(event: VadEvent): void {
    this.#catchUpClock();
    this.#timeouts.onCustomerSpeech(this.#nowMs, event.type === 'speech-start');
    const status = event.type === 'speech-start' ? 'started' : 'stopped';
    this.#emit({
      type: 'speech-update',
      atMs: this.#nowMs,
      role: 'user',
      status,
      turn: this.#speaker.turns,
    });
    const active = this.#speaker.active;
    if (event.type === 'speech-start') {
      this.#endpointer.onSpeechStart(event.atMs);
      if (active === null) {
        this.#metrics.markCallerSpeechResumed();
      } else if (active.audible) {
        this.#onInterruption(this.#bargeIn.onSpeechStart(event.decidedAtMs), false);
      }
    } else {
      this.#endpointer.onSpeechStop(event.atMs);
      this.#bargeIn.onSpeechStop(event.atMs);
      if (active === null) {
        this.#metrics.markCallerAudioEnd(event.atMs);
        this.#metrics.markSpeechStopDecided(this.#nowMs);
      }
      // With no wait left, the end of turn is decided now rather than at the next tick.
      this.#pollEndOfTurn(this.#nowMs);
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
    this.#catchUpClock();
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
    if (this.#speaker.active?.audible === true) {
      // While the assistant speaks, the customer's words only count towards interrupting it.
      const decision = this.#bargeIn.onTranscript(event.text, event.isFinal, now);
      this.#onInterruption(decision, event.isFinal);
      return;
    }
    this.#endpointer.onTranscript(event.text, event.isFinal, now);
    if (event.speechFinal) {
      this.#endpointer.onTranscriberEndOfTurn(now);
    }
    this.#pollEndOfTurn(this.#nowMs);
  }

  #onInterruption(decision: InterruptionDecision | null, isFinal: boolean): void {
    const active = this.#speaker.active;
    if (decision === null || active === null || this.#ended) {
      return;
    }
    this.#emit({ type: 'user-interrupted', atMs: this.#nowMs, turnId: active.reply.turnId });
    this.#speaker.cut(active, decision.atMs);
    this.#endpointer.clearTurn();
    if (this.#caller.inSpeech) {
      this.#endpointer.onSpeechStart(this.#nowMs);
    }
    if (decision.transcript !== '') {
      this.#endpointer.onTranscript(decision.transcript, isFinal, this.#nowMs);
    }
  }

  /** In tick, and between ticks when a VAD decision or a transcript makes it due at once. */
  #pollEndOfTurn(nowMs: number): void {
    const decision = this.#started && !this.#ended ? this.#endpointer.poll(nowMs) : null;
    if (decision !== null && decision.transcript !== '') {
      answerTurn(this.#turnAnswer, decision);
    }
  }
}
