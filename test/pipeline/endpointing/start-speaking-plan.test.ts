import type { Static } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import type { StartSpeakingPlan as StartSpeakingPlanSchema } from '../../../src/control/schemas/assistant-plans.js';
import { ParlaError } from '../../../src/core/errors.js';
import { assistantStartDelayMs } from '../../../src/pipeline/endpointing/assistant-start-delay.js';
import {
  DEFAULT_LIVEKIT_WAIT_FUNCTION,
  resolveStartSpeakingPlan,
  secondsToMs,
  type StartSpeakingPlanInput,
} from '../../../src/pipeline/plans.js';

describe('resolveStartSpeakingPlan', () => {
  it('fills the documented defaults', () => {
    expect(resolveStartSpeakingPlan({})).toEqual({
      waitSeconds: 0.4,
      smartEndpointingPlan: null,
      customEndpointingRules: [],
      transcriptionEndpointingPlan: {
        onPunctuationSeconds: 0.1,
        onNoPunctuationSeconds: 1.5,
        onNumberSeconds: 0.5,
      },
    });
    expect(resolveStartSpeakingPlan()).toEqual(resolveStartSpeakingPlan({}));
  });

  it('keeps given values and fills the rest of a partial transcription plan', () => {
    const plan = resolveStartSpeakingPlan({
      waitSeconds: 0,
      transcriptionEndpointingPlan: { onNumberSeconds: 2 },
    });
    expect(plan.waitSeconds).toBe(0);
    expect(plan.transcriptionEndpointingPlan).toEqual({
      onPunctuationSeconds: 0.1,
      onNoPunctuationSeconds: 1.5,
      onNumberSeconds: 2,
    });
  });

  it('fills the livekit default wait function', () => {
    expect(
      resolveStartSpeakingPlan({ smartEndpointingPlan: { provider: 'livekit' } }),
    ).toMatchObject({
      smartEndpointingPlan: { provider: 'livekit', waitFunction: DEFAULT_LIVEKIT_WAIT_FUNCTION },
    });
    expect(DEFAULT_LIVEKIT_WAIT_FUNCTION).toBe('20 + 500 * sqrt(x) + 2500 * x^3');
  });

  it('reads the deprecated smartEndpointingEnabled, which a smart plan overrides', () => {
    const smart = (input: StartSpeakingPlanInput) =>
      resolveStartSpeakingPlan(input).smartEndpointingPlan;
    expect(smart({ smartEndpointingEnabled: false })).toBeNull();
    expect(smart({ smartEndpointingEnabled: true })).toEqual({ provider: 'vapi' });
    expect(smart({ smartEndpointingEnabled: 'livekit' })).toEqual({
      provider: 'livekit',
      waitFunction: DEFAULT_LIVEKIT_WAIT_FUNCTION,
    });
    expect(
      smart({ smartEndpointingEnabled: 'livekit', smartEndpointingPlan: { provider: 'vapi' } }),
    ).toEqual({ provider: 'vapi' });
  });

  it('names every out-of-range field in one validation error', () => {
    let caught: unknown;
    try {
      resolveStartSpeakingPlan({
        waitSeconds: 6,
        transcriptionEndpointingPlan: { onPunctuationSeconds: -1 },
        customEndpointingRules: [{ type: 'customer', regex: 'x', timeoutSeconds: 16 }],
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ParlaError);
    const error = caught as ParlaError;
    expect(error.code).toBe('ERR_VALIDATION');
    expect(error.details).toEqual([
      'startSpeakingPlan.waitSeconds must be a number from 0 to 5, got 6',
      'startSpeakingPlan.customEndpointingRules[0].timeoutSeconds must be a number from 0 to 15, got 16',
      'startSpeakingPlan.transcriptionEndpointingPlan.onPunctuationSeconds must be a number from 0 to 3, got -1',
    ]);
  });

  it('checks stored rules: their kind and the regexes it needs', () => {
    expect(() =>
      resolveStartSpeakingPlan({
        customEndpointingRules: [
          { type: 'robot', regex: 'x', timeoutSeconds: 1 },
          { type: 'both', assistantRegex: 'x', timeoutSeconds: 1 },
          { type: 'customer', timeoutSeconds: 1 },
        ],
      }),
    ).toThrow(
      [
        'startSpeakingPlan.customEndpointingRules[0].type must be assistant, customer, user or both, got robot',
        'startSpeakingPlan.customEndpointingRules[1].customerRegex is required for a rule of type both',
        'startSpeakingPlan.customEndpointingRules[2].regex is required for a rule of type customer',
      ].join('; '),
    );
  });

  it('accepts what the control API validated (type check)', () => {
    const stored: Static<typeof StartSpeakingPlanSchema> = {
      waitSeconds: 1,
      smartEndpointingPlan: { provider: 'custom-endpointing-model' },
      customEndpointingRules: [{ type: 'user', regex: 'a', timeoutSeconds: 1 }],
    };
    expect(resolveStartSpeakingPlan(stored).smartEndpointingPlan).toEqual({
      provider: 'custom-endpointing-model',
      server: undefined,
    });
  });
});

describe('assistantStartDelayMs', () => {
  it.each([
    [0.4, 0, 400],
    [0.4, 150, 250],
    [0.4, 400, 0],
    [0.4, 900, 0],
    [0, 0, 0],
    [0.3, 0, 300],
    [5, 1234, 3766],
  ])(
    'waitSeconds %s after %i ms of pipeline holds audio %i ms more',
    (waitSeconds, elapsedMs, delayMs) => {
      expect(assistantStartDelayMs(waitSeconds, elapsedMs)).toBe(delayMs);
    },
  );

  it('converts seconds without float residue', () => {
    expect(1.005 * 1000).not.toBe(1005);
    expect(secondsToMs(1.005)).toBe(1005);
    expect(assistantStartDelayMs(1.005, 5)).toBe(1000);
  });
});
