/*
 * Word-level matching of customer transcripts against stopSpeakingPlan's acknowledgement and
 * interruption phrases. Text is normalized the same way on both sides: lowercased, apostrophes
 * removed ("don't" is "dont", "I'm" is "im"), every other non-letter, non-digit character a word
 * break ("uh-huh" is "uh huh", "Okay." is "okay").
 */

/** The normalized words of a text. */
export function normalizeWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/['’‘`]/g, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '');
}

/** Phrases as word lists, empty ones dropped; single words also kept in a set. */
class PhraseSet {
  readonly phrases: readonly (readonly string[])[];
  readonly singleWords: ReadonlySet<string>;

  constructor(phrases: readonly string[]) {
    this.phrases = phrases.map(normalizeWords).filter((words) => words.length > 0);
    this.singleWords = new Set(
      this.phrases.filter((words) => words.length === 1).map((words) => words[0]!),
    );
  }
}

/** True when `phrase` occurs in `words` starting at `start`. */
function matchesAt(words: readonly string[], start: number, phrase: readonly string[]): boolean {
  if (start + phrase.length > words.length) {
    return false;
  }
  for (let i = 0; i < phrase.length; i++) {
    if (words[start + i] !== phrase[i]) {
      return false;
    }
  }
  return true;
}

export class PhraseMatcher {
  private readonly acknowledgements: PhraseSet;
  private readonly interruptions: PhraseSet;

  constructor(acknowledgementPhrases: readonly string[], interruptionPhrases: readonly string[]) {
    this.acknowledgements = new PhraseSet(acknowledgementPhrases);
    this.interruptions = new PhraseSet(interruptionPhrases);
  }

  /** True when some interruption phrase occurs, as whole words, anywhere in `words`. */
  containsInterruptionPhrase(words: readonly string[]): boolean {
    const { phrases, singleWords } = this.interruptions;
    for (let start = 0; start < words.length; start++) {
      if (singleWords.has(words[start]!)) {
        return true;
      }
      for (const phrase of phrases) {
        if (phrase.length > 1 && matchesAt(words, start, phrase)) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * True when `words` is not empty and is made of acknowledgement phrases only, one after
   * another: "yeah okay", "okay yeah", "uh-huh I see".
   */
  isOnlyAcknowledgements(words: readonly string[]): boolean {
    if (words.length === 0) {
      return false;
    }
    // reachable[i]: the first i words split into acknowledgement phrases.
    const reachable = new Uint8Array(words.length + 1);
    reachable[0] = 1;
    for (let i = 0; i < words.length; i++) {
      if (reachable[i] === 0) {
        continue;
      }
      for (const phrase of this.acknowledgements.phrases) {
        if (matchesAt(words, i, phrase)) {
          reachable[i + phrase.length] = 1;
        }
      }
    }
    return reachable[words.length] === 1;
  }
}
