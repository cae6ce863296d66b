/*
 * Cheap textual features of a customer transcript, used to guess whether the customer has
 * finished: how it ends (punctuation, a number, a filler or conjunction) and how long it is.
 * Each runs once per transcript event, never per audio frame.
 */

import { NUMBER_ONES, NUMBER_SCALES, NUMBER_TENS } from '../text/number-words.js';

/** Sentence-ending punctuation, including the CJK and Devanagari forms transcribers emit. */
const TERMINAL_PUNCTUATION = new Set(['.', '!', '?', '。', '！', '？', '।', '॥', '۔']);

/** Punctuation that ends a clause, not a sentence: the speaker has more to say. */
const CONTINUATION_PUNCTUATION = new Set([',', ';', ':', '-', '–', '—', '…', '，', '、']);

/**
 * Words after which a speaker almost never stops: hesitations, conjunctions, articles and a
 * few prepositions. Only consulted when the transcript has no sentence-ending punctuation, so
 * "I think so." stays complete while "I think so" followed by silence does not.
 */
export const CONTINUATION_WORDS: ReadonlySet<string> = new Set([
  'um',
  'umm',
  'uh',
  'uhh',
  'uhm',
  'erm',
  'er',
  'hmm',
  'and',
  'but',
  'so',
  'or',
  'because',
  'cause',
  'like',
  'the',
  'a',
  'an',
  'to',
  'of',
  'with',
  'my',
  'your',
  'if',
]);

const NUMBER_WORDS: ReadonlySet<string> = new Set(
  [...NUMBER_ONES, ...NUMBER_TENS, 'hundred', ...NUMBER_SCALES].filter((word) => word !== ''),
);

/** Index of the last non-whitespace character, or -1. */
function lastVisibleIndex(text: string): number {
  let i = text.length - 1;
  while (i >= 0 && /\s/.test(text[i]!)) {
    i--;
  }
  return i;
}

/** The last non-whitespace character, or '' for a blank transcript. */
export function lastVisibleChar(text: string): string {
  const i = lastVisibleIndex(text);
  return i < 0 ? '' : text[i]!;
}

/** The last word, lowercased, without punctuation ("Um," gives "um"); '' if there is none. */
export function lastWord(text: string): string {
  const match = /([\p{L}\p{N}'’-]+)[^\p{L}\p{N}]*$/u.exec(text);
  return match === null ? '' : match[1]!.toLowerCase().replace(/['’]/g, '');
}

/** Words, split on whitespace. */
export function countWords(text: string): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const isSpace = /\s/.test(text[i]!);
    if (!isSpace && !inWord) {
      count++;
    }
    inWord = !isSpace;
  }
  return count;
}

export function endsWithTerminalPunctuation(text: string): boolean {
  return TERMINAL_PUNCTUATION.has(lastVisibleChar(text)) && !endsWithEllipsis(text);
}

function endsWithEllipsis(text: string): boolean {
  return text.trimEnd().endsWith('...');
}

export function endsWithContinuationPunctuation(text: string): boolean {
  return CONTINUATION_PUNCTUATION.has(lastVisibleChar(text)) || endsWithEllipsis(text);
}

/**
 * True when the transcript ends with a number: its last visible character is a digit ("my zip
 * is 94107", "$4,500"), or it ends, unpunctuated, with a number word ("extension twenty").
 * "I am 25." ends with punctuation, not a number: the transcriber judged the sentence complete.
 */
export function endsWithNumber(text: string): boolean {
  const last = lastVisibleChar(text);
  if (last >= '0' && last <= '9') {
    return true;
  }
  if (last === '' || !/[\p{L}]/u.test(last)) {
    return false;
  }
  return NUMBER_WORDS.has(lastWord(text));
}

/** Ends, without sentence punctuation, on a hesitation or conjunction ("…and", "um"). */
export function endsWithContinuationWord(text: string): boolean {
  return !endsWithTerminalPunctuation(text) && CONTINUATION_WORDS.has(lastWord(text));
}

/**
 * How a transcript ends, from most to least suggestive of more speech coming. Shared by the
 * `vapi` smart plan and the heuristic still-speaking estimator.
 */
export type TranscriptEnding =
  | 'continuation-word'
  | 'continuation-punctuation'
  | 'number'
  | 'unpunctuated'
  | 'question'
  | 'statement';

export function classifyEnding(text: string): TranscriptEnding {
  if (endsWithContinuationWord(text)) {
    return 'continuation-word';
  }
  if (endsWithContinuationPunctuation(text)) {
    return 'continuation-punctuation';
  }
  if (endsWithNumber(text)) {
    return 'number';
  }
  const last = lastVisibleChar(text);
  if (last === '?' || last === '？') {
    return 'question';
  }
  return endsWithTerminalPunctuation(text) ? 'statement' : 'unpunctuated';
}

/** Utterances of at most this many words count as short ("yes", "that's right"). */
export const SHORT_UTTERANCE_MAX_WORDS = 3;
