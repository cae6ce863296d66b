import { ParlaError } from '../../core/errors.js';
import { secondsToMs } from '../plans.js';

/** The older `messagePlan` (api-behaviour 2.4). */
export interface MessagePlanInput {
  readonly idleMessages?: readonly string[] | undefined;
  /** Default 10 (5–60). */
  readonly idleTimeoutSeconds?: number | undefined;
  /** Default 3 (1–10). */
  readonly idleMessageMaxSpokenCount?: number | undefined;
  /** Default false. */
  readonly idleMessageResetCountOnUserSpeechEnabled?: boolean | undefined;
  /** Spoken before the call ends with `silence-timed-out`. */
  readonly silenceTimeoutMessage?: string | undefined;
}

export interface HookActionInput {
  readonly type: string;
  /** One text, or several of which one is picked at random. */
  readonly exact?: string | readonly string[] | undefined;
  /** An instruction: the model writes what is said. */
  readonly prompt?: string | undefined;
}

/** A hook filter: `{type: 'oneOf', key: 'call.endedReason', oneOf: [...]}`. */
export interface HookFilterInput {
  readonly type: string;
  readonly key: string;
  readonly oneOf: readonly string[];
}

/** An assistant hook; `customer.speech.timeout` and `call.ending` ones matter to the pipeline. */
export interface CallHookInput {
  readonly on: string;
  readonly filters?: readonly HookFilterInput[] | undefined;
  readonly options?:
    | {
        /** Default 7.5 (1–1000). */
        readonly timeoutSeconds?: number | undefined;
        /** Default 3 (1–10). */
        readonly triggerMaxCount?: number | undefined;
        /** Default `never`. */
        readonly triggerResetMode?: 'never' | 'onUserSpeech' | undefined;
      }
    | undefined;
  readonly do?: readonly HookActionInput[] | undefined;
}

/** What an idle trigger has the assistant do. */
export type IdleAction =
  | { readonly kind: 'say'; readonly text: string }
  | { readonly kind: 'prompt'; readonly prompt: string };

type TriggerAction =
  | { readonly kind: 'say'; readonly texts: readonly string[] }
  | { readonly kind: 'prompt'; readonly prompt: string };

interface IdleTrigger {
  readonly timeoutMs: number;
  readonly maxCount: number;
  readonly resetOnUserSpeech: boolean;
  /** Each entry is one action; `say` entries hold the texts to choose from. */
  readonly actions: readonly TriggerAction[];
  count: number;
}

const MAX_TEXT_CHARS = 1000;

function checkRange(path: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new ParlaError(
      'ERR_VALIDATION',
      `${path} must be a number from ${min} to ${max}, got ${String(value)}`,
    );
  }
  return value;
}

/** One text or a non-empty list of texts, each at most MAX_TEXT_CHARS (ERR_VALIDATION otherwise). */
export function checkTexts(path: string, value: unknown): string[] {
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0) {
    throw new ParlaError('ERR_VALIDATION', `${path} must be a string or a non-empty array`);
  }
  return list.map((text: unknown, index) => {
    if (typeof text !== 'string' || text.length > MAX_TEXT_CHARS) {
      throw new ParlaError(
        'ERR_VALIDATION',
        `${path}[${index}] must be a string of at most ${MAX_TEXT_CHARS} characters`,
      );
    }
    return text;
  });
}

/**
 * Idle messages: when nobody has spoken for a trigger's timeout (the clock starts when the
 * assistant stops speaking or the customer stops), the trigger's actions run, at most maxCount
 * times; with reset on user speech the count starts over whenever the customer speaks. Triggers
 * come from `customer.speech.timeout` hooks and from messagePlan.idleMessages (one trigger
 * picking one of the messages at random). Hook actions other than `say` are ignored here.
 */
export class IdleTriggers {
  readonly silenceTimeoutMessage: string;
  readonly #triggers: IdleTrigger[] = [];
  readonly #random: () => number;

  /** Throws ParlaError ERR_VALIDATION naming a field out of range. */
  constructor(
    plan: MessagePlanInput | undefined,
    hooks: readonly CallHookInput[] | undefined,
    random: () => number,
  ) {
    this.#random = random;
    const farewell = plan?.silenceTimeoutMessage;
    this.silenceTimeoutMessage = typeof farewell === 'string' ? farewell : '';
    const idle: unknown = plan?.idleMessages ?? [];
    if (!Array.isArray(idle) || idle.length > 0) {
      this.#triggers.push({
        timeoutMs: secondsToMs(
          checkRange('messagePlan.idleTimeoutSeconds', plan?.idleTimeoutSeconds ?? 10, 5, 60),
        ),
        maxCount: checkRange(
          'messagePlan.idleMessageMaxSpokenCount',
          plan?.idleMessageMaxSpokenCount ?? 3,
          1,
          10,
        ),
        resetOnUserSpeech: plan?.idleMessageResetCountOnUserSpeechEnabled === true,
        actions: [{ kind: 'say', texts: checkTexts('messagePlan.idleMessages', idle) }],
        count: 0,
      });
    }
    (hooks ?? []).forEach((hook, index) => {
      if (typeof hook !== 'object' || hook === null || hook.on !== 'customer.speech.timeout') {
        return;
      }
      const path = `hooks[${index}]`;
      // Stored assistants reach the pipeline unchecked: anything but the documented shape is
      // treated as absent.
      const options = typeof hook.options === 'object' && hook.options !== null ? hook.options : {};
      const mode = options.triggerResetMode ?? 'never';
      if (mode !== 'never' && mode !== 'onUserSpeech') {
        throw new ParlaError(
          'ERR_VALIDATION',
          `${path}.options.triggerResetMode must be never or onUserSpeech`,
        );
      }
      const actions: TriggerAction[] = [];
      const todo: readonly unknown[] = Array.isArray(hook.do) ? hook.do : [];
      todo.forEach((item, at) => {
        const action = item as HookActionInput | null;
        if (typeof action !== 'object' || action === null || action.type !== 'say') {
          return;
        }
        if (typeof action.prompt === 'string' && action.exact === undefined) {
          actions.push({
            kind: 'prompt',
            prompt: checkTexts(`${path}.do[${at}].prompt`, action.prompt)[0]!,
          });
        } else {
          actions.push({ kind: 'say', texts: checkTexts(`${path}.do[${at}].exact`, action.exact) });
        }
      });
      this.#triggers.push({
        timeoutMs: secondsToMs(
          checkRange(`${path}.options.timeoutSeconds`, options.timeoutSeconds ?? 7.5, 1, 1000),
        ),
        maxCount: checkRange(
          `${path}.options.triggerMaxCount`,
          options.triggerMaxCount ?? 3,
          1,
          10,
        ),
        resetOnUserSpeech: mode === 'onUserSpeech',
        actions,
        count: 0,
      });
    });
  }

  /** The customer spoke: triggers with reset on user speech start counting again. */
  onUserSpeech(): void {
    for (const trigger of this.#triggers) {
      if (trigger.resetOnUserSpeech) {
        trigger.count = 0;
      }
    }
  }

  /**
   * The actions due after `silentMs` of silence (the trigger with the shortest timeout that is
   * due and not exhausted), counted as run; null when none is due.
   */
  due(silentMs: number): IdleAction[] | null {
    let chosen: IdleTrigger | null = null;
    for (const trigger of this.#triggers) {
      if (
        trigger.count < trigger.maxCount &&
        silentMs >= trigger.timeoutMs &&
        (chosen === null || trigger.timeoutMs < chosen.timeoutMs)
      ) {
        chosen = trigger;
      }
    }
    if (chosen === null) {
      return null;
    }
    chosen.count += 1;
    return chosen.actions.map((action) => {
      if (action.kind === 'prompt') {
        return action;
      }
      const index = Math.min(
        action.texts.length - 1,
        Math.floor(this.#random() * action.texts.length),
      );
      return { kind: 'say', text: action.texts[Math.max(0, index)]! };
    });
  }
}
