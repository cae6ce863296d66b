import { describe, expect, it } from 'vitest';
import {
  BargeInDetector,
  type BargeInOptions,
} from '../../../src/pipeline/interruption/barge-in.js';
import {
  resolveStopSpeakingPlan,
  type StopSpeakingPlanInput,
} from '../../../src/pipeline/plans.js';

function detector(plan: StopSpeakingPlanInput = {}, options: BargeInOptions = {}) {
  const d = new BargeInDetector(resolveStopSpeakingPlan(plan), options);
  d.onAssistantSpeechStart(0);
  return d;
}

/** Feeds `count` 10 ms VAD frames from `startMs`; returns the first decision and its frame. */
function frames(d: BargeInDetector, startMs: number, count: number, isSpeech = true) {
  for (let i = 0; i < count; i++) {
    const decision = d.onVadFrame(isSpeech, startMs + i * 10, 10);
    if (decision !== null) {
      return { frame: i, decision };
    }
  }
  return null;
}

describe('BargeInDetector: voiceSeconds (numWords 0)', () => {
  it('does not interrupt after 190 ms of voice and does after 200 ms (default 0.2 s)', () => {
    const d = detector();
    expect(frames(d, 1000, 19)).toBeNull();
    expect(frames(d, 1190, 1)).toEqual({
      frame: 0,
      decision: { interrupt: true, reason: 'voice-seconds', atMs: 1200, transcript: '' },
    });
  });

  it('measures voice between VAD events with poll', () => {
    const d = detector();
    expect(d.onSpeechStart(1000)).toBeNull();
    expect(d.poll(1190)).toBeNull();
    expect(d.poll(1200)).toMatchObject({ reason: 'voice-seconds', atMs: 1200 });
  });

  it('needs the voice to be continuous', () => {
    const d = detector();
    expect(frames(d, 1000, 15)).toBeNull();
    expect(frames(d, 1150, 1, false)).toBeNull();
    expect(frames(d, 1160, 19)).toBeNull();
    expect(frames(d, 1350, 1)?.decision.atMs).toBe(1360);
    const events = detector();
    events.onSpeechStart(0);
    events.onSpeechStop(150);
    expect(events.poll(400)).toBeNull();
  });

  it('uses the configured voiceSeconds', () => {
    const d = detector({ voiceSeconds: 0.5 });
    expect(frames(d, 0, 49)).toBeNull();
    expect(frames(d, 490, 1)?.decision.atMs).toBe(500);
  });

  it('interrupts on the first voice with voiceSeconds 0', () => {
    const d = detector({ voiceSeconds: 0 });
    expect(d.onSpeechStart(1234)).toMatchObject({ reason: 'voice-seconds', atMs: 1234 });
  });

  it('counts voice that began before the assistant only from the assistant start', () => {
    const d = new BargeInDetector(resolveStopSpeakingPlan({}));
    d.onSpeechStart(0);
    d.onAssistantSpeechStart(1000);
    expect(d.poll(1199)).toBeNull();
    expect(d.poll(1200)?.reason).toBe('voice-seconds');
  });

  it('ignores voice while the assistant is silent', () => {
    const d = detector();
    d.onAssistantSpeechEnd(500);
    d.onSpeechStart(1000);
    expect(d.poll(5000)).toBeNull();
    expect(d.onTranscript('stop', true, 5000)).toBeNull();
  });

  it('interrupts on an interruption phrase before voiceSeconds has passed', () => {
    const d = detector();
    d.onSpeechStart(1000);
    expect(d.onTranscript('Wait', false, 1050)).toMatchObject({
      reason: 'interruption-phrase',
      atMs: 1050,
      transcript: 'Wait',
    });
  });

  it('holds the voice trigger back while the transcript is only acknowledgements', () => {
    const d = detector();
    d.onSpeechStart(1000);
    expect(d.onTranscript('okay', false, 1100)).toBeNull();
    expect(d.poll(1500)).toBeNull();
    expect(d.onTranscript('okay tell me', false, 1600)).toMatchObject({
      reason: 'voice-seconds',
      atMs: 1600,
    });
  });

  it('lets an acknowledgement hold back only the voice run it was heard in', () => {
    const d = detector();
    d.onSpeechStart(1000);
    d.onTranscript('okay', true, 1100);
    d.onSpeechStop(1300);
    expect(d.poll(1300)).toBeNull();
    d.onSpeechStart(2000);
    expect(d.poll(2199)).toBeNull();
    expect(d.poll(2200)).toMatchObject({ reason: 'voice-seconds', transcript: 'okay' });
  });

  it('interrupts each message at most once', () => {
    const d = detector();
    d.onSpeechStart(0);
    expect(d.poll(200)).not.toBeNull();
    expect(d.poll(300)).toBeNull();
    expect(d.onTranscript('stop', true, 300)).toBeNull();
    d.onAssistantSpeechStart(2000);
    expect(d.poll(2200)?.atMs).toBe(2200);
  });
});

describe('BargeInDetector: numWords', () => {
  it('interrupts at numWords words, not before (3: two words vs three)', () => {
    const d = detector({ numWords: 3 });
    expect(d.onTranscript('tell me', false, 1000)).toBeNull();
    expect(d.onTranscript('tell me more', false, 1100)).toMatchObject({
      reason: 'num-words',
      atMs: 1100,
      transcript: 'tell me more',
    });
  });

  it('counts the words of finals and the live partial together', () => {
    const d = detector({ numWords: 3 });
    expect(d.onTranscript('Tell me.', true, 1000)).toBeNull();
    expect(d.onTranscript('', false, 1050)).toBeNull();
    expect(d.onTranscript('More', false, 1100)?.transcript).toBe('Tell me. More');
  });

  it('ignores voice activity', () => {
    const d = detector({ numWords: 1 });
    d.onSpeechStart(0);
    expect(d.poll(5000)).toBeNull();
    expect(frames(d, 5000, 100)).toBeNull();
  });

  it('never interrupts on acknowledgements, even past numWords', () => {
    expect(detector({ numWords: 1 }).onTranscript('okay', true, 1000)).toBeNull();
    for (const text of [
      'Yeah, okay.',
      'okay yeah',
      'Uh-huh',
      'uh huh',
      "I'm listening",
      'mm-hmm I see',
    ]) {
      expect(detector({ numWords: 1 }).onTranscript(text, true, 1000)).toBeNull();
    }
    expect(detector({ numWords: 1 }).onTranscript('okay tell me more', true, 1000)?.reason).toBe(
      'num-words',
    );
  });

  it('interrupts at once on an interruption phrase, whatever numWords', () => {
    expect(detector({ numWords: 5 }).onTranscript('wait', false, 1000)).toMatchObject({
      reason: 'interruption-phrase',
      atMs: 1000,
    });
    expect(detector({ numWords: 10 }).onTranscript("Don't do that", false, 1000)?.reason).toBe(
      'interruption-phrase',
    );
    expect(detector({ numWords: 10 }).onTranscript('Okay, but', false, 1000)?.reason).toBe(
      'interruption-phrase',
    );
    expect(detector({ numWords: 5 }).onTranscript('I know', false, 1000)).toBeNull();
  });

  it('uses configured phrase lists', () => {
    const plan = { numWords: 1, acknowledgementPhrases: [], interruptionPhrases: ['hold on'] };
    expect(detector(plan).onTranscript('okay', true, 0)?.reason).toBe('num-words');
    expect(detector({ ...plan, numWords: 5 }).onTranscript('hold', true, 0)).toBeNull();
    expect(detector({ ...plan, numWords: 5 }).onTranscript('Hold on!', true, 0)?.reason).toBe(
      'interruption-phrase',
    );
    const both = detector({ numWords: 5, acknowledgementPhrases: ['no'] });
    expect(both.onTranscript('no', true, 0)?.reason).toBe('interruption-phrase');
  });

  it('counts only words heard over the current message', () => {
    const d = detector({ numWords: 2 });
    expect(d.onTranscript('hello', true, 100)).toBeNull();
    d.onAssistantSpeechEnd(500);
    expect(d.onTranscript('there', true, 600)).toBeNull();
    d.onAssistantSpeechStart(1000);
    expect(d.onTranscript('friend', true, 1100)).toBeNull();
  });
});

describe('BargeInDetector: backoffSeconds', () => {
  it('blocks output until atMs + backoff (default 1 s)', () => {
    const d = detector();
    expect(d.canSpeakAt(0)).toBe(true);
    d.onSpeechStart(1000);
    d.poll(1200);
    expect(d.blockedUntilMs).toBe(2200);
    expect(d.canSpeakAt(2199)).toBe(false);
    expect(d.canSpeakAt(2200)).toBe(true);
  });

  it('uses the configured backoff, including 0', () => {
    const d = detector({ backoffSeconds: 2.5, numWords: 1 });
    d.onTranscript('hey', false, 100);
    expect(d.canSpeakAt(2599)).toBe(false);
    expect(d.canSpeakAt(2600)).toBe(true);
    const none = detector({ backoffSeconds: 0, numWords: 1 });
    none.onTranscript('hey', false, 100);
    expect(none.canSpeakAt(100)).toBe(true);
  });

  it('is forgotten by reset', () => {
    const d = detector({ numWords: 1 });
    d.onTranscript('hey', false, 100);
    d.reset();
    expect(d.canSpeakAt(100)).toBe(true);
    expect(d.interruptibleNow).toBe(false);
  });
});

describe('BargeInDetector: firstMessageInterruptionsEnabled', () => {
  it('makes the first message uninterruptible by default', () => {
    const d = new BargeInDetector(resolveStopSpeakingPlan({}));
    d.onAssistantSpeechStart(0, true);
    expect(d.interruptibleNow).toBe(false);
    d.onSpeechStart(100);
    expect(d.poll(2000)).toBeNull();
    expect(d.onTranscript('stop', true, 2000)).toBeNull();
    d.onAssistantSpeechStart(3000, false);
    expect(d.poll(3200)?.reason).toBe('voice-seconds');
  });

  it('lets the first message be interrupted when enabled', () => {
    const d = new BargeInDetector(resolveStopSpeakingPlan({}), {
      firstMessageInterruptionsEnabled: true,
    });
    d.onAssistantSpeechStart(0, true);
    expect(d.onTranscript('stop', true, 50)?.reason).toBe('interruption-phrase');
  });
});
