import { ParlaError } from '../../core/errors.js';
import { FORMATTER_NAMES, PUNCTUATION_BOUNDARIES } from '../../core/assistant-vocabulary.js';

export { FORMATTER_NAMES, PUNCTUATION_BOUNDARIES };

/*
 * `voice.chunkPlan` and its `formatPlan` as the text pipeline sees them: plain types mirroring the
 * control plane's request schema, and a resolver that fills the platform's documented defaults
 * (shared reference "API behaviour", section 2.4; the server SDK's `ChunkPlan`/`FormatPlan` docs).
 */

export type PunctuationBoundary = (typeof PUNCTUATION_BOUNDARIES)[number];

/**
 * The platform picks the default per voice provider and does not publish it. Parla uses every
 * allowed boundary except the pipes, which appear in tables more often than in prose.
 */
export const DEFAULT_PUNCTUATION_BOUNDARIES: readonly PunctuationBoundary[] =
  PUNCTUATION_BOUNDARIES.filter((p) => p !== '|' && p !== '||');

export type FormatterName = (typeof FORMATTER_NAMES)[number];

export type RegexOptionType = 'ignore-case' | 'whole-word' | 'multi-line';

export interface RegexOption {
  readonly type: RegexOptionType;
  readonly enabled: boolean;
}

export interface ExactReplacement {
  readonly type: 'exact';
  readonly key: string;
  readonly value: string;
  /** Default false: only the first occurrence in a chunk is replaced. */
  readonly replaceAllEnabled?: boolean | undefined;
}

export interface RegexReplacement {
  readonly type: 'regex';
  readonly regex: string;
  readonly value: string;
  /** The platform's field name. */
  readonly options?: readonly RegexOption[] | undefined;
  /** Accepted as an alias of `options` (some docs spell it this way). */
  readonly regexOptions?: readonly RegexOption[] | undefined;
}

export type Replacement = ExactReplacement | RegexReplacement;

export interface FormatPlanInput {
  readonly enabled?: boolean | undefined;
  readonly numberToDigitsCutoff?: number | undefined;
  readonly replacements?: readonly Replacement[] | undefined;
  readonly formattersEnabled?: readonly string[] | undefined;
}

export interface ChunkPlanInput {
  readonly enabled?: boolean | undefined;
  readonly minCharacters?: number | undefined;
  readonly punctuationBoundaries?: readonly string[] | undefined;
  readonly formatPlan?: FormatPlanInput | undefined;
}

export interface FormatPlan {
  readonly enabled: boolean;
  readonly numberToDigitsCutoff: number;
  readonly replacements: readonly Replacement[];
  /** Every formatter when the input omitted the list. */
  readonly formattersEnabled: readonly FormatterName[];
}

export interface ChunkPlan {
  readonly enabled: boolean;
  readonly minCharacters: number;
  readonly punctuationBoundaries: readonly PunctuationBoundary[];
  readonly formatPlan: FormatPlan;
}

const isBoundary = (value: string): value is PunctuationBoundary =>
  (PUNCTUATION_BOUNDARIES as readonly string[]).includes(value);
const isFormatter = (value: string): value is FormatterName =>
  (FORMATTER_NAMES as readonly string[]).includes(value);

/**
 * Fills defaults: enabled true, minCharacters 30 (an integer from 1 to 80), the default
 * boundaries above; formatPlan enabled true, numberToDigitsCutoff 2025, no replacements, every
 * formatter. As the platform documents, a disabled chunk plan disables formatting too ("there's
 * no chunk to format"). Throws ParlaError `ERR_VALIDATION` naming every bad field, including
 * regex replacements that do not compile.
 */
export function resolveChunkPlan(input: ChunkPlanInput = {}): ChunkPlan {
  const problems: string[] = [];
  const enabled = input.enabled ?? true;
  const minCharacters = input.minCharacters ?? 30;
  if (!Number.isInteger(minCharacters) || minCharacters < 1 || minCharacters > 80) {
    problems.push(`minCharacters must be an integer from 1 to 80, got ${minCharacters}`);
  }
  const boundaries: PunctuationBoundary[] = [];
  for (const value of input.punctuationBoundaries ?? DEFAULT_PUNCTUATION_BOUNDARIES) {
    if (isBoundary(value)) {
      boundaries.push(value);
    } else {
      problems.push(`punctuationBoundaries: ${JSON.stringify(value)} is not allowed`);
    }
  }
  const format = input.formatPlan ?? {};
  const cutoff = format.numberToDigitsCutoff ?? 2025;
  if (!Number.isFinite(cutoff) || cutoff < 0) {
    problems.push(`formatPlan.numberToDigitsCutoff must be a number of at least 0, got ${cutoff}`);
  }
  const formatters: FormatterName[] = [];
  for (const name of format.formattersEnabled ?? FORMATTER_NAMES) {
    if (isFormatter(name)) {
      formatters.push(name);
    } else {
      problems.push(`formatPlan.formattersEnabled: ${JSON.stringify(name)} is not a formatter`);
    }
  }
  const replacements = format.replacements ?? [];
  replacements.forEach((replacement, index) => {
    if (replacement.type !== 'regex') {
      return;
    }
    try {
      new RegExp(replacement.regex);
    } catch {
      problems.push(`formatPlan.replacements[${index}].regex does not compile`);
    }
  });
  if (problems.length > 0) {
    throw new ParlaError(
      'ERR_VALIDATION',
      problems.map((problem) => `chunkPlan.${problem}`),
    );
  }
  return {
    enabled,
    minCharacters,
    punctuationBoundaries: boundaries,
    formatPlan: {
      enabled: enabled && (format.enabled ?? true),
      numberToDigitsCutoff: cutoff,
      replacements,
      formattersEnabled: formatters,
    },
  };
}
