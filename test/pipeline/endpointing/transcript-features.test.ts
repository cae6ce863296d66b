import { describe, expect, it } from 'vitest';
import { HeuristicStillSpeakingEstimator } from '../../../src/pipeline/endpointing/still-speaking-estimator.js';
import {
  classifyEnding,
  countWords,
  endsWithNumber,
  endsWithTerminalPunctuation,
  lastWord,
} from '../../../src/pipeline/endpointing/transcript-features.js';
import { vapiHeuristicWaitMs } from '../../../src/pipeline/endpointing/vapi-heuristic.js';

describe('transcript features', () => {
  it.each([
    ['my zip is 94107', true],
    ['it costs $4,500', true],
    ['call 911  ', true],
    ['extension twenty', true],
    ['I am 25.', false],
    ['twenty.', false],
    ['someone', false],
    ['', false],
  ])('endsWithNumber(%j) is %s', (text, expected) => {
    expect(endsWithNumber(text)).toBe(expected);
  });

  it.each([
    ['Done.', true],
    ['Really?!', true],
    ['好的。', true],
    ['Well...', false],
    ['first,', false],
    ['no punctuation', false],
  ])('endsWithTerminalPunctuation(%j) is %s', (text, expected) => {
    expect(endsWithTerminalPunctuation(text)).toBe(expected);
  });

  it('finds the last word and counts words', () => {
    expect(lastWord('So, um,')).toBe('um');
    expect(lastWord("I don't")).toBe('dont');
    expect(lastWord('...')).toBe('');
    expect(countWords('  one two\tthree\n')).toBe(3);
    expect(countWords('')).toBe(0);
  });

  it.each([
    ['I want the', 'continuation-word'],
    ['I think so.', 'statement'],
    ['Um', 'continuation-word'],
    ['first, second,', 'continuation-punctuation'],
    ['well…', 'continuation-punctuation'],
    ['room 12', 'number'],
    ['sounds good', 'unpunctuated'],
    ['Why?', 'question'],
    ['Great!', 'statement'],
  ] as const)('classifies %j as %s', (text, ending) => {
    expect(classifyEnding(text)).toBe(ending);
  });
});

describe('HeuristicStillSpeakingEstimator', () => {
  const estimator = new HeuristicStillSpeakingEstimator();
  it.each([
    ['I need to book a flight and', 0.9],
    ['The dates are, um,', 0.9],
    ['The dates are June,', 0.75],
    ['my card ends in 4242', 0.6],
    ['I need to book a flight', 0.5],
    ['sounds good', 0.35],
    ['I need to book a flight.', 0.15],
    ['Can you help me?', 0.05],
  ])('estimates %j at %s', (text, x) => {
    expect(estimator.estimate(text)).toBe(x);
  });
});

describe('vapiHeuristicWaitMs', () => {
  it('waits longer the more the ending suggests more speech', () => {
    const order = [
      'Can you help me?',
      'Yes.',
      'I need to book a flight.',
      'yes',
      'I need to book a flight',
      'The dates are June,',
      'I need to book a flight and',
    ].map(vapiHeuristicWaitMs);
    expect(order).toEqual([150, 200, 400, 600, 1000, 1200, 2000]);
  });
});
