import { describe, expect, it } from 'vitest';
import { measureConversation, type TurnMark } from '../../bench/harness/measure-turns.js';
import { FRAME_MS, RATE_HZ, jitter, signal, timeline } from './synthetic-audio.js';

const tracker = { sampleRateHz: RATE_HZ };

function within(actual: number | null, expected: number): void {
  expect(actual).not.toBeNull();
  expect(Math.abs(actual! - expected)).toBeLessThanOrEqual(FRAME_MS);
}

function mark(index: number, kind: TurnMark['kind'], fromMs: number, toMs: number): TurnMark {
  return { index, kind, label: `turn-${index}`, sentStartMs: fromMs, sentEndMs: toMs };
}

describe('measureConversation', () => {
  it('voice-to-voice: caller end of speech → first assistant audio, with jittered arrival', () => {
    // Two turns: the caller speaks (with a short mid-sentence pause), the assistant replies after
    // 730 ms and then after 1210 ms; the assistant's frames arrive up to 15 ms late.
    const caller = signal(8000, [
      { fromMs: 300, toMs: 900 },
      { fromMs: 1050, toMs: 1600, kind: 'noise' },
      { fromMs: 4000, toMs: 5000 },
    ]);
    const assistant = signal(8000, [
      { fromMs: 1600 + 730, toMs: 3500 },
      { fromMs: 5000 + 1210, toMs: 7500 },
    ]);
    const next = jitter(15);
    const result = measureConversation(
      timeline(caller),
      timeline(assistant, { delayMs: () => next() }),
      [mark(0, 'speech', 0, 2000), mark(1, 'speech', 3800, 5200)],
      tracker,
      { expectedLatencyMs: 700 },
    );
    within(result.turns[0]!.voiceToVoiceMs, 730);
    within(result.turns[0]!.addedMs, 30);
    within(result.turns[1]!.voiceToVoiceMs, 1210);
    expect(result.turns.map((t) => t.cutOff)).toEqual([false, false]);
  });

  it('barge-in stop time: caller onset during assistant speech → assistant audio stops', () => {
    const assistant = signal(6000, [{ fromMs: 500, toMs: 2000 + 180 }]);
    const caller = signal(6000, [{ fromMs: 2000, toMs: 2600 }]);
    const result = measureConversation(
      timeline(caller),
      timeline(assistant),
      [mark(0, 'interruption', 1900, 2700)],
      tracker,
    );
    const turn = result.turns[0]!;
    expect(turn.duringAssistantSpeech).toBe(true);
    within(turn.bargeInStopMs, 180);
    expect(turn.falseInterruption).toBeNull();
  });

  it('false interruptions: a stop within the window and before the natural end', () => {
    const caller = signal(9000, [
      { fromMs: 1000, toMs: 1300 },
      { fromMs: 6000, toMs: 6300 },
    ]);
    // Replies of 3.6 s: the first stops 240 ms after "uh-huh"; the second plays on to its end.
    const assistant = signal(9000, [
      { fromMs: 200, toMs: 1240 },
      { fromMs: 5000, toMs: 8600 },
    ]);
    const result = measureConversation(
      timeline(caller),
      timeline(assistant),
      [mark(0, 'backchannel', 950, 1350), mark(1, 'backchannel', 5950, 6350)],
      tracker,
      { falseInterruptionWindowMs: 1000, expectedReplyMs: 3600 },
    );
    expect(result.turns.map((t) => t.falseInterruption)).toEqual([true, false]);
    within(result.turns[0]!.assistantStoppedAfterMs, 240);
    expect(result.turns.map((t) => t.voiceToVoiceMs)).toEqual([null, null]);
  });

  it('cut-offs: assistant audio that starts while the caller is mid-sentence', () => {
    // The caller pauses 500 ms mid-sentence (longer than the hangover); the assistant jumps in
    // 300 ms into the pause in turn 0, and waits for the end in turn 1.
    const caller = signal(12000, [
      { fromMs: 0, toMs: 800 },
      { fromMs: 1300, toMs: 2000 },
      { fromMs: 6000, toMs: 6800 },
      { fromMs: 7300, toMs: 8000 },
    ]);
    const assistant = signal(12000, [
      { fromMs: 1100, toMs: 1500 },
      { fromMs: 8600, toMs: 9500 },
    ]);
    const result = measureConversation(
      timeline(caller),
      timeline(assistant),
      [mark(0, 'speech', 0, 2100), mark(1, 'speech', 5900, 8100)],
      tracker,
    );
    expect(result.turns.map((t) => t.cutOff)).toEqual([true, false]);
    expect(result.turns[0]!.voiceToVoiceMs).toBeNull();
    within(result.turns[1]!.voiceToVoiceMs, 600);
    within(result.turns[1]!.callerEndMs, 8000);
  });

  it('late frames and holes in the assistant audio, within one frame', () => {
    const caller = signal(6000, [{ fromMs: 0, toMs: 500 }]);
    const assistant = signal(6000, [{ fromMs: 1000, toMs: 3000 }]);
    // Frames 60–62 (1200–1260 ms) never come; frame 100 (at 2000 ms) comes 60 ms late. Each leaves
    // the player 60 ms without audio. (Had the late frame come first, the player would have run
    // 60 ms behind from then on and the later drop would not have emptied it.)
    const result = measureConversation(
      timeline(caller),
      timeline(assistant, {
        delayMs: (k) => (k === 100 ? 60 : 0),
        drop: (k) => k >= 60 && k <= 62,
      }),
      [mark(0, 'speech', 0, 600)],
      tracker,
    );
    const turn = result.turns[0]!;
    expect(turn.lateChunks).toBe(2);
    within(turn.maxLateByMs, 60);
    expect(turn.holes).toBe(2);
    within(turn.holeMs, 60 + 60);
    within(turn.voiceToVoiceMs, 500);
  });

  it('silent gaps: silence frames sent in the middle of an utterance', () => {
    const caller = signal(5000, [{ fromMs: 0, toMs: 500 }]);
    const assistant = signal(5000, [
      { fromMs: 1000, toMs: 1600 },
      { fromMs: 1800, toMs: 2500 },
    ]);
    const result = measureConversation(
      timeline(caller),
      timeline(assistant),
      [mark(0, 'speech', 0, 600)],
      tracker,
    );
    expect(result.assistantSegments).toHaveLength(1);
    expect(result.turns[0]!.silentGaps).toBe(1);
    expect(result.turns[0]!.holes).toBe(0);
  });

  it("finds a turn's speech in its own audio, even right after the previous turn", () => {
    // A backchannel 150 ms after the caller's previous turn (less than the hangover).
    const caller = signal(6000, [
      { fromMs: 0, toMs: 1000 },
      { fromMs: 1150, toMs: 1500 },
    ]);
    const assistant = signal(6000, [{ fromMs: 800, toMs: 4000 }]);
    const result = measureConversation(
      timeline(caller),
      timeline(assistant),
      [mark(0, 'speech', 0, 1100), mark(1, 'backchannel', 1100, 1600)],
      tracker,
    );
    within(result.turns[0]!.callerEndMs, 1000);
    within(result.turns[1]!.callerStartMs, 1150);
    expect(result.turns[0]!.cutOff).toBe(true);
    expect(result.turns[1]!.falseInterruption).toBe(false);
  });

  it('reports nothing for a turn whose audio holds no speech', () => {
    const result = measureConversation(
      timeline(signal(2000, [])),
      timeline(signal(2000, [{ fromMs: 500, toMs: 900 }])),
      [mark(0, 'speech', 0, 1000)],
      tracker,
    );
    expect(result.turns[0]!.callerEndMs).toBeNull();
    expect(result.turns[0]!.voiceToVoiceMs).toBeNull();
  });
});
