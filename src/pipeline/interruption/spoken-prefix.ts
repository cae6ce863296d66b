/*
 * After an interruption, only what the customer actually heard belongs in the conversation
 * history. Playout reports how much of a message was played, as a character count (from the
 * voice's alignment data) or as a fraction of its audio; these cut the text to match, at a word
 * boundary. A word cut off in the middle was not heard and is dropped; punctuation after the
 * last heard word is kept, since it is silent.
 */

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const WHITESPACE = /\s/;

/** The part of `text` spoken when its first `playedChars` characters have been played. */
export function spokenPrefix(text: string, playedChars: number): string {
  if (!(playedChars > 0)) {
    return '';
  }
  const length = text.length;
  if (playedChars >= length) {
    return text.trimEnd();
  }
  const cut = Math.floor(playedChars);
  // End of the whitespace-delimited token the cut falls in.
  let tokenEnd = cut;
  while (tokenEnd < length && !WHITESPACE.test(text[tokenEnd]!)) {
    tokenEnd++;
  }
  let unheardLetter = false;
  for (let i = cut; i < tokenEnd; i++) {
    if (LETTER_OR_DIGIT.test(text[i]!)) {
      unheardLetter = true;
      break;
    }
  }
  if (!unheardLetter) {
    // The cut is at a token's end, or only silent punctuation of it remains.
    return text.slice(0, tokenEnd).trimEnd();
  }
  let tokenStart = cut;
  while (tokenStart > 0 && !WHITESPACE.test(text[tokenStart - 1]!)) {
    tokenStart--;
  }
  return text.slice(0, tokenStart).trimEnd();
}

/** The part of `text` spoken when `playedFraction` (0 to 1) of its audio has been played. */
export function spokenPrefixFromFraction(text: string, playedFraction: number): string {
  if (!(playedFraction > 0)) {
    return '';
  }
  if (playedFraction >= 1) {
    return text.trimEnd();
  }
  return spokenPrefix(text, Math.floor(playedFraction * text.length));
}
