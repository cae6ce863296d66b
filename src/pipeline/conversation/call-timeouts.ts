import type { PipelineEvent } from '../events.js';
import { secondsToMs } from '../plans.js';
import type { AssistantSpeaker } from './assistant-speaker.js';
import { IdleTriggers } from './idle-triggers.js';
import {
  DEFAULT_HANG_NOTIFICATION_MS,
  DEFAULT_MAX_DURATION_SECONDS,
  DEFAULT_SILENCE_TIMEOUT_SECONDS,
  substituteVariables,
  type CallPipelineOptions,
} from './options.js';

export interface TimeoutContext {
  readonly speaker: AssistantSpeaker;
  /** The customer is speaking, or their turn is about to be answered. */
  customerHasFloor(): boolean;
  emit(event: PipelineEvent): void;
  end(reason: string): void;
}

/**
 * Everything a call decides from the clock alone, once per tick: maxDurationSeconds, the `hang`
 * notice, starting queued utterances, the silence timeout (after silenceTimeoutMessage, if
 * any) and idle messages. Silence is counted from the last customer speech event, assistant
 * audio frame or idle message.
 */
export class CallTimeouts {
  readonly #options: CallPipelineOptions;
  readonly #context: TimeoutContext;
  readonly #idle: IdleTriggers;
  readonly #maxDurationMs: number;
  readonly #silenceTimeoutMs: number;
  readonly #hangMs: number;
  #startMs = 0;
  #lastActivityMs = 0;

  /** Throws ParlaError ERR_VALIDATION for idle-message options out of range. */
  constructor(options: CallPipelineOptions, context: TimeoutContext) {
    this.#options = options;
    this.#context = context;
    this.#maxDurationMs = secondsToMs(options.maxDurationSeconds ?? DEFAULT_MAX_DURATION_SECONDS);
    this.#silenceTimeoutMs = secondsToMs(
      options.silenceTimeoutSeconds ?? DEFAULT_SILENCE_TIMEOUT_SECONDS,
    );
    this.#hangMs = options.hangNotificationMs ?? DEFAULT_HANG_NOTIFICATION_MS;
    this.#idle = new IdleTriggers(
      options.messagePlan,
      options.hooks,
      options.random ?? Math.random,
    );
  }

  start(nowMs: number): void {
    this.#startMs = nowMs;
    this.#lastActivityMs = nowMs;
  }

  /** A customer speech event (start or stop). */
  onCustomerSpeech(nowMs: number, started: boolean): void {
    this.#lastActivityMs = nowMs;
    if (started) {
      this.#idle.onUserSpeech();
    }
  }

  exceededMaxDuration(nowMs: number): boolean {
    return nowMs - this.#startMs >= this.#maxDurationMs;
  }

  check(nowMs: number): void {
    const { speaker } = this.#context;
    const active = speaker.active;
    if (active !== null) {
      if (!active.audible && !active.hangSent && nowMs - active.startedAtMs >= this.#hangMs) {
        active.hangSent = true;
        this.#context.emit({ type: 'hang', atMs: nowMs });
      }
      return;
    }
    if (speaker.queued > 0) {
      speaker.startNext();
      return;
    }
    if (this.#context.customerHasFloor()) {
      return;
    }
    const silentMs = nowMs - Math.max(this.#lastActivityMs, speaker.lastAudioMs);
    const values = this.#options.variableValues;
    if (silentMs >= this.#silenceTimeoutMs) {
      const text = substituteVariables(this.#idle.silenceTimeoutMessage, values).trim();
      if (text === '') {
        this.#context.end('silence-timed-out');
      } else {
        const endCallReason = 'silence-timed-out';
        speaker.speak({ text, isFirstMessage: false, interruptible: false, endCallReason });
      }
      return;
    }
    const actions = this.#idle.due(silentMs);
    if (actions === null) {
      return;
    }
    this.#lastActivityMs = nowMs;
    for (const action of actions) {
      const say = action.kind === 'say';
      speaker.speak({
        text: say ? substituteVariables(action.text, values).trim() : null,
        instruction: say ? undefined : action.prompt,
        isFirstMessage: false,
        interruptible: null,
        endCallReason: null,
      });
    }
  }
}
