import { ParlaError } from '../core/errors.js';
import {
  DEFAULT_ACKNOWLEDGEMENT_PHRASES,
  DEFAULT_INTERRUPTION_PHRASES,
} from '../core/assistant-vocabulary.js';

export { DEFAULT_ACKNOWLEDGEMENT_PHRASES, DEFAULT_INTERRUPTION_PHRASES };

/*
 * The assistant's turn-taking plans as the pipeline sees them: plain types, independent of the
 * control plane's request schemas (which they mirror), and resolvers that fill the platform's
 * documented defaults (docs: shared reference "API behaviour", sections 2.1 and 2.2).
 *
 * Inputs accept what a stored assistant holds: every field optional. Resolved plans have every
 * field set, so the endpointer and the barge-in detector never consult a default themselves.
 */

// ---------------------------------------------------------------------------------------------
// startSpeakingPlan

export type RegexOptionType = 'ignore-case' | 'whole-word' | 'multi-line';

export interface RegexOption {
  readonly type: RegexOptionType;
  readonly enabled: boolean;
}

/** `user` is the docs' spelling of `customer`; both match the live customer transcript. */
export interface SingleRegexEndpointingRule {
  readonly type: 'assistant' | 'customer' | 'user';
  readonly regex: string;
  readonly regexOptions?: readonly RegexOption[] | undefined;
  readonly timeoutSeconds: number;
}

export interface BothRegexEndpointingRule {
  readonly type: 'both';
  readonly assistantRegex: string;
  readonly assistantRegexOptions?: readonly RegexOption[] | undefined;
  readonly customerRegex: string;
  readonly customerRegexOptions?: readonly RegexOption[] | undefined;
  readonly timeoutSeconds: number;
}

export type CustomEndpointingRule = SingleRegexEndpointingRule | BothRegexEndpointingRule;

/**
 * A rule as stored: the control schema types `type` as a plain string. Resolving checks it and
 * the regex fields it needs, and gives a CustomEndpointingRule.
 */
export interface CustomEndpointingRuleInput {
  readonly type: string;
  readonly regex?: string | undefined;
  readonly regexOptions?: readonly RegexOption[] | undefined;
  readonly assistantRegex?: string | undefined;
  readonly assistantRegexOptions?: readonly RegexOption[] | undefined;
  readonly customerRegex?: string | undefined;
  readonly customerRegexOptions?: readonly RegexOption[] | undefined;
  readonly timeoutSeconds: number;
}

export type SmartEndpointingPlanInput =
  | { readonly provider: 'vapi' }
  | { readonly provider: 'livekit'; readonly waitFunction?: string | undefined }
  | { readonly provider: 'custom-endpointing-model'; readonly server?: unknown };

export type SmartEndpointingPlan =
  | { readonly provider: 'vapi' }
  | { readonly provider: 'livekit'; readonly waitFunction: string }
  /** The server is the caller's business: the endpointer only asks for and takes a timeout. */
  | { readonly provider: 'custom-endpointing-model'; readonly server: unknown };

export interface TranscriptionEndpointingPlanInput {
  readonly onPunctuationSeconds?: number | undefined;
  readonly onNoPunctuationSeconds?: number | undefined;
  readonly onNumberSeconds?: number | undefined;
}

export interface TranscriptionEndpointingPlan {
  readonly onPunctuationSeconds: number;
  readonly onNoPunctuationSeconds: number;
  readonly onNumberSeconds: number;
}

export interface StartSpeakingPlanInput {
  readonly waitSeconds?: number | undefined;
  /** Deprecated: `true` reads as `{provider: "vapi"}`, `"livekit"` as the default livekit plan. */
  readonly smartEndpointingEnabled?: boolean | 'livekit' | undefined;
  readonly smartEndpointingPlan?: SmartEndpointingPlanInput | undefined;
  readonly customEndpointingRules?: readonly CustomEndpointingRuleInput[] | undefined;
  readonly transcriptionEndpointingPlan?: TranscriptionEndpointingPlanInput | undefined;
}

export interface ResolvedStartSpeakingPlan {
  readonly waitSeconds: number;
  /** Null when no smart plan applies (neither the plan nor the deprecated flag is set). */
  readonly smartEndpointingPlan: SmartEndpointingPlan | null;
  readonly customEndpointingRules: readonly CustomEndpointingRule[];
  readonly transcriptionEndpointingPlan: TranscriptionEndpointingPlan;
}

export const DEFAULT_WAIT_SECONDS = 0.4;
export const DEFAULT_LIVEKIT_WAIT_FUNCTION = '20 + 500 * sqrt(x) + 2500 * x^3';
export const DEFAULT_ON_PUNCTUATION_SECONDS = 0.1;
export const DEFAULT_ON_NO_PUNCTUATION_SECONDS = 1.5;
/** The platform's description text says 0.4; its `@default` and docs say 0.5, which we follow. */
export const DEFAULT_ON_NUMBER_SECONDS = 0.5;

// ---------------------------------------------------------------------------------------------
// stopSpeakingPlan

export interface StopSpeakingPlanInput {
  readonly numWords?: number | undefined;
  readonly voiceSeconds?: number | undefined;
  readonly backoffSeconds?: number | undefined;
  readonly acknowledgementPhrases?: readonly string[] | undefined;
  readonly interruptionPhrases?: readonly string[] | undefined;
}

export interface ResolvedStopSpeakingPlan {
  readonly numWords: number;
  readonly voiceSeconds: number;
  readonly backoffSeconds: number;
  readonly acknowledgementPhrases: readonly string[];
  readonly interruptionPhrases: readonly string[];
}

export const DEFAULT_NUM_WORDS = 0;
export const DEFAULT_VOICE_SECONDS = 0.2;
export const DEFAULT_BACKOFF_SECONDS = 1;

/** Seconds to whole milliseconds: 1.005 s is 1005 ms, not 1004.9999999999999. */
export function secondsToMs(seconds: number): number {
  return Math.round(seconds * 1000);
}

// ---------------------------------------------------------------------------------------------
// Resolvers

/** Collects range problems so one error names all of them. */
function checkNumber(
  problems: string[],
  field: string,
  value: number,
  minimum: number,
  maximum: number,
): number {
  if (!Number.isFinite(value) || value < minimum || value > maximum) {
    problems.push(`${field} must be a number from ${minimum} to ${maximum}, got ${value}`);
  }
  return value;
}

function throwIfProblems(plan: string, problems: string[]): void {
  if (problems.length > 0) {
    throw new ParlaError(
      'ERR_VALIDATION',
      problems.map((problem) => `${plan}.${problem}`),
    );
  }
}

/** Checks a stored rule's kind, regex fields and timeout; null (with problems) if unusable. */
function resolveRule(
  problems: string[],
  rule: CustomEndpointingRuleInput,
  at: string,
): CustomEndpointingRule | null {
  const timeoutSeconds = checkNumber(problems, `${at}.timeoutSeconds`, rule.timeoutSeconds, 0, 15);
  const needString = (field: 'regex' | 'assistantRegex' | 'customerRegex'): string | null => {
    const value = rule[field];
    if (typeof value !== 'string') {
      problems.push(`${at}.${field} is required for a rule of type ${rule.type}`);
      return null;
    }
    return value;
  };
  switch (rule.type) {
    case 'assistant':
    case 'customer':
    case 'user': {
      const regex = needString('regex');
      return regex === null
        ? null
        : { type: rule.type, regex, regexOptions: rule.regexOptions, timeoutSeconds };
    }
    case 'both': {
      const assistantRegex = needString('assistantRegex');
      const customerRegex = needString('customerRegex');
      return assistantRegex === null || customerRegex === null
        ? null
        : {
            type: 'both',
            assistantRegex,
            assistantRegexOptions: rule.assistantRegexOptions,
            customerRegex,
            customerRegexOptions: rule.customerRegexOptions,
            timeoutSeconds,
          };
    }
    default:
      problems.push(`${at}.type must be assistant, customer, user or both, got ${rule.type}`);
      return null;
  }
}

function resolveSmartPlan(partial: StartSpeakingPlanInput): SmartEndpointingPlan | null {
  const plan = partial.smartEndpointingPlan;
  if (plan !== undefined) {
    switch (plan.provider) {
      case 'vapi':
        return { provider: 'vapi' };
      case 'livekit':
        return {
          provider: 'livekit',
          waitFunction: plan.waitFunction ?? DEFAULT_LIVEKIT_WAIT_FUNCTION,
        };
      case 'custom-endpointing-model':
        return { provider: 'custom-endpointing-model', server: plan.server };
    }
  }
  if (partial.smartEndpointingEnabled === 'livekit') {
    return { provider: 'livekit', waitFunction: DEFAULT_LIVEKIT_WAIT_FUNCTION };
  }
  if (partial.smartEndpointingEnabled === true) {
    return { provider: 'vapi' };
  }
  return null;
}

/**
 * Fills the documented startSpeakingPlan defaults and checks the documented ranges (throws a
 * ParlaError `ERR_VALIDATION` naming each bad field). Regexes and the livekit wait function are
 * checked when the plan is compiled (see endpointing/endpointing-plan.ts).
 */
export function resolveStartSpeakingPlan(
  partial: StartSpeakingPlanInput = {},
): ResolvedStartSpeakingPlan {
  const problems: string[] = [];
  const transcription = partial.transcriptionEndpointingPlan ?? {};
  const resolved: ResolvedStartSpeakingPlan = {
    waitSeconds: checkNumber(
      problems,
      'waitSeconds',
      partial.waitSeconds ?? DEFAULT_WAIT_SECONDS,
      0,
      5,
    ),
    smartEndpointingPlan: resolveSmartPlan(partial),
    customEndpointingRules: Object.freeze(
      (partial.customEndpointingRules ?? []).flatMap((rule, index) => {
        const resolvedRule = resolveRule(problems, rule, `customEndpointingRules[${index}]`);
        return resolvedRule === null ? [] : [resolvedRule];
      }),
    ),
    transcriptionEndpointingPlan: {
      onPunctuationSeconds: checkNumber(
        problems,
        'transcriptionEndpointingPlan.onPunctuationSeconds',
        transcription.onPunctuationSeconds ?? DEFAULT_ON_PUNCTUATION_SECONDS,
        0,
        3,
      ),
      onNoPunctuationSeconds: checkNumber(
        problems,
        'transcriptionEndpointingPlan.onNoPunctuationSeconds',
        transcription.onNoPunctuationSeconds ?? DEFAULT_ON_NO_PUNCTUATION_SECONDS,
        0,
        3,
      ),
      onNumberSeconds: checkNumber(
        problems,
        'transcriptionEndpointingPlan.onNumberSeconds',
        transcription.onNumberSeconds ?? DEFAULT_ON_NUMBER_SECONDS,
        0,
        3,
      ),
    },
  };
  throwIfProblems('startSpeakingPlan', problems);
  return resolved;
}

/** Fills the documented stopSpeakingPlan defaults and checks the documented ranges. */
export function resolveStopSpeakingPlan(
  partial: StopSpeakingPlanInput = {},
): ResolvedStopSpeakingPlan {
  const problems: string[] = [];
  const resolved: ResolvedStopSpeakingPlan = {
    numWords: checkNumber(problems, 'numWords', partial.numWords ?? DEFAULT_NUM_WORDS, 0, 10),
    voiceSeconds: checkNumber(
      problems,
      'voiceSeconds',
      partial.voiceSeconds ?? DEFAULT_VOICE_SECONDS,
      0,
      0.5,
    ),
    backoffSeconds: checkNumber(
      problems,
      'backoffSeconds',
      partial.backoffSeconds ?? DEFAULT_BACKOFF_SECONDS,
      0,
      10,
    ),
    acknowledgementPhrases: Object.freeze([
      ...(partial.acknowledgementPhrases ?? DEFAULT_ACKNOWLEDGEMENT_PHRASES),
    ]),
    interruptionPhrases: Object.freeze([
      ...(partial.interruptionPhrases ?? DEFAULT_INTERRUPTION_PHRASES),
    ]),
  };
  throwIfProblems('stopSpeakingPlan', problems);
  return resolved;
}
