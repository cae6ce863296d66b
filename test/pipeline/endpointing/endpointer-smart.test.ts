import { describe, expect, it } from 'vitest';
import { compileEndpointingPlan } from '../../../src/pipeline/endpointing/endpointing-plan.js';
import { resolveStartSpeakingPlan } from '../../../src/pipeline/plans.js';
import { endpointer, expectEndOfTurnAt, fixedEstimator, speak } from './endpointer-harness.js';

describe('Endpointer: smartEndpointingPlan livekit', () => {
  it('waits the default function of the estimated x, overriding the transcription plan', () => {
    for (const [x, waitMs] of [
      [0, 20],
      [0.5, 20 + 500 * Math.sqrt(0.5) + 2500 * 0.125],
      [1, 3020],
    ] as const) {
      const e = endpointer(
        { smartEndpointingPlan: { provider: 'livekit' } },
        { estimator: fixedEstimator(x) },
      );
      speak(e, 'Hello.');
      const decision = e.poll(1000 + waitMs)!;
      expect(decision.reason).toBe('smart-livekit');
      expect(decision.waitMs).toBeCloseTo(waitMs, 9);
      expect(decision.stillSpeakingProbability).toBe(x);
    }
  });

  it('uses a custom waitFunction and clamps negative results to 0', () => {
    const e = endpointer(
      { smartEndpointingPlan: { provider: 'livekit', waitFunction: '70 + 4000 * x' } },
      { estimator: fixedEstimator(0.25) },
    );
    speak(e, 'Hello');
    expect(expectEndOfTurnAt(e, 2070).waitMs).toBe(1070);
    const negative = endpointer(
      { smartEndpointingPlan: { provider: 'livekit', waitFunction: '100 - 1000 * x' } },
      { estimator: fixedEstimator(0.9) },
    );
    speak(negative, 'Hello');
    expect(negative.poll(1000)).toMatchObject({ waitMs: 0, endOfTurnAtMs: 1000 });
  });

  it('clamps the estimate into [0, 1] and reads NaN as 0.5', () => {
    for (const [estimate, x] of [
      [2, 1],
      [-1, 0],
      [Number.NaN, 0.5],
    ] as const) {
      const e = endpointer(
        { smartEndpointingPlan: { provider: 'livekit', waitFunction: '1000 * x' } },
        { estimator: fixedEstimator(estimate) },
      );
      speak(e, 'Hello');
      expect(e.poll(10_000)?.stillSpeakingProbability).toBe(x);
    }
  });

  it('passes the transcript and the last assistant message to the estimator', () => {
    const seen: string[][] = [];
    const e = endpointer(
      { smartEndpointingPlan: { provider: 'livekit' } },
      { estimator: { estimate: (...args) => (seen.push(args), 0) } },
    );
    e.setLastAssistantMessage('Anything else?');
    speak(e, 'No.');
    expect(seen).toEqual([['No.', 'Anything else?']]);
  });

  it('by default waits longer after a conjunction than after a full stop', () => {
    const plan = { smartEndpointingPlan: { provider: 'livekit' } } as const;
    const trailing = endpointer(plan);
    speak(trailing, 'I would like a pizza and');
    const finished = endpointer(plan);
    speak(finished, 'I would like a pizza.');
    expect(trailing.poll(10_000)?.stillSpeakingProbability).toBe(0.9);
    expect(finished.poll(10_000)?.stillSpeakingProbability).toBe(0.15);
  });

  it('is selected by the deprecated smartEndpointingEnabled "livekit"', () => {
    const e = endpointer({ smartEndpointingEnabled: 'livekit' }, { estimator: fixedEstimator(1) });
    speak(e, 'Hello.');
    expect(expectEndOfTurnAt(e, 4020).reason).toBe('smart-livekit');
  });

  it('is compiled once per plan', () => {
    const plan = resolveStartSpeakingPlan({ smartEndpointingPlan: { provider: 'livekit' } });
    expect(compileEndpointingPlan(plan)).toBe(compileEndpointingPlan(plan));
    expect(compileEndpointingPlan(plan).waitFunction).not.toBeNull();
  });

  it('rejects an unsafe waitFunction when the plan is compiled', () => {
    const plan = resolveStartSpeakingPlan({
      smartEndpointingPlan: { provider: 'livekit', waitFunction: 'import({}, {})' },
    });
    expect(() => compileEndpointingPlan(plan)).toThrow(/function "import" is not allowed/);
  });
});

describe('Endpointer: smartEndpointingPlan vapi', () => {
  it.each([
    ['I would like to order um', 2000],
    ['So the thing is,', 1200],
    ['My account is 4421', 1000],
    ['I would like to change my booking', 1000],
    ['yes', 600],
    ['I would like to change my booking.', 400],
    ['Yes please.', 200],
    ['Can you hear me?', 150],
  ])('waits after "%s" %i ms', (text, waitMs) => {
    const e = endpointer({ smartEndpointingPlan: { provider: 'vapi' } });
    speak(e, text);
    expect(expectEndOfTurnAt(e, 1000 + waitMs)).toMatchObject({ reason: 'smart-vapi', waitMs });
  });

  it('is selected by the deprecated smartEndpointingEnabled true', () => {
    const e = endpointer({ smartEndpointingEnabled: true });
    speak(e, 'Can you hear me?');
    expect(expectEndOfTurnAt(e, 1150).reason).toBe('smart-vapi');
  });
});

describe('Endpointer: custom-endpointing-model', () => {
  const plan = {
    smartEndpointingPlan: { provider: 'custom-endpointing-model', server: { url: 'https://x' } },
  } as const;

  it('asks once per candidate and waits the returned timeout', () => {
    const e = endpointer(plan);
    e.setLastAssistantMessage('Name?');
    speak(e, 'Jane');
    expect(e.pendingEndOfTurnAtMs).toBeNull();
    expect(e.awaitingModel).toBe(true);
    const request = e.takeModelRequest()!;
    expect(request).toMatchObject({ transcript: 'Jane', lastAssistantMessage: 'Name?' });
    expect(e.takeModelRequest()).toBeNull();
    e.onModelTimeout(request.requestId, 0.7, 1300);
    expect(expectEndOfTurnAt(e, 1700)).toMatchObject({
      reason: 'custom-endpointing-model',
      waitMs: 700,
    });
  });

  it('ignores answers to superseded requests', () => {
    const e = endpointer(plan);
    speak(e, 'Jane');
    const first = e.takeModelRequest()!;
    e.onSpeechStart(1100);
    e.onModelTimeout(first.requestId, 0, 1150);
    expect(e.pendingEndOfTurnAtMs).toBeNull();
    e.onTranscript('Doe', true, 1400);
    e.onSpeechStop(1500);
    const second = e.takeModelRequest()!;
    expect(second.requestId).not.toBe(first.requestId);
    e.onModelTimeout(second.requestId, 0.2, 1600);
    expect(expectEndOfTurnAt(e, 1700).transcript).toBe('Jane Doe');
  });

  it('falls back to the transcription plan when the request fails', () => {
    const e = endpointer(plan);
    speak(e, 'Jane.');
    e.onModelTimeout(e.takeModelRequest()!.requestId, null, 1400);
    expect(expectEndOfTurnAt(e, 1100).reason).toBe('transcription-punctuation');
  });
});

describe('Endpointer: transcriber end-of-turn detection', () => {
  it('replaces the transcription plan when there is no smart plan', () => {
    const e = endpointer({}, { transcriberEndOfTurn: true });
    speak(e, 'Hello.');
    expect(e.pendingEndOfTurnAtMs).toBeNull();
    e.onTranscriberEndOfTurn(1250);
    expect(expectEndOfTurnAt(e, 1250)).toMatchObject({
      reason: 'transcriber-end-of-turn',
      waitMs: 0,
    });
  });

  it('yields to custom rules and to a smart plan', () => {
    const ruled = endpointer(
      { customEndpointingRules: [{ type: 'customer', regex: 'Hello', timeoutSeconds: 2 }] },
      { transcriberEndOfTurn: true },
    );
    speak(ruled, 'Hello.');
    ruled.onTranscriberEndOfTurn(1250);
    expect(expectEndOfTurnAt(ruled, 3000).reason).toBe('custom-rule');
    const smart = endpointer(
      { smartEndpointingPlan: { provider: 'vapi' } },
      { transcriberEndOfTurn: true },
    );
    speak(smart, 'Hello?');
    smart.onTranscriberEndOfTurn(1010);
    expect(expectEndOfTurnAt(smart, 1150).reason).toBe('smart-vapi');
  });
});
