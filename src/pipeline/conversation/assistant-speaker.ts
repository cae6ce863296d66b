import { ParlaError } from '../../core/errors.js';
import type { ModelRequest, ModelToolCall } from '../../providers/llm/model-provider.js';
import type { Endpointer } from '../endpointing/endpointer.js';
import type { PipelineEvent } from '../events.js';
import type { BargeInDetector } from '../interruption/barge-in.js';
import type { TurnMetrics } from '../metrics/turn-metrics.js';
import { PlayoutBuffer } from '../playout/playout-buffer.js';
import { resolveChunkPlan } from '../text/chunk-plan.js';
import { startActiveReply, type ActiveReply, type Utterance } from './active-reply.js';
import type { AssistantReply, ReplyFailure, ReplyHost } from './assistant-reply.js';
import type { ConversationHistory } from './history.js';
import { toolMessages } from './live-control.js';
import { saysEndCallPhrase, substituteVariables, type CallPipelineOptions } from './options.js';
import { runToolRound } from './tool-round.js';

/** Utterances that may wait at once; live control beyond this is refused. */
export const MAX_QUEUED_UTTERANCES = 32;

/** What the speaker needs from its call. */
export interface SpeakerContext {
  readonly options: CallPipelineOptions;
  readonly history: ConversationHistory;
  readonly endpointer: Endpointer;
  readonly bargeIn: BargeInDetector;
  readonly metrics: TurnMetrics;
  now(): number;
  emit(event: PipelineEvent): void;
  /** Ends the call with this reason. */
  end(reason: string): void;
  fail(failure: ReplyFailure): void;
}

/**
 * The assistant's side of a call: what is being said (one ActiveReply at a time, from text or
 * the model, with tool rounds), what is queued to be said after it, and the audio of it, frame
 * by frame, into the history as it is heard. Barge-in decisions are the pipeline's; cut() carries
 * them out.
 */
export class AssistantSpeaker {
  readonly playout: PlayoutBuffer;
  readonly #context: SpeakerContext;
  readonly #host: ReplyHost;
  #tickWaiters: (() => void)[] = [];
  #active: ActiveReply | null = null;
  /** Said in order once nothing is being said. */
  #queue: Utterance[] = [];
  #muted = false;
  #turns = 0;
  #lastAudioMs = -Infinity;

  constructor(context: SpeakerContext) {
    const options = context.options;
    this.#context = context;
    this.playout = new PlayoutBuffer(options.sampleRateHz);
    this.#host = {
      callRateHz: options.sampleRateHz,
      playout: this.playout,
      metrics: context.metrics,
      chunkPlan: resolveChunkPlan(options.chunkPlan),
      model: options.model,
      voice: options.voice,
      voiceConfig: options.voiceConfig,
      now: () => context.now(),
      emit: (event) => context.emit(event),
      nextTick: () => new Promise<void>((resolve) => this.#tickWaiters.push(resolve)),
      audioQueued: () => {
        if (this.#active !== null && !this.#active.audible) {
          options.onAudioReady?.();
        }
      },
      toolRound: (calls, roundText, reply) => this.#toolRound(calls, roundText, reply),
    };
  }

  /** The message being said (generated or playing), or null. */
  get active(): ActiveReply | null {
    return this.#active;
  }

  /** Assistant messages that have started playing so far. */
  get turns(): number {
    return this.#turns;
  }

  get queued(): number {
    return this.#queue.length;
  }

  /** Throws ERR_BAD_REQUEST when as many utterances wait as may. */
  refuseWhenFull(): void {
    if (this.#queue.length >= MAX_QUEUED_UTTERANCES) {
      throw new ParlaError('ERR_BAD_REQUEST', 'too many messages are waiting to be said');
    }
  }

  /** Time of the last frame with assistant audio. */
  get lastAudioMs(): number {
    return this.#lastAudioMs;
  }

  setMuted(muted: boolean): void {
    this.#muted = muted;
  }

  /** Lets replies waiting for room in the playout buffer go on (once per media tick). */
  onTick(): void {
    if (this.#tickWaiters.length === 0) {
      return;
    }
    const waiters = this.#tickWaiters;
    this.#tickWaiters = [];
    for (const resolve of waiters) {
      resolve();
    }
  }

  /** Queues an utterance (at the front with `first`) and starts it if nothing is being said. */
  speak(utterance: Utterance, first = false): void {
    if (first) {
      this.#queue.unshift(utterance);
    } else {
      this.#queue.push(utterance);
    }
    if (this.#active === null) {
      this.startNext();
    }
  }

  /** Starts the next queued utterance (nothing must be active). */
  startNext(): void {
    const next = this.#queue.shift();
    if (next === undefined) {
      return;
    }
    const { options } = this.#context;
    const now = this.#context.now();
    this.playout.startMessage();
    const firstInterruptible = options.firstMessageInterruptionsEnabled ?? false;
    this.#active = startActiveReply(
      this.#host,
      {
        turnId: this.#turns + 1,
        source:
          next.text === null
            ? { kind: 'model', request: this.#modelRequest(next.instruction) }
            : { kind: 'text', text: next.text },
        isFirstMessage: next.isFirstMessage,
        interruptible: next.interruptible ?? (!next.isFirstMessage || firstInterruptible),
        notBeforeMs: next.notBeforeMs ?? now,
        startedAtMs: now,
        userText: next.userText ?? '',
        endCallReason: next.endCallReason,
      },
      (failure) => this.#context.fail(failure),
    );
  }

  /** Forgets what waits to be said. */
  clearQueue(): void {
    this.#queue = [];
  }

  /** Abandons a reply nobody has heard yet (the customer went on); nothing enters the history. */
  drop(active: ActiveReply): void {
    active.reply.abort();
    if (this.#active === active) {
      this.#active = null;
    }
  }

  /** Stops a message at once; the history keeps what was heard (or all the model said). */
  cut(active: ActiveReply, atMs: number): void {
    active.reply.abort();
    const heard = this.playout.clear();
    this.#active = null;
    if (active.audible) {
      this.#context.bargeIn.onAssistantSpeechEnd(atMs);
      this.#speech('stopped', this.#context.now());
      this.#addMessage(
        this.#context.options.modelOutputInMessagesEnabled === true
          ? active.reply.roundModelText
          : active.reply.heardRoundText(heard),
      );
    }
  }

  /** The call ended: stops everything, forgets the queue. */
  stop(): void {
    const active = this.#active;
    this.#active = null;
    this.#queue = [];
    if (active !== null) {
      active.reply.abort();
      if (active.audible) {
        this.#speech('stopped', this.#context.now());
      }
    }
    this.playout.clear();
  }

  /**
   * Fills `out` with the next frame of the active message (silence when none, when it must wait,
   * or while muted); returns the samples of audible audio. Finishes the message when played.
   */
  pull(nowMs: number, out: Int16Array): number {
    const active = this.#active;
    const bargeIn = this.#context.bargeIn;
    if (active === null || nowMs < active.notBeforeMs || !bargeIn.canSpeakAt(nowMs)) {
      out.fill(0);
      return 0;
    }
    const got = this.playout.pullFrame(out);
    if (got > 0) {
      this.#lastAudioMs = nowMs;
      if (!active.audible) {
        active.audible = true;
        this.#turns += 1;
        bargeIn.onAssistantSpeechStart(nowMs, active.isFirstMessage, active.interruptible);
        this.#speech('started', nowMs);
        const latency = this.#context.metrics.markAssistantAudioOut(nowMs);
        if (latency !== null) {
          this.#context.emit({ type: 'metrics', atMs: nowMs, latency });
        }
      }
    }
    if (active.generated && this.playout.queuedSamples === 0) {
      this.#finish(active, nowMs);
    }
    if (this.#muted && got > 0) {
      out.fill(0);
      return 0;
    }
    return got;
  }

  #finish(active: ActiveReply, nowMs: number): void {
    this.#active = null;
    if (active.audible) {
      this.#context.bargeIn.onAssistantSpeechEnd(nowMs);
      this.#speech('stopped', nowMs);
    }
    this.#addMessage(active.reply.roundText);
    const phrases = this.#context.options.endCallPhrases ?? [];
    if (active.endCallReason !== null) {
      this.#context.end(active.endCallReason);
    } else if (phrases.length > 0 && saysEndCallPhrase(active.reply.text, phrases)) {
      this.#context.end('assistant-said-end-call-phrase');
    }
  }

  #speech(status: 'started' | 'stopped', atMs: number): void {
    this.#context.emit({
      type: 'speech-update',
      atMs,
      role: 'assistant',
      status,
      turn: this.#turns,
    });
  }

  #transcript(text: string): void {
    if (text !== '') {
      this.#context.emit({
        type: 'transcript',
        atMs: this.#context.now(),
        role: 'assistant',
        transcriptType: 'final',
        transcript: text,
      });
    }
  }

  #conversationUpdate(): void {
    const context = this.#context;
    context.emit({
      type: 'conversation-update',
      atMs: context.now(),
      messages: context.history.messages(),
    });
  }

  #addMessage(text: string): void {
    if (text === '') {
      return;
    }
    this.#context.history.add('assistant', text);
    this.#context.endpointer.setLastAssistantMessage(text);
    this.#transcript(text);
    this.#conversationUpdate();
  }

  #modelRequest(instruction: string | undefined): ModelRequest {
    const request = this.#context.history.request();
    if (instruction !== undefined) {
      const content = substituteVariables(instruction, this.#context.options.variableValues);
      request.messages.push({ role: 'system', content });
    }
    return request;
  }

  async #toolRound(
    calls: readonly ModelToolCall[],
    roundText: string,
    reply: AssistantReply,
  ): Promise<ModelRequest | null> {
    const context = this.#context;
    const { options, history } = context;
    const toolCalls = calls.map((call) => ({ ...call }));
    context.emit({ type: 'tool-calls', atMs: context.now(), turnId: reply.turnId, toolCalls });
    const outcome = await runToolRound(
      calls,
      reply.turnId,
      reply.signal,
      options.runTools,
      options.endCallToolNames ?? [],
    );
    if (outcome === null || reply.aborted) {
      return null;
    }
    history.addMessage({ role: 'assistant', content: roundText || null, toolCalls });
    this.#transcript(roundText);
    for (const message of toolMessages(calls, outcome.results)) {
      history.addMessage(message);
    }
    this.#conversationUpdate();
    if (!outcome.endsCall) {
      return history.request();
    }
    const farewell = substituteVariables(
      options.endCallMessage ?? '',
      options.variableValues,
    ).trim();
    const reason = 'assistant-ended-call';
    if (farewell !== '') {
      const utterance = { text: farewell, isFirstMessage: false, interruptible: false };
      this.#queue.unshift({ ...utterance, endCallReason: reason });
    } else if (this.#active?.reply === reply) {
      this.#active.endCallReason = reason;
    }
    return null;
  }
}
