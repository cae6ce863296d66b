import { describe, expect, it } from 'vitest';
import { ParlaError } from '../../../src/core/errors.js';
import { compileEndpointingPlan } from '../../../src/pipeline/endpointing/endpointing-plan.js';
import {
  resolveStartSpeakingPlan,
  type CustomEndpointingRule,
} from '../../../src/pipeline/plans.js';
import { endpointer, expectEndOfTurnAt, speak } from './endpointer-harness.js';

describe('Endpointer: transcriptionEndpointingPlan', () => {
  it.each([
    ['Hello there.', 100, 'transcription-punctuation'],
    ['Is that right?', 100, 'transcription-punctuation'],
    ['My zip is 94107', 500, 'transcription-number'],
    ['extension twenty', 500, 'transcription-number'],
    ['I am 25.', 100, 'transcription-punctuation'],
    ['I was thinking', 1500, 'transcription-no-punctuation'],
    ['I was thinking,', 1500, 'transcription-no-punctuation'],
    ['Well...', 1500, 'transcription-no-punctuation'],
  ])('"%s" waits %i ms (%s) with the defaults', (text, waitMs, reason) => {
    const e = endpointer();
    speak(e, text);
    expect(expectEndOfTurnAt(e, 1000 + waitMs)).toEqual({
      endOfTurnAtMs: 1000 + waitMs,
      waitMs,
      reason,
      transcript: text,
      ruleIndex: null,
      stillSpeakingProbability: null,
    });
  });

  it('uses each configured field', () => {
    const plan = {
      transcriptionEndpointingPlan: {
        onPunctuationSeconds: 0.3,
        onNoPunctuationSeconds: 2.5,
        onNumberSeconds: 1.2,
      },
    };
    for (const [text, waitMs] of [
      ['Done.', 300],
      ['and then', 2500],
      ['call 911', 1200],
    ] as const) {
      const e = endpointer(plan);
      speak(e, text);
      expect(expectEndOfTurnAt(e, 1000 + waitMs).waitMs).toBe(waitMs);
    }
  });

  it('counts from the last transcript change when it comes after the speech stop', () => {
    const e = endpointer();
    e.onSpeechStart(0);
    e.onTranscript('I want', false, 800);
    e.onSpeechStop(1000);
    expect(e.pendingEndOfTurnAtMs).toBe(2500);
    e.onTranscript('I want pizza.', true, 1200);
    const decision = expectEndOfTurnAt(e, 1300);
    expect(decision.reason).toBe('transcription-punctuation');
    expect(decision.transcript).toBe('I want pizza.');
  });

  it('does not move the end of turn for a transcript that repeats the text', () => {
    const e = endpointer();
    e.onTranscript('Hello.', false, 1000);
    e.onTranscript('Hello.', true, 1050);
    expect(expectEndOfTurnAt(e, 1100).transcript).toBe('Hello.');
  });

  it('cancels a pending end of turn when speech resumes, and joins the turn', () => {
    const e = endpointer();
    speak(e, 'Hello.');
    expect(e.pendingEndOfTurnAtMs).toBe(1100);
    e.onSpeechStart(1050);
    expect(e.pendingEndOfTurnAtMs).toBeNull();
    expect(e.poll(1100)).toBeNull();
    expect(e.poll(5000)).toBeNull();
    e.onTranscript('How are', false, 1300);
    e.onTranscript('How are you?', true, 1400);
    e.onSpeechStop(1500);
    expect(expectEndOfTurnAt(e, 1600).transcript).toBe('Hello. How are you?');
  });

  it('never ends a turn while the customer is speaking or without words', () => {
    const e = endpointer();
    e.onSpeechStart(0);
    e.onTranscript('Hello.', true, 300);
    expect(e.poll(10_000)).toBeNull();
    const silent = endpointer();
    silent.onSpeechStart(0);
    silent.onSpeechStop(500);
    expect(silent.poll(10_000)).toBeNull();
  });

  it('works from transcripts alone, without VAD events', () => {
    const e = endpointer();
    e.onTranscript('Yes.', true, 500);
    expect(expectEndOfTurnAt(e, 600).transcript).toBe('Yes.');
  });

  it('hands a decision out once and starts a new turn', () => {
    const e = endpointer();
    speak(e, 'First.');
    expect(e.poll(2000)?.transcript).toBe('First.');
    expect(e.poll(3000)).toBeNull();
    expect(e.customerTranscript).toBe('');
    speak(e, 'Second.', 5000);
    expect(expectEndOfTurnAt(e, 5100).transcript).toBe('Second.');
  });
});

describe('Endpointer: customEndpointingRules', () => {
  const digits: CustomEndpointingRule = { type: 'customer', regex: '\\d{3}$', timeoutSeconds: 3 };

  it('take precedence over the transcription plan', () => {
    const e = endpointer({ customEndpointingRules: [digits] });
    speak(e, 'my number is 555');
    const decision = expectEndOfTurnAt(e, 4000);
    expect(decision).toMatchObject({ reason: 'custom-rule', waitMs: 3000, ruleIndex: 0 });
  });

  it.each([{ provider: 'livekit' } as const, { provider: 'vapi' } as const])(
    'take precedence over the smart plan ($provider)',
    (smartEndpointingPlan) => {
      const e = endpointer({ customEndpointingRules: [digits], smartEndpointingPlan });
      speak(e, 'my number is 555');
      expect(expectEndOfTurnAt(e, 4000).reason).toBe('custom-rule');
    },
  );

  it('fall through to the next stage when none matches', () => {
    const e = endpointer({ customEndpointingRules: [digits] });
    speak(e, 'Thanks.');
    expect(expectEndOfTurnAt(e, 1100).reason).toBe('transcription-punctuation');
  });

  it('match an assistant rule against the last assistant message', () => {
    const rule: CustomEndpointingRule = {
      type: 'assistant',
      regex: 'phone number',
      timeoutSeconds: 5,
    };
    const e = endpointer({ customEndpointingRules: [rule] });
    e.setLastAssistantMessage('What is your phone number?');
    speak(e, 'Sure.');
    expect(expectEndOfTurnAt(e, 6000).ruleIndex).toBe(0);
    e.setLastAssistantMessage('How can I help?');
    speak(e, 'Sure.', 8000);
    expect(expectEndOfTurnAt(e, 8100).reason).toBe('transcription-punctuation');
  });

  it('re-evaluate a pending end of turn when the assistant message changes', () => {
    const rule: CustomEndpointingRule = { type: 'assistant', regex: 'spell', timeoutSeconds: 2 };
    const e = endpointer({ customEndpointingRules: [rule] });
    speak(e, 'Smith.');
    expect(e.pendingEndOfTurnAtMs).toBe(1100);
    e.setLastAssistantMessage('Could you spell that?');
    expect(e.pendingEndOfTurnAtMs).toBe(3000);
  });

  it('match a `both` rule only when both regexes match', () => {
    const rule: CustomEndpointingRule = {
      type: 'both',
      assistantRegex: 'address',
      customerRegex: '^\\d+',
      timeoutSeconds: 4,
    };
    const cases: [string, string, number][] = [
      ['What is your address?', '12 Main', 5000],
      ['What is your address?', 'Main street', 2500],
      ['What is your name?', '12 Main', 2500],
    ];
    for (const [assistant, customer, atMs] of cases) {
      const e = endpointer({ customEndpointingRules: [rule] });
      e.setLastAssistantMessage(assistant);
      speak(e, customer);
      expect(e.pendingEndOfTurnAtMs).toBe(atMs);
    }
  });

  it('stop at the first match, in order', () => {
    const rules: CustomEndpointingRule[] = [
      { type: 'customer', regex: 'zzz', timeoutSeconds: 9 },
      { type: 'user', regex: 'wait', timeoutSeconds: 2 },
      { type: 'customer', regex: 'wait', timeoutSeconds: 7 },
    ];
    const e = endpointer({ customEndpointingRules: rules });
    speak(e, 'wait a second');
    expect(expectEndOfTurnAt(e, 3000)).toMatchObject({ ruleIndex: 1, waitMs: 2000 });
  });

  it('with timeoutSeconds 0 end the turn at once', () => {
    const e = endpointer({
      customEndpointingRules: [{ type: 'customer', regex: 'bye', timeoutSeconds: 0 }],
    });
    speak(e, 'ok bye');
    expect(expectEndOfTurnAt(e, 1000).waitMs).toBe(0);
  });

  it.each([
    ['ignore-case', 'PHONE', 'my phone', false, true],
    ['whole-word', 'no', 'I know', true, false],
    ['whole-word', 'no', 'no thanks', true, true],
    ['multi-line', '^yes$', 'okay\nyes', false, true],
    ['multi-line', '^yes$', 'yes sir', false, false],
  ] as const)(
    'apply regexOption %s: /%s/ on %j matches %s without it, %s with it',
    (type, regex, text, matchesWithout, matchesWith) => {
      const matches = (enabled: boolean) => {
        const e = endpointer({
          customEndpointingRules: [
            { type: 'customer', regex, regexOptions: [{ type, enabled }], timeoutSeconds: 10 },
          ],
        });
        e.onTranscript(text, true, 1000);
        return e.pendingEndOfTurnAtMs === 11_000;
      };
      expect(matches(false)).toBe(matchesWithout);
      expect(matches(true)).toBe(matchesWith);
    },
  );

  it('apply per-side regex options of a `both` rule', () => {
    const rule: CustomEndpointingRule = {
      type: 'both',
      assistantRegex: 'NUMBER',
      assistantRegexOptions: [{ type: 'ignore-case', enabled: true }],
      customerRegex: 'ONE',
      timeoutSeconds: 6,
    };
    const e = endpointer({ customEndpointingRules: [rule] });
    e.setLastAssistantMessage('your number?');
    e.onTranscript('one', true, 1000);
    expect(e.pendingEndOfTurnAtMs).toBe(1500);
    e.onTranscript('ONE', true, 1000);
    expect(e.pendingEndOfTurnAtMs).toBe(7000);
  });

  it('reject an invalid regex with a validation error naming the field', () => {
    const plan = resolveStartSpeakingPlan({
      customEndpointingRules: [
        { type: 'both', assistantRegex: 'ok', customerRegex: '(', timeoutSeconds: 1 },
      ],
    });
    expect(() => compileEndpointingPlan(plan)).toThrow(ParlaError);
    expect(() => compileEndpointingPlan(plan)).toThrow(
      /customEndpointingRules\[0\]\.customerRegex/,
    );
  });
});
