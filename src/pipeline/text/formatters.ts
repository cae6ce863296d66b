import type { FormatterName } from './chunk-plan.js';
import { decimalToWords, digitsToWords, integerToWords, MAX_WORD_NUMBER } from './number-words.js';

/*
 * The built-in formatters, by the platform's names. Each is a pure string → string function; the
 * formatter runs them in FORMATTER_ORDER. The platform does not document what each one does, so
 * each comment states Parla's reading. `colon`, `acronym`, `date`, `distance` and `unit` are
 * accepted names that do nothing yet (times like "10:30" are handled by `time`).
 */

export interface FormatContext {
  /** Integers above it are read digit by digit, the others as words. */
  readonly numberToDigitsCutoff: number;
}

type Formatter = (text: string, context: FormatContext) => string;

// markdown ------------------------------------------------------------------------------------

const CODE_FENCE = /```[\w-]*\n?/g;
const IMAGE = /!\[([^\]]*)\]\([^)]*\)/g;
const LINK = /\[([^\]]+)\]\([^)]*\)/g;
const HEADER = /^[ \t]*#{1,6}[ \t]+/gm;
const BLOCKQUOTE = /^[ \t]*>[ \t]?/gm;
const RULE = /^[ \t]*([-*_])(?:[ \t]*\1){2,}[ \t]*$/gm;
const BULLET = /^[ \t]*[-*+][ \t]+/gm;
const STRONG = /(\*\*|__)(?!\s)(.+?)(?<!\s)\1/g;
const EMPHASIS_STAR = /(?<![\w*])\*(?![\s*])([^*\n]+?)(?<!\s)\*(?![\w*])/g;
const EMPHASIS_UNDERSCORE = /(?<![\w_])_(?![\s_])([^_\n]+?)(?<!\s)_(?![\w_])/g;
const STRIKE = /~~(.+?)~~/g;
const INLINE_CODE = /`([^`\n]*)`/g;
const EMOJI =
  /[\p{Extended_Pictographic}\u{1F1E6}-\u{1F1FF}\u{1F3FB}-\u{1F3FF}\u{FE0F}\u{200D}\u{20E3}]/gu;

/** Markdown syntax goes, its text stays (links and images keep their text); emoji are removed. */
const markdown: Formatter = (text) =>
  text
    .replace(CODE_FENCE, '')
    .replace(IMAGE, '$1')
    .replace(LINK, '$1')
    .replace(RULE, '')
    .replace(HEADER, '')
    .replace(BLOCKQUOTE, '')
    .replace(BULLET, '')
    .replace(STRONG, '$2')
    .replace(EMPHASIS_STAR, '$1')
    .replace(EMPHASIS_UNDERSCORE, '$1')
    .replace(STRIKE, '$1')
    .replace(INLINE_CODE, '$1')
    .replace(EMOJI, '');

// asterisks, quotes, dashes, newlines ----------------------------------------------------------

const MULTIPLY = /(\d)[ \t]*\*[ \t]*(?=\d)/g;
const ASTERISK = /\*/g;
const QUOTES = /["“”„«»]/g;
const DASH_RANGE = /(\d)[ \t]*[–—][ \t]*(?=\d)/g;
const DASH = /[ \t]*[–—][ \t]*|[ \t]+-[ \t]+/g;
const NEWLINES = /[ \t]*(?:\r?\n)+[ \t]*/g;
const CLAUSE_END = /[.!?,;:。，]/;

/** An asterisk between numbers is read "times" ("5 * 3"). */
const asterisk: Formatter = (text) => text.replace(MULTIPLY, '$1 times ');
/** Every remaining asterisk is removed. */
const stripAsterisk: Formatter = (text) => text.replace(ASTERISK, '');
/** Double quotation marks are removed (apostrophes and single quotes stay). */
const quote: Formatter = (text) => text.replace(QUOTES, '');
/** An en or em dash between numbers reads "to"; other dashes, and a spaced hyphen, a pause. */
const dash: Formatter = (text) => text.replace(DASH_RANGE, '$1 to ').replace(DASH, ', ');
/** Line breaks become a sentence break, or a space after punctuation. */
const newline: Formatter = (text) =>
  text.replace(NEWLINES, (_match, offset: number, whole: string) => {
    if (offset === 0) {
      return '';
    }
    const before = whole[offset - 1] as string;
    return CLAUSE_END.test(before) ? ' ' : '. ';
  });

// email ----------------------------------------------------------------------------------------

const EMAIL = /(?<![\w.+-])([\w.+-]+)@([\w-]+(?:\.[\w-]+)+)/g;
const DOT = /\./g;

/** "jo.doe@x.io" → "jo dot doe at x dot io". */
const email: Formatter = (text) =>
  text.replace(
    EMAIL,
    (_match, local: string, domain: string) =>
      `${local.replace(DOT, ' dot ')} at ${domain.replace(DOT, ' dot ')}`,
  );

// money and percentages ------------------------------------------------------------------------

const DOLLARS =
  /(?<![\w$])(-?)\$(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?(?!\d)(?:[ \t]+(thousand|million|billion|trillion)\b)?/g;
const COMMA = /,/g;

const plural = (n: number, one: string, many: string): string =>
  `${integerToWords(n)} ${n === 1 ? one : many}`;

/**
 * "$42.50" → "forty two dollars and fifty cents", "$1" → "one dollar", "$0.05" → "five cents",
 * "$2.5 million" → "two point five million dollars". Amounts are always words (the cutoff is for
 * identifiers, not money).
 */
const dollarAmount: Formatter = (text) =>
  text.replace(
    DOLLARS,
    (match, sign: string, whole: string, cents: string | undefined, scale: string | undefined) => {
      const dollars = Number(whole.replace(COMMA, ''));
      if (dollars > MAX_WORD_NUMBER) {
        return match;
      }
      const minus = sign === '-' ? 'minus ' : '';
      if (scale !== undefined) {
        return `${minus}${decimalToWords(String(dollars), cents ?? '')} ${scale} dollars`;
      }
      const centValue = cents === undefined ? 0 : Number(cents.padEnd(2, '0'));
      if (centValue === 0) {
        return `${minus}${plural(dollars, 'dollar', 'dollars')}`;
      }
      const centWords = plural(centValue, 'cent', 'cents');
      if (dollars === 0) {
        return `${minus}${centWords}`;
      }
      return `${minus}${plural(dollars, 'dollar', 'dollars')} and ${centWords}`;
    },
  );

const PERCENT = /(\d(?:[\d,]*\d)?(?:\.\d+)?)[ \t]?%/g;

/** "42%" → "42 percent" (the number formatter then reads the number). */
const percentage: Formatter = (text) => text.replace(PERCENT, '$1 percent');

// phone numbers and times ----------------------------------------------------------------------

const PHONE_NANP =
  /(?<![\w+])(?:(\+?1)[ \t.-]?)?(?:\((\d{3})\)|(\d{3}))[ \t.-]?(\d{3})[ \t.-]?(\d{4})(?![\w])/g;
const PHONE_INTERNATIONAL = /(?<![\w+])\+(\d{1,3})((?:[ \t.-]?\d{2,4}){2,5})(?![\w])/g;
const GROUP_SEPARATOR = /[ \t.-]+/;

/**
 * Phone numbers are read digit by digit, group by group: "(555) 123-4567" → "five five five,
 * one two three, four five six seven". North American numbers need all ten digits; others need
 * a leading "+".
 */
const phoneNumber: Formatter = (text) =>
  text
    .replace(
      PHONE_NANP,
      (
        _match,
        country: string | undefined,
        area1: string | undefined,
        area2: string | undefined,
        exchange: string,
        line: string,
      ) => {
        const groups = [area1 ?? area2 ?? '', exchange, line].map(digitsToWords);
        if (country !== undefined) {
          groups.unshift(`${country.startsWith('+') ? 'plus ' : ''}${digitsToWords(country)}`);
        }
        return groups.join(', ');
      },
    )
    .replace(PHONE_INTERNATIONAL, (_match, country: string, rest: string) => {
      const groups = rest.trim().split(GROUP_SEPARATOR).filter(Boolean).map(digitsToWords);
      return [`plus ${digitsToWords(country)}`, ...groups].join(', ');
    });

const TIME = /(?<![\w:.])([01]?\d|2[0-3]):([0-5]\d)(?![\w:]|\.\d)(?:[ \t]?([ap])\.?m\b\.?)?/gi;

/** "10:30" → "ten thirty", "9:05" → "nine oh five", "10:00" → "ten o'clock", "7:00 pm" → "seven PM". */
const time: Formatter = (text) =>
  text.replace(TIME, (_match, hours: string, minutes: string, meridiem: string | undefined) => {
    const hour = integerToWords(Number(hours));
    const minute = Number(minutes);
    const suffix = meridiem === undefined ? '' : ` ${meridiem.toUpperCase()}M`;
    if (minute === 0) {
      return meridiem === undefined ? `${hour} o'clock` : `${hour}${suffix}`;
    }
    const minuteWords = minute < 10 ? `oh ${integerToWords(minute)}` : integerToWords(minute);
    return `${hour} ${minuteWords}${suffix}`;
  });

// numbers --------------------------------------------------------------------------------------

const NUMBER =
  /(?<![\w.,:/@$#+-]|\d[.,])(-?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\w%/@]|[.,:/-]\d)/g;

/**
 * Integers up to `numberToDigitsCutoff` are read as words ("1200" → "twelve hundred"); above it
 * they are read digit by digit as the platform documents ("12345" → "1 2 3 4 5"). Also read digit
 * by digit: numbers with a leading zero ("007"). Always words: numbers with thousands separators
 * ("1,000,000"), which are quantities rather than identifiers. Decimals read "point" and then
 * their digits. Numbers touching letters ("A320", "1st") or inside dates, versions and paths are
 * left alone.
 */
const number: Formatter = (text, context) =>
  text.replace(NUMBER, (_match, sign: string, whole: string, fraction: string | undefined) => {
    const minus = sign === '-' ? 'minus ' : '';
    const grouped = whole.includes(',');
    const digits = whole.replace(COMMA, '');
    const value = Number(digits);
    const asDigits =
      !grouped &&
      ((digits.length > 1 && digits.startsWith('0')) ||
        value > context.numberToDigitsCutoff ||
        value > MAX_WORD_NUMBER);
    if (asDigits) {
      const spaced = digits.split('').join(' ');
      return `${minus}${fraction === undefined ? spaced : `${spaced} point ${digitsToWords(fraction)}`}`;
    }
    return `${minus}${decimalToWords(digits, fraction ?? '')}`;
  });

const noop: Formatter = (text) => text;

/** The order formatters run in: structure first, then the patterns that contain numbers. */
export const FORMATTERS: ReadonlyArray<readonly [FormatterName, Formatter]> = [
  ['markdown', markdown],
  ['asterisk', asterisk],
  ['stripAsterisk', stripAsterisk],
  ['quote', quote],
  ['dash', dash],
  ['newline', newline],
  ['colon', noop],
  ['acronym', noop],
  ['email', email],
  ['dollarAmount', dollarAmount],
  ['percentage', percentage],
  ['phoneNumber', phoneNumber],
  ['date', noop],
  ['time', time],
  ['distance', noop],
  ['unit', noop],
  ['number', number],
];
