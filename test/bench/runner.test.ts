import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../bench/harness/clock.js';
import { fakeTransportFactory } from '../../bench/harness/fake-transport.js';
import { PacingTimer } from '../../bench/harness/pacing-timer.js';
import { runCalls, type Progress } from '../../bench/harness/runner.js';
import type { LoadedScript, LoadedTurn } from '../../bench/harness/script.js';
import { FRAME_MS, signal } from './synthetic-audio.js';

function turn(
  kind: LoadedTurn['kind'],
  speechMs: number,
  timing: { pauseBeforeMs?: number; afterReplyOnsetMs?: number; pauseAtMs?: number } = {},
): LoadedTurn {
  const bursts =
    timing.pauseAtMs === undefined
      ? [{ fromMs: 100, toMs: 100 + speechMs }]
      : [
          { fromMs: 100, toMs: 100 + timing.pauseAtMs },
          { fromMs: 100 + timing.pauseAtMs + 500, toMs: 600 + speechMs },
        ];
  return {
    kind,
    audio: `${kind}-${speechMs}.wav`,
    pauseBeforeMs: timing.pauseBeforeMs ?? 300,
    afterReplyOnsetMs: timing.afterReplyOnsetMs ?? 1000,
    pauses: [],
    // 100 ms of silence before and after the speech, as in a recording.
    samples: signal(speechMs + 200 + (timing.pauseAtMs === undefined ? 0 : 500), bursts),
  };
}

const conversation: LoadedScript = {
  name: 'test',
  assistantSpeaksFirst: false,
  turns: [
    turn('speech', 1000),
    turn('backchannel', 300, { afterReplyOnsetMs: 400 }),
    turn('interruption', 800, { afterReplyOnsetMs: 1200 }),
    turn('speech', 600, { pauseBeforeMs: 500 }),
  ],
};

function within(actual: number | null | undefined, expected: number): void {
  expect(actual).not.toBeNull();
  expect(Math.abs(actual! - expected)).toBeLessThanOrEqual(FRAME_MS);
}

describe('runCalls against the fake server', () => {
  it('measures the configured latency, barge-in and backchannel of every call, within one frame', async () => {
    const clock = new VirtualClock();
    const progress: Progress[] = [];
    const run = runCalls({
      clock,
      transport: fakeTransportFactory({
        clock,
        latencyMs: 700,
        replyMs: 3000,
        bargeInAfterMs: 400,
        jitterMs: 12,
        sendStages: true,
      }),
      scripts: [conversation],
      calls: 5,
      staggerMs: 37,
      onProgress: (p) => progress.push(p),
    });
    const result = await clock.runUntil(run, 120_000);
    expect(result.calls).toHaveLength(5);
    for (const call of result.calls) {
      expect(call.error).toBeNull();
      expect(call.turns.map((t) => t.kind)).toEqual([
        'speech',
        'backchannel',
        'interruption',
        'speech',
      ]);
      const [first, backchannel, interruption, last] = call.turns;
      within(first!.voiceToVoiceMs, 700);
      expect(backchannel!.duringAssistantSpeech).toBe(true);
      expect(backchannel!.falseInterruption).toBe(false);
      expect(interruption!.duringAssistantSpeech).toBe(true);
      // The fake stops 400 ms into the caller's speech; the frame then in flight still plays.
      within(interruption!.bargeInStopMs, 410);
      within(interruption!.clearMs, 400);
      within(interruption!.voiceToVoiceMs, 700);
      within(last!.voiceToVoiceMs, 700);
      expect(call.turns.some((t) => t.cutOff)).toBe(false);
      expect(first!.stagesMs).toEqual({
        endpointingMs: 200,
        modelFirstTokenMs: 300,
        voiceFirstByteMs: 200,
      });
      expect(call.messageCounts.clear).toBe(1);
    }
    const final = progress[progress.length - 1]!;
    expect(final).toMatchObject({ callsDone: 5, callsRunning: 0, callsFailed: 0, turnsDone: 20 });
    within(final.voiceToVoiceP50Ms, 700);
  });

  it('reports a false interruption when a backchannel stops the assistant', async () => {
    const clock = new VirtualClock();
    const run = runCalls({
      clock,
      transport: fakeTransportFactory({
        clock,
        latencyMs: 500,
        replyMs: 3000,
        bargeInAfterMs: 200,
      }),
      scripts: [{ ...conversation, turns: conversation.turns.slice(0, 2) }],
      calls: 1,
    });
    const [call] = (await clock.runUntil(run, 60_000)).calls;
    expect(call!.turns[1]!.falseInterruption).toBe(true);
    within(call!.turns[0]!.voiceToVoiceMs, 500);
  });

  it('reports a cut-off when the assistant answers into a mid-sentence pause', async () => {
    const clock = new VirtualClock();
    const run = runCalls({
      clock,
      transport: fakeTransportFactory({ clock, latencyMs: 300, replyMs: 1000 }),
      scripts: [
        {
          name: 'pause',
          assistantSpeaksFirst: false,
          turns: [turn('speech', 1200, { pauseAtMs: 400 })],
        },
      ],
      calls: 1,
    });
    const [call] = (await clock.runUntil(run, 60_000)).calls;
    expect(call!.turns[0]!.cutOff).toBe(true);
  });

  it('waits for the first message when the assistant speaks first, and repeats the script', async () => {
    const clock = new VirtualClock();
    const run = runCalls({
      clock,
      transport: fakeTransportFactory({
        clock,
        latencyMs: 900,
        replyMs: 1500,
        firstMessageAfterMs: 800,
      }),
      scripts: [{ name: 'first', assistantSpeaksFirst: true, turns: [turn('speech', 700)] }],
      calls: 2,
      turnsPerCall: 3,
    });
    const { calls } = await clock.runUntil(run, 60_000);
    for (const [index, call] of calls.entries()) {
      expect(call.turns).toHaveLength(3);
      // The first turn starts 300 ms after the first message (800 → 2300 ms) ended, its speech
      // 100 ms into its audio; calls start 100 ms apart.
      expect(call.turns[0]!.duringAssistantSpeech).toBe(false);
      within(call.turns[0]!.callerStartMs, index * 100 + 2300 + 300 + 100);
      for (const t of call.turns) {
        within(t.voiceToVoiceMs, 900);
      }
    }
  });

  it('records a failed connect as the call error without throwing', async () => {
    const clock = new VirtualClock();
    const run = runCalls({
      clock,
      transport: () => ({
        connect: () => Promise.reject(new Error('refused')),
        sendAudio: () => undefined,
        sendMessage: () => undefined,
        close: () => Promise.resolve(),
      }),
      scripts: [conversation],
      calls: 2,
    });
    const { calls } = await clock.runUntil(run, 60_000);
    expect(calls.map((c) => c.error?.message)).toEqual(['refused', 'refused']);
    expect(calls.every((c) => c.turns.length === 0)).toBe(true);
  });
});

describe('PacingTimer', () => {
  it('drives every caller from one timer on a fixed grid', () => {
    const clock = new VirtualClock();
    const pacing = new PacingTimer(clock, 20);
    const ticks: number[][] = [[], [], []];
    const removers = ticks.map((list) => pacing.add((nowMs) => list.push(nowMs)));
    clock.advanceBy(100);
    expect(clock.pendingTimerCount).toBe(1);
    expect(ticks).toEqual([0, 1, 2].map(() => [20, 40, 60, 80, 100]));
    for (const remove of removers) {
      remove();
    }
    expect(clock.pendingTimerCount).toBe(0);
  });
});
