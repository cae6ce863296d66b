import { expect } from 'vitest';
import {
  Endpointer,
  type EndpointerOptions,
} from '../../../src/pipeline/endpointing/endpointer.js';
import { compileEndpointingPlan } from '../../../src/pipeline/endpointing/endpointing-plan.js';
import type { StillSpeakingEstimator } from '../../../src/pipeline/endpointing/still-speaking-estimator.js';
import {
  resolveStartSpeakingPlan,
  type StartSpeakingPlanInput,
} from '../../../src/pipeline/plans.js';

export function endpointer(plan: StartSpeakingPlanInput = {}, options: EndpointerOptions = {}) {
  return new Endpointer(compileEndpointingPlan(resolveStartSpeakingPlan(plan)), options);
}

/** The customer speaks from 0 ms, the final transcript lands at 900 ms, VAD stops at 1000 ms. */
export function speak(e: Endpointer, text: string, stopMs = 1000): void {
  e.onSpeechStart(stopMs - 1000);
  e.onTranscript(text, true, stopMs - 100);
  e.onSpeechStop(stopMs);
}

/** Polls just before and at the expected end of turn; returns the decision. */
export function expectEndOfTurnAt(e: Endpointer, atMs: number) {
  expect(e.pendingEndOfTurnAtMs).toBe(atMs);
  expect(e.poll(atMs - 1)).toBeNull();
  const decision = e.poll(atMs);
  expect(decision).not.toBeNull();
  return decision!;
}

export const fixedEstimator = (x: number): StillSpeakingEstimator => ({ estimate: () => x });
