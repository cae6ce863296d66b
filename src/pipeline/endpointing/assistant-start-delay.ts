import { secondsToMs } from '../plans.js';

/**
 * startSpeakingPlan.waitSeconds is not endpointing: it is a minimum delay between the end of the
 * customer's turn and the assistant's first audio, applied at the very end of the pipeline
 * (after endpointing, the model and the voice). Given how long the pipeline has already taken
 * since the end of turn, returns how much longer to hold the audio back: never negative, so a
 * pipeline already slower than waitSeconds adds nothing.
 */
export function assistantStartDelayMs(waitSeconds: number, pipelineElapsedMs: number): number {
  return Math.max(0, secondsToMs(waitSeconds) - pipelineElapsedMs);
}
