/**
 * The voice-activity detector a call's input runs, as the pipeline sees it: frames in, speech
 * probabilities out. Energy detectors decide at once; model detectors (Silero) may decide a few
 * frames later, when the worker scores many calls' windows in one batch.
 */

/**
 * The probability (0–1) that [startMs, endMs) of the caller's audio holds speech. Spans come in
 * stream order; a detector may report the silent start of a window early and then the whole
 * window (same start, later end).
 */
export type VadDecisionListener = (
  speechProbability: number,
  startMs: number,
  endMs: number,
) => void;

export interface CallerVad {
  /** One caller frame (PCM16 mono at the call's rate) starting at startMs. */
  push(samples: Int16Array, startMs: number): void;
  /** No more frames; pending decisions may be dropped. */
  close(): void;
}

export type CallerVadFactory = (sampleRateHz: number, onDecision: VadDecisionListener) => CallerVad;
