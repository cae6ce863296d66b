import { ParlaError } from '../../core/errors.js';
import {
  secondsToMs,
  type CustomEndpointingRule,
  type RegexOption,
  type ResolvedStartSpeakingPlan,
} from '../plans.js';
import { compileWaitFunction, type WaitFunction } from './wait-function.js';

/*
 * A startSpeakingPlan made ready to run: rule regexes built, the livekit wait function
 * validated and compiled, seconds turned into milliseconds. Compiled once per plan object and
 * shared by every endpointer (every call) using that plan.
 */

export interface CompiledEndpointingRule {
  /** Position in customEndpointingRules, reported with the decision. */
  readonly index: number;
  readonly timeoutMs: number;
  /** Tested against the last assistant message; null when the rule does not look at it. */
  readonly assistantRegex: RegExp | null;
  /** Tested against the live customer transcript; null when the rule does not look at it. */
  readonly customerRegex: RegExp | null;
}

export type SmartProvider = 'none' | 'vapi' | 'livekit' | 'custom-endpointing-model';

export interface CompiledEndpointingPlan {
  readonly plan: ResolvedStartSpeakingPlan;
  readonly rules: readonly CompiledEndpointingRule[];
  readonly smartProvider: SmartProvider;
  /** Set for the livekit provider only. */
  readonly waitFunction: WaitFunction | null;
  readonly onPunctuationMs: number;
  readonly onNoPunctuationMs: number;
  readonly onNumberMs: number;
}

/**
 * Builds a rule's RegExp. `ignore-case` adds the `i` flag and `multi-line` the `m` flag;
 * `whole-word` wraps the pattern in `\b(?:…)\b`, so "no" matches "no thanks" but not "know".
 * No `g` flag: `test` stays stateless. Matching is a substring search, as with `RegExp.test`.
 */
export function buildRuleRegex(
  source: string,
  options: readonly RegexOption[] | undefined,
  field: string,
): RegExp {
  let flags = '';
  let pattern = source;
  for (const option of options ?? []) {
    if (!option.enabled) {
      continue;
    }
    switch (option.type) {
      case 'ignore-case':
        flags += flags.includes('i') ? '' : 'i';
        break;
      case 'multi-line':
        flags += flags.includes('m') ? '' : 'm';
        break;
      case 'whole-word':
        pattern = `\\b(?:${source})\\b`;
        break;
    }
  }
  try {
    return new RegExp(pattern, flags);
  } catch (error) {
    throw new ParlaError(
      'ERR_VALIDATION',
      `startSpeakingPlan.${field} is not a valid regular expression: ${(error as Error).message}`,
    );
  }
}

function compileRule(rule: CustomEndpointingRule, index: number): CompiledEndpointingRule {
  const at = `customEndpointingRules[${index}]`;
  const timeoutMs = secondsToMs(rule.timeoutSeconds);
  switch (rule.type) {
    case 'assistant':
      return {
        index,
        timeoutMs,
        assistantRegex: buildRuleRegex(rule.regex, rule.regexOptions, `${at}.regex`),
        customerRegex: null,
      };
    case 'customer':
    case 'user':
      return {
        index,
        timeoutMs,
        assistantRegex: null,
        customerRegex: buildRuleRegex(rule.regex, rule.regexOptions, `${at}.regex`),
      };
    case 'both':
      return {
        index,
        timeoutMs,
        assistantRegex: buildRuleRegex(
          rule.assistantRegex,
          rule.assistantRegexOptions,
          `${at}.assistantRegex`,
        ),
        customerRegex: buildRuleRegex(
          rule.customerRegex,
          rule.customerRegexOptions,
          `${at}.customerRegex`,
        ),
      };
  }
}

/** True when every regex the rule has matches its text. */
export function ruleMatches(
  rule: CompiledEndpointingRule,
  lastAssistantMessage: string,
  customerTranscript: string,
): boolean {
  return (
    (rule.assistantRegex === null || rule.assistantRegex.test(lastAssistantMessage)) &&
    (rule.customerRegex === null || rule.customerRegex.test(customerTranscript))
  );
}

const compiledPlans = new WeakMap<ResolvedStartSpeakingPlan, CompiledEndpointingPlan>();

/**
 * Compiles a resolved plan, or returns the compilation already made for the same plan object.
 * Throws a ParlaError `ERR_VALIDATION` for a bad regex or an unsafe or malformed wait function.
 */
export function compileEndpointingPlan(plan: ResolvedStartSpeakingPlan): CompiledEndpointingPlan {
  const cached = compiledPlans.get(plan);
  if (cached !== undefined) {
    return cached;
  }
  const smart = plan.smartEndpointingPlan;
  const transcription = plan.transcriptionEndpointingPlan;
  const compiled: CompiledEndpointingPlan = {
    plan,
    rules: plan.customEndpointingRules.map(compileRule),
    smartProvider: smart === null ? 'none' : smart.provider,
    waitFunction: smart?.provider === 'livekit' ? compileWaitFunction(smart.waitFunction) : null,
    onPunctuationMs: secondsToMs(transcription.onPunctuationSeconds),
    onNoPunctuationMs: secondsToMs(transcription.onNoPunctuationSeconds),
    onNumberMs: secondsToMs(transcription.onNumberSeconds),
  };
  compiledPlans.set(plan, compiled);
  return compiled;
}
