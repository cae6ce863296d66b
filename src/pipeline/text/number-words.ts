/*
 * English number words for the formatter: cardinal words ("forty two", no "and"), digit-by-digit
 * reading, and decimals ("three point one four").
 */

export const NUMBER_ONES = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
export const NUMBER_TENS = [
  '',
  '',
  'twenty',
  'thirty',
  'forty',
  'fifty',
  'sixty',
  'seventy',
  'eighty',
  'ninety',
];
export const NUMBER_SCALES = ['', 'thousand', 'million', 'billion', 'trillion'];

function belowHundred(n: number): string {
  if (n < 20) {
    return NUMBER_ONES[n] as string;
  }
  const tens = NUMBER_TENS[Math.floor(n / 10)] as string;
  return n % 10 === 0 ? tens : `${tens} ${NUMBER_ONES[n % 10] as string}`;
}

function belowThousand(n: number): string {
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  if (hundreds === 0) {
    return belowHundred(rest);
  }
  const head = `${NUMBER_ONES[hundreds] as string} hundred`;
  return rest === 0 ? head : `${head} ${belowHundred(rest)}`;
}

/** Largest integer spoken as words; larger ones are read digit by digit. */
export const MAX_WORD_NUMBER = 999_999_999_999_999;

/**
 * Cardinal words for a non-negative integer up to MAX_WORD_NUMBER. Round hundreds from 1100 to
 * 9900 are read the way the platform's own example reads 1200: "twelve hundred".
 */
export function integerToWords(n: number): string {
  if (!Number.isInteger(n) || n < 0 || n > MAX_WORD_NUMBER) {
    return digitsToWords(String(n));
  }
  if (n < 1000) {
    return belowThousand(n);
  }
  if (n < 10_000 && n % 100 === 0 && n % 1000 !== 0) {
    return `${belowHundred(n / 100)} hundred`;
  }
  const parts: string[] = [];
  let rest = n;
  for (let scale = 0; rest > 0; scale += 1) {
    const group = rest % 1000;
    if (group > 0) {
      const scaleWord = NUMBER_SCALES[scale] as string;
      parts.unshift(
        scaleWord === '' ? belowThousand(group) : `${belowThousand(group)} ${scaleWord}`,
      );
    }
    rest = Math.floor(rest / 1000);
  }
  return parts.join(' ');
}

/** "0451" → "zero four five one"; non-digits are skipped. */
export function digitsToWords(digits: string): string {
  const words: string[] = [];
  for (const c of digits) {
    const d = c.charCodeAt(0) - 48;
    if (d >= 0 && d <= 9) {
      words.push(NUMBER_ONES[d] as string);
    }
  }
  return words.join(' ');
}

/** "3.14" → "three point one four"; the integer part must be plain digits. */
export function decimalToWords(integerPart: string, fraction: string): string {
  const head = integerToWords(Number(integerPart));
  return fraction.length === 0 ? head : `${head} point ${digitsToWords(fraction)}`;
}
