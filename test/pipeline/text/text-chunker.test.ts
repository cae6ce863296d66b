import { describe, expect, it } from 'vitest';
import {
  PUNCTUATION_BOUNDARIES,
  resolveChunkPlan,
  type ChunkPlanInput,
  type PunctuationBoundary,
} from '../../../src/pipeline/text/chunk-plan.js';
import { TextChunker } from '../../../src/pipeline/text/text-chunker.js';

/** Chunks from one push, and checks that 1-character deltas give the same chunks. */
function chunk(text: string, input: ChunkPlanInput = {}, flush = true): string[] {
  const plan = resolveChunkPlan(input);
  const whole: string[] = [];
  const chunker = new TextChunker(plan, (c) => whole.push(c));
  chunker.push(text);
  if (flush) {
    chunker.flush();
  }
  const bytes: string[] = [];
  const streaming = new TextChunker(plan, (c) => bytes.push(c));
  for (const c of text) {
    streaming.push(c);
  }
  if (flush) {
    streaming.flush();
  }
  expect(bytes).toEqual(whole);
  return whole;
}

const padded = (length: number, mark = '.'): string => `${'a'.repeat(length - 1)}${mark}`;

describe('TextChunker: minCharacters', () => {
  it('emits at a boundary once the chunk has minCharacters (30 by default)', () => {
    const thirty = padded(30);
    expect(chunk(`${thirty} next`, {}, false)).toEqual([thirty]);
  });

  it('does not emit a 29-character chunk, and grows it to the next boundary', () => {
    const twentyNine = padded(29);
    expect(chunk(`${twentyNine} more words here.  tail`, {}, false)).toEqual([
      `${twentyNine} more words here.`,
    ]);
  });

  it('counts from the first non-space character of the chunk', () => {
    const thirty = padded(30);
    expect(chunk(`   ${thirty} x`, {}, false)).toEqual([thirty]);
  });

  it('honours a custom minCharacters on both sides', () => {
    expect(chunk('Hi there. Next one. x', { minCharacters: 9 }, false)).toEqual([
      'Hi there.',
      'Next one.',
    ]);
    expect(chunk('Hi there. Next one. x', { minCharacters: 10 }, false)).toEqual([
      'Hi there. Next one.',
    ]);
  });
});

describe('TextChunker: punctuation boundaries', () => {
  const ascii: PunctuationBoundary[] = ['.', '!', '?', ';', ')', ',', ':'];
  for (const mark of ascii) {
    it(`splits at "${mark}" followed by a space`, () => {
      expect(
        chunk(`ab${mark} cd${mark} ef`, { minCharacters: 1, punctuationBoundaries: [mark] }),
      ).toEqual([`ab${mark}`, `cd${mark}`, 'ef']);
    });
  }

  for (const mark of ['。', '，', '،', '۔', '।', '॥'] as const) {
    it(`splits right after "${mark}", with or without a space`, () => {
      expect(
        chunk(`ab${mark}cd${mark} ef`, { minCharacters: 1, punctuationBoundaries: [mark] }),
      ).toEqual([`ab${mark}`, `cd${mark}`, 'ef']);
    });
  }

  it('splits at "|" and, with only "||" enabled, at a double pipe only', () => {
    expect(chunk('ab | cd || ef', { minCharacters: 1, punctuationBoundaries: ['|'] })).toEqual([
      'ab |',
      'cd ||',
      'ef',
    ]);
    expect(chunk('ab | cd || ef', { minCharacters: 1, punctuationBoundaries: ['||'] })).toEqual([
      'ab | cd ||',
      'ef',
    ]);
  });

  it('splits only at the enabled marks', () => {
    expect(chunk('one, two. three', { minCharacters: 1, punctuationBoundaries: ['.'] })).toEqual([
      'one, two.',
      'three',
    ]);
  });

  it('keeps closing quotes and brackets, and runs of marks, in the chunk', () => {
    expect(chunk('He said "stop." Then?! ok', { minCharacters: 1 })).toEqual([
      'He said "stop."',
      'Then?!',
      'ok',
    ]);
  });

  it('uses every allowed mark but the pipes by default', () => {
    expect(resolveChunkPlan().punctuationBoundaries).toEqual(
      PUNCTUATION_BOUNDARIES.filter((p) => p !== '|' && p !== '||'),
    );
  });
});

describe('TextChunker: never splits inside', () => {
  const cases: [string, string][] = [
    ['a decimal', 'Pi is about 3.14 and that is all. Done'],
    ['a price with thousands', 'That costs $1,000 which is a lot sadly. Done'],
    ['a title', 'Please see Dr. Smith about that soon. Done'],
    ['"e.g."', 'Bring fruit e.g. apples or pears. Done'],
    ['"i.e." and "a.m."', 'Come early i.e. at 9 a.m. sharp today. Done'],
    ['an initial', 'It was written by J. R. Tolkien himself. Done'],
    ['a time', 'The meeting starts at 10:30 tomorrow. Done'],
    ['a URL', 'Go to https://example.com/a.b?x=1,2 right now. Done'],
    ['an email address', 'Write to jo.doe@example.co.uk right now. Done'],
  ];
  for (const [what, text] of cases) {
    it(`${what}`, () => {
      const [first, second] = chunk(text, { minCharacters: 1 });
      expect(`${first ?? ''} ${second ?? ''}`).toBe(text);
      expect(second).toBe('Done');
    });
  }

  it('a number or abbreviation whose next character has not arrived yet', () => {
    const chunks: string[] = [];
    const chunker = new TextChunker(resolveChunkPlan({ minCharacters: 1 }), (c) => chunks.push(c));
    chunker.push('It is 3.');
    expect(chunks).toEqual([]);
    chunker.push('14 now. And');
    expect(chunks).toEqual(['It is 3.14 now.']);
    expect(chunker.pending).toBe(' And');
  });
});

describe('TextChunker: streaming', () => {
  it('gives the same chunks whatever the delta sizes', () => {
    const text =
      'Hello there, Dr. Smith. The value is 3.14, e.g. pi, at 10:30 today. Visit ' +
      'https://example.com/a.b?x=1 or mail me@x.io. Costs $1,000. Done!<flush /> Ok。好的，谢谢 ' +
      'and more text, with clauses; and (brackets) here: right? Yes!';
    const plan = resolveChunkPlan({ minCharacters: 12 });
    const expected: string[] = [];
    const whole = new TextChunker(plan, (c) => expected.push(c));
    whole.push(text);
    whole.flush();
    let seed = 7;
    for (let round = 0; round < 50; round += 1) {
      const got: string[] = [];
      const chunker = new TextChunker(plan, (c) => got.push(c));
      for (let at = 0; at < text.length;) {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        const size = 1 + (seed % 9);
        chunker.push(text.slice(at, at + size));
        at += size;
      }
      chunker.flush();
      expect(got).toEqual(expected);
    }
    expect(expected.length).toBeGreaterThan(5);
  });
});

describe('TextChunker: flush and control tokens', () => {
  it('emits the rest at flush, trimmed, and nothing when nothing is left', () => {
    const chunks: string[] = [];
    const chunker = new TextChunker(resolveChunkPlan(), (c) => chunks.push(c));
    chunker.push('short text without an end');
    expect(chunks).toEqual([]);
    chunker.flush();
    chunker.flush();
    chunker.push('   ');
    chunker.flush();
    expect(chunks).toEqual(['short text without an end']);
  });

  it('emits a trailing mark at flush though its next character never came', () => {
    expect(chunk('Fine. Thanks.', { minCharacters: 1 })).toEqual(['Fine.', 'Thanks.']);
  });

  it('starts a new chunk at <flush /> whatever its length, and drops the token', () => {
    expect(chunk('Hmm<flush />, let me check that one for you. ok')).toEqual([
      'Hmm',
      ', let me check that one for you.',
      'ok',
    ]);
    expect(chunk('a<flush/>b <flush')).toEqual(['a', 'b <flush']);
  });

  it('reset drops the buffered text', () => {
    const chunks: string[] = [];
    const chunker = new TextChunker(resolveChunkPlan(), (c) => chunks.push(c));
    chunker.push('interrupted half sentence');
    chunker.reset();
    chunker.flush();
    expect(chunks).toEqual([]);
  });
});

describe('TextChunker: disabled plan', () => {
  it('sends the whole response at once, at flush, without control tokens', () => {
    const text = 'First sentence is long enough to chunk. Second <flush /> one. Third!';
    expect(chunk(text, { enabled: false }, false)).toEqual([]);
    expect(chunk(text, { enabled: false })).toEqual([
      'First sentence is long enough to chunk. Second   one. Third!',
    ]);
  });

  it('disables formatting too', () => {
    const plan = resolveChunkPlan({ enabled: false, formatPlan: { enabled: true } });
    expect(plan.formatPlan.enabled).toBe(false);
  });
});
