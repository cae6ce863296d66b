import {
  classifyEnding,
  countWords,
  SHORT_UTTERANCE_MAX_WORDS,
  type TranscriptEnding,
} from './transcript-features.js';

/*
 * The `vapi` smart endpointing plan. The platform's own model is not public, so this is Parla's
 * heuristic: a fixed wait per way the transcript ends, shortened for short utterances that are
 * usually complete answers ("yes", "that's right").
 *
 * | Transcript ends with                              | Wait     | Short (≤ 3 words) |
 * |---------------------------------------------------|----------|-------------------|
 * | a filler or conjunction ("um", "and", "so", "but") | 2000 ms  | 2000 ms           |
 * | a comma, colon, dash or ellipsis                  | 1200 ms  | 1200 ms           |
 * | a number ("94107", "twenty"): digits come in groups | 1000 ms | 1000 ms           |
 * | no punctuation                                    | 1000 ms  | 600 ms            |
 * | a full stop or exclamation mark                   | 400 ms   | 200 ms            |
 * | a question mark                                   | 150 ms   | 150 ms            |
 */

export const VAPI_HEURISTIC_WAIT_MS: Readonly<Record<TranscriptEnding, number>> = {
  'continuation-word': 2000,
  'continuation-punctuation': 1200,
  number: 1000,
  unpunctuated: 1000,
  statement: 400,
  question: 150,
};

export const VAPI_HEURISTIC_SHORT_WAIT_MS: Readonly<Partial<Record<TranscriptEnding, number>>> = {
  unpunctuated: 600,
  statement: 200,
};

/** The `vapi` plan's wait, in milliseconds, after the customer's transcript so far. */
export function vapiHeuristicWaitMs(customerTranscript: string): number {
  const ending = classifyEnding(customerTranscript);
  if (countWords(customerTranscript) <= SHORT_UTTERANCE_MAX_WORDS) {
    const shortWaitMs = VAPI_HEURISTIC_SHORT_WAIT_MS[ending];
    if (shortWaitMs !== undefined) {
      return shortWaitMs;
    }
  }
  return VAPI_HEURISTIC_WAIT_MS[ending];
}
