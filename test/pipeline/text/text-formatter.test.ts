import { describe, expect, it } from 'vitest';
import { ChunkPlan as ChunkPlanSchema } from '../../../src/control/schemas/assistant.js';
import { ParlaError } from '../../../src/core/errors.js';
import {
  FORMATTER_NAMES,
  PUNCTUATION_BOUNDARIES,
  resolveChunkPlan,
  type FormatPlanInput,
  type FormatterName,
} from '../../../src/pipeline/text/chunk-plan.js';
import { TextFormatter } from '../../../src/pipeline/text/text-formatter.js';

const format = (text: string, formatPlan: FormatPlanInput = {}): string =>
  new TextFormatter(resolveChunkPlan({ formatPlan }).formatPlan).format(text);
const only = (name: FormatterName, text: string): string =>
  format(text, { formattersEnabled: [name] });
const allBut = (name: FormatterName, text: string): string =>
  format(text, { formattersEnabled: FORMATTER_NAMES.filter((n) => n !== name) });

describe('resolveChunkPlan', () => {
  it('fills the documented defaults', () => {
    const plan = resolveChunkPlan();
    expect(plan.enabled).toBe(true);
    expect(plan.minCharacters).toBe(30);
    expect(plan.formatPlan).toEqual({
      enabled: true,
      numberToDigitsCutoff: 2025,
      replacements: [],
      formattersEnabled: FORMATTER_NAMES,
    });
  });

  it('keeps the boundary and formatter names in step with the control schema', () => {
    const schema = ChunkPlanSchema as unknown as {
      properties: {
        punctuationBoundaries: { items: { enum: string[] } };
        formatPlan: { properties: { formattersEnabled: { items: { enum: string[] } } } };
      };
    };
    expect(schema.properties.punctuationBoundaries.items.enum).toEqual([...PUNCTUATION_BOUNDARIES]);
    expect(schema.properties.formatPlan.properties.formattersEnabled.items.enum).toEqual([
      ...FORMATTER_NAMES,
    ]);
  });

  it('names every bad field', () => {
    let error: unknown;
    try {
      resolveChunkPlan({
        minCharacters: 81,
        punctuationBoundaries: ['~'],
        formatPlan: {
          numberToDigitsCutoff: -1,
          formattersEnabled: ['nope'],
          replacements: [{ type: 'regex', regex: '(', value: '' }],
        },
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ParlaError);
    expect((error as ParlaError).details).toHaveLength(5);
    expect(() => resolveChunkPlan({ minCharacters: 0 })).toThrow(ParlaError);
    expect(() => resolveChunkPlan({ minCharacters: 80 })).not.toThrow();
  });
});

describe('TextFormatter: replacements', () => {
  it('replaces the first exact match by default, every one with replaceAllEnabled', () => {
    const exact = { type: 'exact', key: 'hello', value: 'hi' } as const;
    expect(format('hello world, hello universe', { replacements: [exact] })).toBe(
      'hi world, hello universe',
    );
    expect(
      format('hello world, hello universe', {
        replacements: [{ ...exact, replaceAllEnabled: true }],
      }),
    ).toBe('hi world, hi universe');
  });

  it('replaces exact keys literally', () => {
    const replacements = [
      { type: 'exact', key: 'a.b', value: '$&x', replaceAllEnabled: true },
    ] as const;
    expect(format('a.b axb', { replacements, formattersEnabled: [] })).toBe('$&x axb');
  });

  it('replaces every regex match, with groups, and honours the options', () => {
    const regex = { type: 'regex', regex: 'cat(s?)', value: 'dog$1' } as const;
    expect(format('cats and Cat, cat', { replacements: [regex] })).toBe('dogs and Cat, dog');
    expect(
      format('cats and Cat, cat', {
        replacements: [{ ...regex, options: [{ type: 'ignore-case', enabled: true }] }],
      }),
    ).toBe('dogs and dog, dog');
    const word = { type: 'regex', regex: 'cat', value: 'dog' } as const;
    expect(
      format('cat concat', {
        replacements: [{ ...word, options: [{ type: 'whole-word', enabled: true }] }],
      }),
    ).toBe('dog concat');
    expect(
      format('cat concat', {
        replacements: [{ ...word, options: [{ type: 'whole-word', enabled: false }] }],
      }),
    ).toBe('dog condog');
    const anchored = { type: 'regex', regex: '^x', value: 'y' } as const;
    expect(
      format('x\nx', {
        formattersEnabled: [],
        replacements: [{ ...anchored, regexOptions: [{ type: 'multi-line', enabled: true }] }],
      }),
    ).toBe('y\ny');
  });

  it('runs replacements before the formatters', () => {
    const replacements = [{ type: 'exact', key: '42', value: '7' }] as const;
    expect(format('42 apples', { replacements })).toBe('seven apples');
  });

  it('returns the chunk unchanged when the plan is disabled', () => {
    expect(format('**$5** <flush />', { enabled: false })).toBe('**$5** <flush />');
  });
});

describe('TextFormatter: numbers and numberToDigitsCutoff', () => {
  it('reads numbers up to the cutoff as words and larger ones digit by digit', () => {
    expect(format('2024')).toBe('two thousand twenty four');
    expect(format('2025')).toBe('two thousand twenty five');
    expect(format('2026')).toBe('2 0 2 6');
    expect(format('12345 and 1200')).toBe('1 2 3 4 5 and twelve hundred');
    expect(format('2026', { numberToDigitsCutoff: 2026 })).toBe('two thousand twenty six');
    expect(format('10', { numberToDigitsCutoff: 9 })).toBe('1 0');
  });

  it('reads decimals, negatives, grouped and zero-led numbers', () => {
    expect(format('3.14, -5 and 1,000,000 and 007.')).toBe(
      'three point one four, minus five and one million and 0 0 7.',
    );
  });

  it('leaves numbers in words, dates and versions alone', () => {
    expect(format('A320 1st v1.2.3 2024-01-05')).toBe('A320 1st v1.2.3 2024-01-05');
  });

  it('is switched off by leaving out "number"', () => {
    expect(allBut('number', 'I have 42 cats.')).toBe('I have 42 cats.');
    expect(only('number', 'I have 42 cats.')).toBe('I have forty two cats.');
  });
});

describe('TextFormatter: formatters', () => {
  it('dollarAmount', () => {
    expect(only('dollarAmount', 'It is $42.50, $1, $0.05, $1,000 or $2.5 million.')).toBe(
      'It is forty two dollars and fifty cents, one dollar, five cents, one thousand dollars or two point five million dollars.',
    );
    expect(allBut('dollarAmount', 'It is $42.50.')).toBe('It is $42.50.');
  });

  it('percentage', () => {
    expect(only('percentage', 'Up 42% or 3.5 %.')).toBe('Up 42 percent or 3.5 percent.');
    expect(format('Up 42%.')).toBe('Up forty two percent.');
    expect(allBut('percentage', 'Up 42%.')).toBe('Up 42%.');
  });

  it('phoneNumber', () => {
    expect(only('phoneNumber', 'Call (555) 123-4567 or +1 555.123.4567.')).toBe(
      'Call five five five, one two three, four five six seven or plus one, five five five, one two three, four five six seven.',
    );
    expect(only('phoneNumber', 'Or +44 20 7946 0958.')).toBe(
      'Or plus four four, two zero, seven nine four six, zero nine five eight.',
    );
    expect(allBut('phoneNumber', 'Call 555-123-4567.')).toBe('Call 555-123-4567.');
  });

  it('markdown, with emoji', () => {
    expect(
      only('markdown', '# Title\n**Bold**, *it*, `code`, ~~gone~~ [the docs](https://x.io) 👍🏽🇺🇸!'),
    ).toBe('Title\nBold, it, code, gone the docs!');
    expect(only('markdown', '- one\n- two\n> quote')).toBe('one\ntwo\nquote');
    expect(only('markdown', 'snake_case_name stays')).toBe('snake_case_name stays');
    expect(allBut('markdown', '[the docs](https://x.io) 👍')).toBe('[the docs](https://x.io) 👍');
  });

  it('asterisk and stripAsterisk', () => {
    expect(only('asterisk', '5 * 3 is *so* easy')).toBe('5 times 3 is *so* easy');
    expect(only('stripAsterisk', 'a * b and **c**')).toBe('a b and c');
    expect(format('5 * 3')).toBe('five times three');
  });

  it('quote', () => {
    expect(only('quote', 'He said "hi" and “bye”, don\'t')).toBe("He said hi and bye, don't");
    expect(allBut('quote', 'a "b"')).toBe('a "b"');
  });

  it('dash', () => {
    expect(only('dash', 'pages 5–10 — or so - ok')).toBe('pages 5 to 10, or so, ok');
    expect(allBut('dash', 'a — b')).toBe('a — b');
  });

  it('newline', () => {
    expect(only('newline', 'First line\nSecond line.\n\nThird')).toBe(
      'First line. Second line. Third',
    );
    expect(allBut('newline', 'a\nb')).toBe('a\nb');
  });

  it('email', () => {
    expect(only('email', 'Write jo.doe@x.io.')).toBe('Write jo dot doe at x dot io.');
    expect(allBut('email', 'Write jo@x.io')).toBe('Write jo@x.io');
  });

  it('time', () => {
    expect(only('time', 'At 10:30, 9:05 pm or 10:00.')).toBe(
      "At ten thirty, nine oh five PM or ten o'clock.",
    );
    expect(allBut('time', 'At 10:30.')).toBe('At 10:30.');
  });

  it('always removes markup tags, even with no formatter enabled', () => {
    expect(format('a <flush /> b <break time="1s"/> c, 3 < 5', { formattersEnabled: [] })).toBe(
      'a b c, 3 < 5',
    );
  });

  it('is deterministic and formats a full chunk', () => {
    const text = '**Great** news 🎉: your order #12345 costs $42.50 (10% off) — call 555-123-4567.';
    const expected =
      'Great news: your order #12345 costs forty two dollars and fifty cents (ten percent off), call five five five, one two three, four five six seven.';
    expect(format(text)).toBe(expected);
    expect(format(text)).toBe(expected);
  });
});
