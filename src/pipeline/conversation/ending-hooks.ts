import { ParlaError } from '../../core/errors.js';
import { checkTexts, type CallHookInput, type IdleAction } from './idle-triggers.js';

/**
 * Why a call may end with something still said: the reasons the pipeline itself decides while
 * the line is up. (A hang-up, a provider failure or the owner's end leave nobody to hear it.)
 */
export const SPEAKABLE_END_REASONS: ReadonlySet<string> = new Set([
  'silence-timed-out',
  'exceeded-max-duration',
  'assistant-ended-call',
  'assistant-said-end-call-phrase',
  'assistant-ended-call-after-message-spoken',
]);

const MAX_FILTER_VALUES = 100;

type EndingAction =
  | { readonly kind: 'say'; readonly texts: readonly string[] }
  | { readonly kind: 'prompt'; readonly prompt: string };

interface EndingHook {
  /** null: every reason. */
  readonly reasons: ReadonlySet<string> | null;
  readonly actions: readonly EndingAction[];
}

/**
 * The assistant's `call.ending` hooks: `{on: 'call.ending', filters?: [{type: 'oneOf', key:
 * 'call.endedReason', oneOf: [...]}], do: [{type: 'say', exact} | {type: 'say', prompt}]}`.
 * `actionsFor(reason)` gives what to say before a call ends for that reason: the `say` actions
 * of every hook whose filters all match (one text picked at random from a list), in order.
 * Other action types are left to the owner (they are not the pipeline's).
 */
export class EndingHooks {
  readonly #hooks: EndingHook[] = [];
  readonly #random: () => number;

  /** Throws ParlaError ERR_VALIDATION naming a malformed `call.ending` hook. */
  constructor(hooks: readonly CallHookInput[] | undefined, random: () => number) {
    this.#random = random;
    (hooks ?? []).forEach((hook, index) => {
      if (typeof hook !== 'object' || hook === null || hook.on !== 'call.ending') {
        return;
      }
      const path = `hooks[${index}]`;
      let reasons: Set<string> | null = null;
      const filters: readonly unknown[] = Array.isArray(hook.filters) ? hook.filters : [];
      filters.forEach((raw, at) => {
        const filter = raw as Record<string, unknown> | null;
        const values = filter?.oneOf;
        if (
          typeof filter !== 'object' ||
          filter === null ||
          filter.type !== 'oneOf' ||
          filter.key !== 'call.endedReason' ||
          !Array.isArray(values) ||
          values.length > MAX_FILTER_VALUES ||
          !values.every((value) => typeof value === 'string')
        ) {
          throw new ParlaError(
            'ERR_VALIDATION',
            `${path}.filters[${at}] must be {type: "oneOf", key: "call.endedReason", oneOf: ` +
              `[at most ${MAX_FILTER_VALUES} strings]}`,
          );
        }
        // Several filters must all match: the reasons are the intersection.
        const next = new Set(values);
        reasons = reasons === null ? next : new Set([...reasons].filter((r) => next.has(r)));
      });
      const actions: EndingAction[] = [];
      const todo: readonly unknown[] = Array.isArray(hook.do) ? hook.do : [];
      todo.forEach((raw, at) => {
        const action = raw as { type?: unknown; exact?: unknown; prompt?: unknown } | null;
        if (typeof action !== 'object' || action === null || action.type !== 'say') {
          return;
        }
        if (typeof action.prompt === 'string' && action.exact === undefined) {
          const prompt = checkTexts(`${path}.do[${at}].prompt`, action.prompt)[0]!;
          actions.push({ kind: 'prompt', prompt });
        } else {
          actions.push({ kind: 'say', texts: checkTexts(`${path}.do[${at}].exact`, action.exact) });
        }
      });
      if (actions.length > 0) {
        this.#hooks.push({ reasons, actions });
      }
    });
  }

  get size(): number {
    return this.#hooks.length;
  }

  /** What to say before ending for `reason` (empty: end at once). */
  actionsFor(reason: string): IdleAction[] {
    if (!SPEAKABLE_END_REASONS.has(reason)) {
      return [];
    }
    const out: IdleAction[] = [];
    for (const hook of this.#hooks) {
      if (hook.reasons !== null && !hook.reasons.has(reason)) {
        continue;
      }
      for (const action of hook.actions) {
        if (action.kind === 'prompt') {
          out.push(action);
        } else {
          const index = Math.floor(this.#random() * action.texts.length);
          out.push({ kind: 'say', text: action.texts[Math.min(action.texts.length - 1, index)]! });
        }
      }
    }
    return out;
  }
}
