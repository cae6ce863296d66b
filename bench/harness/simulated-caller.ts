import type { CallerTransport, ConnectedCall } from './caller-transport.js';
import { HarnessError, type HarnessErrorCode } from './caller-transport.js';
import type { Clock } from './clock.js';
import { framesOf } from './frame-views.js';
import type { TurnMark } from './measure-turns.js';
import type { PacingTimer } from './pacing-timer.js';
import type { LoadedScript, LoadedTurn } from './script.js';
import { SpeechTracker, type SpeechSegment, type SpeechTrackerOptions } from './speech-tracker.js';
import { stageRecord } from './stage-record.js';

export type TrackerSettings = Omit<
  SpeechTrackerOptions,
  'sampleRateHz' | 'onSpeechStart' | 'onSpeechEnd'
>;

export interface SimulatedCallerOptions {
  index: number;
  clock: Clock;
  pacing: PacingTimer;
  transport: CallerTransport;
  script: LoadedScript;
  /** Caller turns to play; the script repeats when it has fewer. */
  turnCount: number;
  tracker?: TrackerSettings;
  /** How long to wait for a reply to start before moving on. Default 15 s. */
  replyTimeoutMs?: number;
  /** How long the assistant may talk before the next turn goes ahead anyway. Default 60 s. */
  maxReplyMs?: number;
  /** Quiet time after the last reply before hanging up. Default 1000 ms. */
  tailMs?: number;
  maxCallMs?: number;
  connectTimeoutMs?: number;
  /** A reply started: the live voice-to-voice estimate (the final figures come from the audio). */
  onReply?: (voiceToVoiceMs: number) => void;
  onTurnSent?: () => void;
}

export interface CallOutcome {
  index: number;
  script: string;
  callId: string | null;
  startedAtMs: number;
  endedAtMs: number;
  marks: TurnMark[];
  /** The caller's speech, found in each turn's own audio. */
  callerSegments: SpeechSegment[];
  assistant: SpeechTracker;
  /** Turns given up because the assistant never spoke when they were due. */
  skippedTurns: number;
  /** Replies that never came within replyTimeoutMs. */
  missingReplies: number;
  messageCounts: Record<string, number>;
  /** Arrival times of `clear` messages. */
  clearsAtMs: number[];
  /** Per-stage timings the server sent (`{type: 'metrics', latency: {…ms}}`), by arrival. */
  stages: { atMs: number; stagesMs: Record<string, number> }[];
  /** Per-stage timings per answered turn that the transport fetched after the call. */
  turnStages: Record<string, number>[];
  error: { code: HarnessErrorCode; message: string } | null;
}

const WAITING = 0;
const SENDING = 1;
const FINAL = 2;
const DONE = 3;
const MAX_CATCH_UP_FRAMES = 10;
const MAX_MESSAGE_TYPES = 50;

/**
 * One scripted caller: streams its turns into a call in real time (frames due on the shared
 * pacing timer, silence between turns, as a microphone would), watches the assistant's audio to
 * time backchannels and interruptions, and keeps both directions' speech for measuring.
 */
export class SimulatedCaller {
  readonly #o: SimulatedCallerOptions;
  readonly #clock: Clock;
  #call: ConnectedCall | null = null;
  /** The caller's speech in the turn being sent. */
  #turnSpeech: SpeechTracker | null = null;
  #rateHz = 16_000;
  #assistant!: SpeechTracker;
  #silence!: Int16Array;
  #frameSamples = 0;
  #startMs = 0;
  #framesSent = 0;
  #phase = WAITING;
  #turn = 0;
  #waitSinceMs = 0;
  #audio: Int16Array | null = null;
  #position = 0;
  #mark: TurnMark | null = null;
  #lastTurnEndMs = Number.NEGATIVE_INFINITY;
  #replyPending = false;
  #replySinceMs = 0;
  #lastAssistantEndMs = Number.NEGATIVE_INFINITY;
  #assistantSinceMs = 0;
  #removeTick: (() => void) | null = null;
  #finish: (() => void) | null = null;
  readonly #outcome: CallOutcome;

  constructor(options: SimulatedCallerOptions) {
    this.#o = options;
    this.#clock = options.clock;
    this.#outcome = {
      index: options.index,
      script: options.script.name,
      callId: null,
      startedAtMs: 0,
      endedAtMs: 0,
      marks: [],
      callerSegments: [],
      assistant: undefined as unknown as SpeechTracker,
      skippedTurns: 0,
      missingReplies: 0,
      messageCounts: {},
      clearsAtMs: [],
      stages: [],
      turnStages: [],
      error: null,
    };
  }

  /** Places the call, plays the script and resolves when the call is over (never rejects). */
  async run(): Promise<CallOutcome> {
    const o = this.#o;
    try {
      this.#call = await this.#withTimeout(
        o.transport.connect({
          onAudio: (samples) => this.#onAudio(samples),
          onMessage: (message) => this.#onMessage(message),
          onClose: (reason) => this.#onClose(reason),
        }),
        o.connectTimeoutMs ?? 10_000,
      );
    } catch (error) {
      this.#fail(error);
      await o.transport.close().catch(() => undefined);
      this.#outcome.assistant = new SpeechTracker({ sampleRateHz: this.#rateHz });
      this.#outcome.startedAtMs = this.#outcome.endedAtMs = this.#clock.nowMs();
      return this.#outcome;
    }
    const rateHz = this.#call.sampleRateHz;
    this.#outcome.callId = this.#call.callId;
    this.#frameSamples = Math.round((o.pacing.frameMs * rateHz) / 1000);
    this.#silence = new Int16Array(this.#frameSamples);
    this.#rateHz = rateHz;
    this.#assistant = new SpeechTracker({
      ...o.tracker,
      sampleRateHz: rateHz,
      onSpeechStart: (startMs) => this.#onAssistantStart(startMs),
      onSpeechEnd: (segment) => {
        this.#lastAssistantEndMs = segment.endMs;
      },
    });
    this.#outcome.assistant = this.#assistant;
    const finished = new Promise<void>((resolve) => {
      this.#finish = resolve;
    });
    this.#removeTick = o.pacing.add((nowMs) => this.#onTick(nowMs));
    // Frames fall due on the shared timer's grid, so each is sent as soon as it is captured.
    this.#startMs = o.pacing.gridMs();
    this.#outcome.startedAtMs = this.#startMs;
    this.#waitSinceMs = this.#startMs;
    if (o.script.assistantSpeaksFirst) {
      this.#replyPending = true;
      this.#replySinceMs = this.#startMs;
    }
    await finished;
    await o.transport.close().catch(() => undefined);
    if (o.transport.turnStages !== undefined) {
      this.#outcome.turnStages = await o.transport.turnStages().catch(() => []);
    }
    return this.#outcome;
  }

  #onTick(nowMs: number): void {
    if (this.#phase === DONE) {
      return;
    }
    const o = this.#o;
    this.#assistant.advanceTo(nowMs);
    const maxCallMs = o.maxCallMs ?? 600_000;
    if (nowMs - this.#startMs > maxCallMs) {
      this.#fail(new HarnessError('ERR_BENCH_TIMEOUT', `call ran past ${maxCallMs} ms`));
      this.#end(nowMs);
      return;
    }
    const frameMs = o.pacing.frameMs;
    let due = Math.floor((nowMs - this.#startMs) / frameMs) - this.#framesSent;
    if (due > MAX_CATCH_UP_FRAMES) {
      // The harness stalled: skip ahead rather than burst (the skipped time is silence).
      this.#framesSent += due - MAX_CATCH_UP_FRAMES;
      due = MAX_CATCH_UP_FRAMES;
    }
    for (; due > 0 && this.#phase !== DONE; due--) {
      const captureMs = this.#startMs + this.#framesSent * frameMs;
      this.#decide(captureMs, nowMs);
      if (this.#phase === DONE) {
        return;
      }
      this.#sendFrame(captureMs);
    }
  }

  /** Moves the script on; `captureMs` is the time of the next frame's first sample. */
  #decide(captureMs: number, nowMs: number): void {
    if (this.#phase === WAITING) {
      const turn = this.#currentTurn();
      if (
        turn.kind === 'speech'
          ? this.#quietFor(turn.pauseBeforeMs, nowMs)
          : this.#replyAt(turn, nowMs)
      ) {
        this.#phase = SENDING;
        this.#audio = turn.samples;
        this.#position = 0;
        this.#turnSpeech = new SpeechTracker({ ...this.#o.tracker, sampleRateHz: this.#rateHz });
        this.#mark = {
          index: this.#turn,
          kind: turn.kind,
          label: turn.audio,
          sentStartMs: captureMs,
          sentEndMs: captureMs,
        };
      } else if (turn.kind !== 'speech' && nowMs - this.#waitSinceMs > this.#replyTimeoutMs()) {
        this.#outcome.skippedTurns++;
        this.#nextTurn(nowMs);
      }
    } else if (this.#phase === FINAL && this.#quietFor(this.#o.tailMs ?? 1000, nowMs)) {
      this.#end(nowMs);
    }
  }

  #sendFrame(captureMs: number): void {
    let frame = this.#silence;
    if (this.#phase === SENDING && this.#audio !== null) {
      frame = framesOf(this.#audio, this.#frameSamples)[this.#position / this.#frameSamples]!;
      this.#position += this.#frameSamples;
    }
    this.#framesSent++;
    this.#turnSpeech?.push(frame, captureMs);
    this.#o.transport.sendAudio(frame);
    if (this.#phase === SENDING && this.#audio !== null && this.#position >= this.#audio.length) {
      const nowMs = this.#clock.nowMs();
      const mark = this.#mark!;
      mark.sentEndMs = captureMs + this.#o.pacing.frameMs;
      this.#outcome.marks.push(mark);
      this.#closeTurnSpeech();
      this.#lastTurnEndMs = mark.sentEndMs;
      if (mark.kind !== 'backchannel') {
        // A reply is owed; one already under way when a speech turn ends counts as it.
        this.#replyPending = !(mark.kind === 'speech' && this.#assistant.speaking);
        this.#replySinceMs = nowMs;
      }
      this.#o.onTurnSent?.();
      this.#nextTurn(nowMs);
    }
  }

  #nextTurn(nowMs: number): void {
    this.#turn++;
    this.#audio = null;
    this.#waitSinceMs = nowMs;
    this.#phase = this.#turn >= this.#o.turnCount ? FINAL : WAITING;
  }

  /** The assistant owes no reply, is quiet, and both sides have been for `pauseMs`. */
  #quietFor(pauseMs: number, nowMs: number): boolean {
    if (this.#replyPending) {
      if (nowMs - this.#replySinceMs <= this.#replyTimeoutMs()) {
        return false;
      }
      this.#outcome.missingReplies++;
      this.#replyPending = false;
    }
    if (this.#assistant.speaking) {
      return nowMs - this.#assistantSinceMs > (this.#o.maxReplyMs ?? 60_000);
    }
    return nowMs >= Math.max(this.#lastAssistantEndMs, this.#lastTurnEndMs) + pauseMs;
  }

  /** A backchannel or interruption is due: `afterReplyOnsetMs` into the assistant's speech. */
  #replyAt(turn: LoadedTurn, nowMs: number): boolean {
    return (
      this.#assistant.speaking && nowMs >= this.#assistant.currentStartMs + turn.afterReplyOnsetMs
    );
  }

  #currentTurn(): LoadedTurn {
    const turns = this.#o.script.turns;
    return turns[this.#turn % turns.length]!;
  }

  #replyTimeoutMs(): number {
    return this.#o.replyTimeoutMs ?? 15_000;
  }

  #onAudio(samples: Int16Array): void {
    if (this.#phase !== DONE && this.#call !== null) {
      this.#assistant.push(samples, this.#clock.nowMs());
    }
  }

  #onAssistantStart(startMs: number): void {
    this.#assistantSinceMs = this.#clock.nowMs();
    if (!this.#replyPending) {
      return;
    }
    this.#replyPending = false;
    const segments = this.#outcome.callerSegments;
    const lastEnd = segments[segments.length - 1]?.endMs;
    const mark = this.#outcome.marks[this.#outcome.marks.length - 1];
    if (lastEnd !== undefined && mark !== undefined && lastEnd >= mark.sentStartMs) {
      this.#o.onReply?.(startMs - lastEnd);
    }
  }

  #onMessage(message: Record<string, unknown>): void {
    const type = typeof message.type === 'string' ? message.type.slice(0, 64) : '(untyped)';
    const counts = this.#outcome.messageCounts;
    if (counts[type] !== undefined || Object.keys(counts).length < MAX_MESSAGE_TYPES) {
      counts[type] = (counts[type] ?? 0) + 1;
    }
    const nowMs = this.#clock.nowMs();
    if (type === 'clear') {
      this.#outcome.clearsAtMs.push(nowMs);
    } else if (type === 'metrics') {
      const stagesMs = stageRecord(message.latency);
      if (stagesMs !== null && this.#outcome.stages.length < 10_000) {
        this.#outcome.stages.push({ atMs: nowMs, stagesMs });
      }
    }
  }

  #onClose(reason: string): void {
    if (this.#phase !== DONE) {
      this.#fail(new HarnessError('ERR_BENCH_CONNECT', `the call ended early: ${reason}`));
      this.#end(this.#clock.nowMs());
    }
  }

  #end(nowMs: number): void {
    if (this.#phase === DONE) {
      return;
    }
    this.#phase = DONE;
    this.#removeTick?.();
    this.#assistant.advanceTo(nowMs);
    this.#assistant.finish();
    this.#closeTurnSpeech();
    this.#outcome.endedAtMs = nowMs;
    this.#finish?.();
  }

  #closeTurnSpeech(): void {
    if (this.#turnSpeech !== null) {
      this.#turnSpeech.finish();
      this.#outcome.callerSegments.push(...this.#turnSpeech.segments);
      this.#turnSpeech = null;
    }
  }

  #fail(error: unknown): void {
    if (this.#outcome.error !== null) {
      return;
    }
    this.#outcome.error =
      error instanceof HarnessError
        ? { code: error.code, message: error.message }
        : {
            code: 'ERR_BENCH_CONNECT',
            message: error instanceof Error ? error.message : String(error),
          };
  }

  async #withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
    let timer: ReturnType<Clock['setTimer']> | null = null;
    const timeout = new Promise<never>((_, reject) => {
      timer = this.#clock.setTimer(
        () => reject(new HarnessError('ERR_BENCH_TIMEOUT', `connect took over ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([promise, timeout]);
    } finally {
      if (timer !== null) {
        this.#clock.clearTimer(timer);
      }
    }
  }
}
