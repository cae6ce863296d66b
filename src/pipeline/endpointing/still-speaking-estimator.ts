import {
  classifyEnding,
  countWords,
  SHORT_UTTERANCE_MAX_WORDS,
  type TranscriptEnding,
} from './transcript-features.js';

/**
 * Estimates x, the probability in [0, 1] that the customer is still speaking (will go on after
 * the current pause), for the livekit smart plan's `waitFunction`. Pluggable: a turn-detection
 * model can stand in for the heuristic below. Must be synchronous and deterministic; values
 * outside [0, 1] (and NaN) are clamped by the endpointer.
 */
export interface StillSpeakingEstimator {
  estimate(customerTranscript: string, lastAssistantMessage: string): number;
}

/** x for each way a transcript can end; see HeuristicStillSpeakingEstimator. */
export const HEURISTIC_STILL_SPEAKING: Readonly<Record<TranscriptEnding, number>> = {
  'continuation-word': 0.9,
  'continuation-punctuation': 0.75,
  number: 0.6,
  unpunctuated: 0.5,
  question: 0.05,
  statement: 0.15,
};

/** x for a short (at most three words) unpunctuated utterance such as "yes" or "that's fine". */
export const HEURISTIC_STILL_SPEAKING_SHORT_UNPUNCTUATED = 0.35;

/**
 * Parla's text-only estimator. A transcript ending on a filler or conjunction ("um", "and",
 * "because") is most likely unfinished (0.9), then one ending on a comma or ellipsis (0.75), on
 * a number, which people dictate in groups (0.6), or with no punctuation at all (0.5; 0.35 when
 * short). Sentence punctuation means the transcriber heard a finished sentence: 0.15, or 0.05
 * for a question. With the default wait function these give roughly 2.3 s, 1.5 s, 0.95 s,
 * 0.69 s (0.42 s), 0.22 s and 0.13 s.
 */
export class HeuristicStillSpeakingEstimator implements StillSpeakingEstimator {
  estimate(customerTranscript: string): number {
    const ending = classifyEnding(customerTranscript);
    if (ending === 'unpunctuated' && countWords(customerTranscript) <= SHORT_UTTERANCE_MAX_WORDS) {
      return HEURISTIC_STILL_SPEAKING_SHORT_UNPUNCTUATED;
    }
    return HEURISTIC_STILL_SPEAKING[ending];
  }
}
