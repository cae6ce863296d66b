/**
 * The "false interruptions" measure on synthetic audio: a backchannel counts only when it starts
 * during assistant audio and that audio stops within the barge-in window AND before the reply's
 * natural end. A short reply ending by itself just after a backchannel is not one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { measureConversation, type TurnMark } from '../../bench/harness/measure-turns.js';
import { summarize } from '../../bench/harness/result-file.js';
import { replyDurationMs } from '../../bench/harness/self-vendors.js';
import type { CallResult } from '../../bench/harness/runner.js';
import { RATE_HZ, signal, timeline } from './synthetic-audio.js';

const tracker = { sampleRateHz: RATE_HZ };
const REPLY_MS = 6000;
const WINDOW_MS = 1000;

function backchannel(index: number, fromMs: number, toMs: number): TurnMark {
  return { index, kind: 'backchannel', label: 'uh-huh', sentStartMs: fromMs, sentEndMs: toMs };
}

/** One call: a reply from 500 ms, "uh-huh" at 1500–1800 ms; the reply's audio ends at `replyEndMs`. */
function callWith(replyEndMs: number, options: Parameters<typeof measureConversation>[4]) {
  const caller = signal(9000, [{ fromMs: 1500, toMs: 1800, kind: 'noise' }]);
  const assistant = signal(9000, [{ fromMs: 500, toMs: replyEndMs }]);
  return measureConversation(
    timeline(caller),
    timeline(assistant),
    [backchannel(0, 1450, 1850)],
    tracker,
    { falseInterruptionWindowMs: WINDOW_MS, ...options },
  );
}

function rate(turns: CallResult['turns']): { count: number; of: number } {
  const call: CallResult = {
    index: 0,
    script: 'synthetic',
    callId: null,
    error: null,
    durationMs: 9000,
    turns,
    skippedTurns: 0,
    missingReplies: 0,
    lateChunks: 0,
    holes: 0,
    messageCounts: {},
  };
  return summarize([call]).falseInterruptions;
}

describe('false interruptions', () => {
  it('reads 0 % when the backchannel lands in a long reply that plays on to its end', () => {
    const result = callWith(500 + REPLY_MS, { expectedReplyMs: REPLY_MS });
    const turn = result.turns[0]!;
    expect(turn.duringAssistantSpeech).toBe(true);
    expect(turn.falseInterruption).toBe(false);
    expect(rate(result.turns)).toEqual({ count: 0, of: 1 });
  });

  it('reads 100 % when the backchannel stops a long reply', () => {
    // The assistant stops 300 ms after the onset, 4.7 s before the reply's natural end.
    const result = callWith(1800, { expectedReplyMs: REPLY_MS });
    expect(result.turns[0]!.falseInterruption).toBe(true);
    expect(result.turns[0]!.assistantStoppedAfterMs).toBeGreaterThan(280);
    expect(result.turns[0]!.assistantStoppedAfterMs).toBeLessThan(320);
    expect(rate(result.turns)).toEqual({ count: 1, of: 1 });
  });

  it('does not count a short reply that ends by itself just after the backchannel', () => {
    // The old rule (audio ends within the window) read this as a false interruption.
    const result = callWith(1900, { expectedReplyMs: 1400 });
    expect(result.turns[0]!.assistantStoppedAfterMs).toBeLessThan(WINDOW_MS);
    expect(result.turns[0]!.falseInterruption).toBe(false);
    expect(rate(result.turns)).toEqual({ count: 0, of: 1 });
  });

  it("decides by the server's clear message when the reply's length is unknown", () => {
    expect(callWith(1800, { clearsAtMs: [1760] }).turns[0]!.falseInterruption).toBe(true);
    expect(callWith(1900, { clearsAtMs: [] }).turns[0]!.falseInterruption).toBe(false);
    // A clear long after the window belongs to something else.
    expect(callWith(1900, { clearsAtMs: [4000] }).turns[0]!.falseInterruption).toBe(false);
  });

  it('leaves it undecided, and out of the rate, with neither a reply length nor server events', () => {
    const result = callWith(1900, {});
    expect(result.turns[0]!.falseInterruption).toBeNull();
    expect(rate(result.turns)).toEqual({ count: 0, of: 0 });
  });

  it('ignores a backchannel that came after the reply ended, and a stop after the window', () => {
    expect(callWith(1400, { expectedReplyMs: REPLY_MS }).turns[0]!.falseInterruption).toBeNull();
    const late = callWith(1500 + WINDOW_MS + 400, { expectedReplyMs: REPLY_MS });
    expect(late.turns[0]!.falseInterruption).toBe(false);
  });
});

describe('the scripted backchannels against the simulated answer (--self)', () => {
  it('land inside it with the whole barge-in window to spare, at 8 and 16 kHz', () => {
    const dir = fileURLToPath(new URL('../../bench/fixtures/callers/', import.meta.url));
    const offsets = readdirSync(dir)
      .filter((name) => name.endsWith('.script.json'))
      .flatMap((name) => {
        const script = JSON.parse(readFileSync(join(dir, name), 'utf8')) as {
          turns: { kind: string; afterReplyOnsetMs?: number }[];
        };
        return script.turns.filter((t) => t.kind === 'backchannel');
      })
      .map((turn) => turn.afterReplyOnsetMs!);
    expect(offsets.length).toBeGreaterThanOrEqual(4);
    // A short backchannel (under 1 s) plus the window must end before the answer would.
    const latestMs = Math.max(...offsets) + 1000 + WINDOW_MS;
    expect(replyDurationMs(16_000)).toBeGreaterThan(latestMs);
    expect(replyDurationMs(8000)).toBeCloseTo(2 * replyDurationMs(16_000), -2);
  });
});
