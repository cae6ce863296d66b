import type { FormatPlan, RegexOption, Replacement } from './chunk-plan.js';
import { FORMATTERS, type FormatContext } from './formatters.js';

/*
 * `formatPlan` applied to one chunk, deterministically:
 * 1. the custom replacements, in order. Exact ones replace the first occurrence of `key` (every
 *    occurrence with `replaceAllEnabled`), literally. Regex ones replace every match, the way the
 *    platform documents (`string.replace` with the `g` flag, so `$1` works in `value`);
 *    `ignore-case` adds `i`, `multi-line` adds `m`, `whole-word` wraps the pattern in `\b…\b`.
 * 2. markup tags (`<flush />`, `<break …/>`, `</speak>`) are removed: the platform applies "angle
 *    bracket removal" whatever `formattersEnabled` says. "3 < 5" is not a tag and stays.
 * 3. the enabled formatters (formatters.ts), in their fixed order;
 * 4. runs of spaces are collapsed and the chunk is trimmed.
 *
 * Chunks are formatted one by one, so a replacement key or a pattern split across two chunks is
 * not matched (the chunker never splits inside a number, an address or an abbreviation). A
 * disabled plan returns the chunk unchanged. Regexes are compiled once, in the constructor.
 */

interface CompiledReplacement {
  readonly apply: (text: string) => string;
}

const TAG = /<\/?[A-Za-z][\w:-]*(?:\s[^<>]*)?\/?>/g;
const SPACES = /[ \t]{2,}/g;
const SPACE_BEFORE_PUNCTUATION = / +([.,!?;:])(?=\s|$)/g;

function hasOption(options: readonly RegexOption[], type: RegexOption['type']): boolean {
  return options.some((option) => option.type === type && option.enabled);
}

function compile(replacement: Replacement): CompiledReplacement {
  if (replacement.type === 'exact') {
    const { key, value } = replacement;
    if (key.length === 0) {
      return { apply: (text) => text };
    }
    if (replacement.replaceAllEnabled === true) {
      return { apply: (text) => text.split(key).join(value) };
    }
    return {
      apply: (text) => {
        const at = text.indexOf(key);
        return at < 0 ? text : text.slice(0, at) + value + text.slice(at + key.length);
      },
    };
  }
  const options = replacement.options ?? replacement.regexOptions ?? [];
  const flags = `g${hasOption(options, 'ignore-case') ? 'i' : ''}${hasOption(options, 'multi-line') ? 'm' : ''}`;
  const source = hasOption(options, 'whole-word')
    ? `\\b(?:${replacement.regex})\\b`
    : replacement.regex;
  const pattern = new RegExp(source, flags);
  const { value } = replacement;
  return { apply: (text) => text.replace(pattern, value) };
}

export class TextFormatter {
  readonly #enabled: boolean;
  readonly #replacements: readonly CompiledReplacement[];
  readonly #formatters: ReadonlyArray<(text: string, context: FormatContext) => string>;
  readonly #context: FormatContext;

  /** Throws a SyntaxError for a regex that does not compile (resolveChunkPlan reports it first). */
  constructor(plan: FormatPlan) {
    this.#enabled = plan.enabled;
    this.#replacements = plan.replacements.map(compile);
    const enabled = new Set(plan.formattersEnabled);
    this.#formatters = FORMATTERS.filter(([name]) => enabled.has(name)).map(([, run]) => run);
    this.#context = { numberToDigitsCutoff: plan.numberToDigitsCutoff };
  }

  format(chunk: string): string {
    if (!this.#enabled) {
      return chunk;
    }
    let text = chunk;
    for (const replacement of this.#replacements) {
      text = replacement.apply(text);
    }
    text = text.replace(TAG, ' ');
    for (const run of this.#formatters) {
      text = run(text, this.#context);
    }
    return text.replace(SPACES, ' ').replace(SPACE_BEFORE_PUNCTUATION, '$1').trim();
  }
}
