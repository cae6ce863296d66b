import type { ChunkPlan } from './chunk-plan.js';

/*
 * Streaming chunker: the model's text deltas in, speakable chunks out (trimmed, never empty).
 *
 * A chunk ends at a punctuation boundary from `punctuationBoundaries` once the chunk holds at
 * least `minCharacters` characters (counted on the trimmed chunk, boundary included). A boundary
 * that comes too early is skipped and the chunk grows to the next one.
 *
 * What counts as a boundary:
 * - ASCII marks (`. ! ? ; ) | || , :`) only when followed by whitespace, after any run of closing
 *   marks (`"'”’)]}` and further `.!?…`), which stay in the chunk. So "3.14", "$1,000", "10:30",
 *   "https://x.com/a" and "a.b@c.io" never split, and neither does "...!" mid-run.
 * - A full stop after a known abbreviation ("Dr.", "e.g.", "a.m.", …) or a single letter (an
 *   initial, "J. Smith") is not a boundary.
 * - The other marks (`。 ， ، ۔ । ॥`) end a chunk at once: they do not occur inside numbers.
 * - Pipes: a run of `|` is a boundary if `|` is enabled, or if it is `||` and `||` is enabled.
 * - The platform's `<flush />` control token (also `<flush/>`) ends the chunk where it stands,
 *   whatever its length; the token itself is dropped.
 *
 * A boundary whose next character has not arrived yet is left undecided until it does, so the
 * chunks never depend on how the text was split into deltas. `flush()` (end of the model's turn)
 * emits whatever is left.
 *
 * With `enabled: false` nothing is emitted before `flush()`, which emits the whole response as one
 * chunk with `<flush />` tokens removed. The platform says a disabled plan "relies on the voice
 * provider's audio generation logic" and that control tokens then do not work; sending the whole
 * turn at once is the reading that works for every provider, streaming or not.
 *
 * Allocation-light: the buffer is scanned once with a cursor (a push only examines new text and
 * undecided boundaries), and strings are sliced only when a chunk is emitted.
 */

export type ChunkSink = (chunk: string) => void;

const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'sr',
  'jr',
  'st',
  'vs',
  'mt',
  'ft',
  'inc',
  'ltd',
  'co',
  'corp',
  'dept',
  'est',
  'approx',
  'fig',
  'gen',
  'gov',
  'capt',
  'sgt',
  'lt',
  'col',
  'rev',
  'ave',
  'blvd',
  'rd',
  'jan',
  'feb',
  'mar',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'dec',
  'e.g',
  'i.e',
  'a.m',
  'p.m',
  'u.s',
  'u.k',
]);

const CLOSERS = new Set(['"', "'", '”', '’', ')', ']', '}', '.', '!', '?', '…']);
const ASCII_MARKS = new Set(['.', '!', '?', ';', ')', ',', ':']);
const IMMEDIATE_MARKS = new Set(['。', '，', '،', '۔', '।', '॥']);
const FLUSH_TOKENS = ['<flush />', '<flush/>'] as const;
const FLUSH_TOKEN_PATTERN = /<flush ?\/>/g;

const WORD_CHAR = /[\p{L}\p{N}]/u;
const LETTER = /\p{L}/u;

const isSpace = (c: string | undefined): boolean =>
  c === ' ' || c === '\n' || c === '\t' || c === '\r' || c === '\u00a0' || c === '\u3000';

/** 'match' when a flush token starts at `at`, 'partial' when the buffer ends inside one. */
function flushTokenAt(buffer: string, at: number): { length: number } | 'partial' | null {
  let partial = false;
  for (const token of FLUSH_TOKENS) {
    if (buffer.startsWith(token, at)) {
      return { length: token.length };
    }
    const rest = buffer.length - at;
    if (rest < token.length && token.startsWith(buffer.slice(at))) {
      partial = true;
    }
  }
  return partial ? 'partial' : null;
}

export class TextChunker {
  readonly #enabled: boolean;
  readonly #minCharacters: number;
  readonly #marks: ReadonlySet<string>;
  readonly #singlePipe: boolean;
  readonly #doublePipe: boolean;
  readonly #sink: ChunkSink;
  #buffer = '';
  /** Everything before the cursor has been examined and is not a chunk end. */
  #cursor = 0;

  constructor(
    plan: Pick<ChunkPlan, 'enabled' | 'minCharacters' | 'punctuationBoundaries'>,
    sink: ChunkSink,
  ) {
    this.#enabled = plan.enabled;
    this.#minCharacters = plan.minCharacters;
    this.#marks = new Set(plan.punctuationBoundaries);
    this.#singlePipe = this.#marks.has('|');
    this.#doublePipe = this.#marks.has('||');
    this.#sink = sink;
  }

  /** Text not yet emitted. */
  get pending(): string {
    return this.#buffer;
  }

  push(delta: string): void {
    if (delta.length === 0) {
      return;
    }
    this.#buffer += delta;
    if (this.#enabled) {
      this.#scan();
    }
  }

  /** Emits the rest of the turn and resets for the next one. */
  flush(): void {
    // Control tokens left in the buffer (all of them when disabled) are dropped, not spoken.
    const rest = this.#buffer.replace(FLUSH_TOKEN_PATTERN, ' ');
    this.#buffer = '';
    this.#cursor = 0;
    this.#emit(rest);
  }

  /** Drops the buffered text without emitting it (the turn was interrupted). */
  reset(): void {
    this.#buffer = '';
    this.#cursor = 0;
  }

  #emit(text: string): void {
    const chunk = text.trim();
    if (chunk.length > 0) {
      this.#sink(chunk);
    }
  }

  #scan(): void {
    let i = this.#cursor;
    while (i < this.#buffer.length) {
      const buffer = this.#buffer;
      const c = buffer[i] as string;
      if (c === '<') {
        const token = flushTokenAt(buffer, i);
        if (token === 'partial') {
          break;
        }
        if (token !== null) {
          this.#emit(buffer.slice(0, i));
          this.#buffer = buffer.slice(i + token.length);
          i = 0;
          continue;
        }
        i += 1;
        continue;
      }
      const end = this.#boundaryEnd(buffer, i, c);
      if (end === 'undecided') {
        break;
      }
      if (end === null || !this.#longEnough(buffer, end)) {
        i += 1;
        continue;
      }
      this.#emit(buffer.slice(0, end));
      this.#buffer = buffer.slice(end);
      i = 0;
    }
    this.#cursor = i;
  }

  /** Where a chunk ending at the mark at `i` would end, null if `i` is not a boundary. */
  #boundaryEnd(buffer: string, i: number, c: string): number | 'undecided' | null {
    if (IMMEDIATE_MARKS.has(c)) {
      return this.#marks.has(c) ? i + 1 : null;
    }
    let k: number;
    if (c === '|') {
      if (buffer[i - 1] === '|') {
        return null;
      }
      k = i;
      while (buffer[k] === '|') {
        k += 1;
      }
      if (k === buffer.length) {
        return 'undecided';
      }
      const run = k - i;
      if (!(this.#singlePipe || (run === 2 && this.#doublePipe))) {
        return null;
      }
    } else {
      if (!ASCII_MARKS.has(c) || !this.#marks.has(c)) {
        return null;
      }
      k = i + 1;
      while (k < buffer.length && CLOSERS.has(buffer[k] as string)) {
        k += 1;
      }
      if (k === buffer.length) {
        return 'undecided';
      }
    }
    if (!isSpace(buffer[k])) {
      return null;
    }
    if (c === '.' && this.#isAbbreviation(buffer, i)) {
      return null;
    }
    return k;
  }

  /** Whether the word before the full stop at `dot` is an abbreviation or an initial. */
  #isAbbreviation(buffer: string, dot: number): boolean {
    let start = dot;
    while (start > 0 && !isSpace(buffer[start - 1])) {
      start -= 1;
    }
    // Leading brackets and quotes are not part of the word.
    while (start < dot && !WORD_CHAR.test(buffer[start] as string)) {
      start += 1;
    }
    const word = buffer.slice(start, dot);
    if (word.length === 0) {
      return false;
    }
    if (word.length === 1) {
      return LETTER.test(word);
    }
    return ABBREVIATIONS.has(word.toLowerCase());
  }

  #longEnough(buffer: string, end: number): boolean {
    let start = 0;
    while (start < end && isSpace(buffer[start])) {
      start += 1;
    }
    return end - start >= this.#minCharacters;
  }
}
