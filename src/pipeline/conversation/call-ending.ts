import type { AssistantSpeaker } from './assistant-speaker.js';
import type { CallTimeouts } from './call-timeouts.js';
import { EndingHooks } from './ending-hooks.js';
import { substituteVariables, type CallPipelineOptions } from './options.js';

/** A `call.ending` message that has not played out by then no longer holds the call open. */
export const ENDING_GRACE_MS = 30_000;

/**
 * How a call the pipeline decides to end (silence, max duration, an end-call tool or phrase)
 * ends: at once, or, when a `call.ending` hook matches the reason, after saying the hook's
 * messages (uninterruptible; what was being said is cut, what was queued is dropped). Once the
 * ending has begun, the next request ends the call; so does `check` after ENDING_GRACE_MS.
 */
export class CallEnding {
  readonly #hooks: EndingHooks;
  readonly #options: CallPipelineOptions;
  readonly #speaker: AssistantSpeaker;
  readonly #end: (reason: string) => void;
  #reason: string | null = null;
  #deadlineMs = 0;

  /** Throws ParlaError ERR_VALIDATION for a malformed `call.ending` hook. */
  constructor(
    options: CallPipelineOptions,
    speaker: AssistantSpeaker,
    end: (reason: string) => void,
  ) {
    this.#options = options;
    this.#hooks = new EndingHooks(options.hooks, options.random ?? Math.random);
    this.#speaker = speaker;
    this.#end = end;
  }

  /** The call is saying its `call.ending` messages. */
  get ending(): boolean {
    return this.#reason !== null;
  }

  /** Ends the call for `reason`, after the matching `call.ending` messages (once). */
  request(reason: string, nowMs: number): void {
    if (this.#reason !== null) {
      this.#end(this.#reason);
      return;
    }
    const values = this.#options.variableValues;
    const utterances = this.#hooks
      .actionsFor(reason)
      .map((action) =>
        action.kind === 'say'
          ? { text: substituteVariables(action.text, values).trim() }
          : { text: null, instruction: action.prompt },
      )
      .filter((u) => u.text !== '');
    if (utterances.length === 0) {
      this.#end(reason);
      return;
    }
    this.#reason = reason;
    this.#deadlineMs = nowMs + ENDING_GRACE_MS;
    const speaker = this.#speaker;
    const active = speaker.active;
    if (active !== null) {
      if (active.audible) {
        speaker.cut(active, nowMs);
      } else {
        speaker.drop(active);
      }
    }
    speaker.clearQueue();
    utterances.forEach((utterance, index) => {
      speaker.speak({
        ...utterance,
        isFirstMessage: false,
        interruptible: false,
        endCallReason: index === utterances.length - 1 ? reason : null,
      });
    });
  }

  /**
   * Once per tick: starts the ending at the maximum duration, and ends the call if its ending
   * messages overran ENDING_GRACE_MS.
   */
  checkMaxDuration(nowMs: number, timeouts: CallTimeouts): void {
    if (this.#reason === null) {
      if (timeouts.exceededMaxDuration(nowMs)) {
        this.request('exceeded-max-duration', nowMs);
      }
    } else if (nowMs >= this.#deadlineMs) {
      this.#end(this.#reason);
    }
  }
}
