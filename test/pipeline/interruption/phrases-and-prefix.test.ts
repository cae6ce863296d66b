import type { Static } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import * as controlPlans from '../../../src/control/schemas/assistant-plans.js';
import {
  normalizeWords,
  PhraseMatcher,
} from '../../../src/pipeline/interruption/phrase-matcher.js';
import {
  spokenPrefix,
  spokenPrefixFromFraction,
} from '../../../src/pipeline/interruption/spoken-prefix.js';
import {
  DEFAULT_ACKNOWLEDGEMENT_PHRASES,
  DEFAULT_INTERRUPTION_PHRASES,
  resolveStopSpeakingPlan,
} from '../../../src/pipeline/plans.js';
import { ParlaError } from '../../../src/core/errors.js';

describe('resolveStopSpeakingPlan', () => {
  it('fills the documented defaults', () => {
    expect(resolveStopSpeakingPlan()).toEqual({
      numWords: 0,
      voiceSeconds: 0.2,
      backoffSeconds: 1,
      acknowledgementPhrases: DEFAULT_ACKNOWLEDGEMENT_PHRASES,
      interruptionPhrases: DEFAULT_INTERRUPTION_PHRASES,
    });
  });

  it('keeps the default phrase lists in step with the control schema', () => {
    expect(DEFAULT_ACKNOWLEDGEMENT_PHRASES).toEqual(controlPlans.DEFAULT_ACKNOWLEDGEMENT_PHRASES);
    expect(DEFAULT_INTERRUPTION_PHRASES).toEqual(controlPlans.DEFAULT_INTERRUPTION_PHRASES);
  });

  it('keeps given values, empty lists included', () => {
    expect(
      resolveStopSpeakingPlan({ numWords: 2, acknowledgementPhrases: [], backoffSeconds: 0 }),
    ).toMatchObject({
      numWords: 2,
      voiceSeconds: 0.2,
      backoffSeconds: 0,
      acknowledgementPhrases: [],
    });
  });

  it('accepts what the control API validated (type check)', () => {
    const stored: Static<typeof controlPlans.StopSpeakingPlan> = {
      numWords: 2,
      interruptionPhrases: ['halt'],
    };
    expect(resolveStopSpeakingPlan(stored).interruptionPhrases).toEqual(['halt']);
  });

  it('rejects out-of-range values', () => {
    expect(() => resolveStopSpeakingPlan({ numWords: 11, voiceSeconds: 0.6 })).toThrow(ParlaError);
    expect(() => resolveStopSpeakingPlan({ backoffSeconds: Number.NaN })).toThrow(
      /stopSpeakingPlan\.backoffSeconds must be a number from 0 to 10/,
    );
  });
});

describe('PhraseMatcher', () => {
  const matcher = new PhraseMatcher(DEFAULT_ACKNOWLEDGEMENT_PHRASES, DEFAULT_INTERRUPTION_PHRASES);

  it('normalizes case, apostrophes, hyphens and punctuation', () => {
    expect(normalizeWords("Don't STOP—I'm uh-huh, ok?")).toEqual([
      'dont',
      'stop',
      'im',
      'uh',
      'huh',
      'ok',
    ]);
    expect(normalizeWords(' ... ')).toEqual([]);
  });

  it.each([
    ['okay', true],
    ['Yeah okay.', true],
    ['okay, yeah', true],
    ['Got it. I see.', true],
    ['I got it', true],
    ['okay so', false],
    ['I', false],
    ['', false],
  ])('isOnlyAcknowledgements(%j) is %s', (text, expected) => {
    expect(matcher.isOnlyAcknowledgements(normalizeWords(text))).toBe(expected);
  });

  it.each([
    ['wait', true],
    ["I don't think so", true],
    ['Actually, could you', true],
    ['I know', false],
    ['nothing', false],
    ['', false],
  ])('containsInterruptionPhrase(%j) is %s', (text, expected) => {
    expect(matcher.containsInterruptionPhrase(normalizeWords(text))).toBe(expected);
  });
});

describe('spokenPrefix', () => {
  const text = 'Hello, world. How are you?';

  it.each([
    [0, ''],
    [3, ''],
    [5, 'Hello,'],
    [6, 'Hello,'],
    [7, 'Hello,'],
    [9, 'Hello,'],
    [12, 'Hello, world.'],
    [13, 'Hello, world.'],
    [17, 'Hello, world. How'],
    [24, 'Hello, world. How are'],
    [25, text],
    [26, text],
    [500, text],
    [-4, ''],
    [Number.NaN, ''],
  ])('after %s characters keeps %j', (playedChars, expected) => {
    expect(spokenPrefix(text, playedChars)).toBe(expected);
  });

  it('cuts by played fraction', () => {
    expect(spokenPrefixFromFraction(text, 0)).toBe('');
    expect(spokenPrefixFromFraction(text, 0.5)).toBe('Hello, world.');
    expect(spokenPrefixFromFraction(text, 0.9)).toBe('Hello, world. How are');
    expect(spokenPrefixFromFraction(text, 1)).toBe(text);
    expect(spokenPrefixFromFraction('one two ', 1)).toBe('one two');
  });
});
