import { describe, expect, it } from 'vitest';
import { CallerInput } from '../../../src/pipeline/conversation/caller-input.js';
import type { VadDecisionListener } from '../../../src/pipeline/vad/caller-vad.js';
import { createEnergyCallerVad } from '../../../src/pipeline/vad/energy-caller-vad.js';
import type { VadEvent } from '../../../src/pipeline/vad/vad-state-machine.js';
import { ScriptedTranscriber } from '../support/fake-providers.js';
import { speech } from '../support/pipeline-driver.js';

const RATE = 16000;
const FRAME = 320;

/** A VAD that decides only when told to, in 32 ms windows, like batched Silero. */
class LateVad {
  readonly pushedAtMs: number[] = [];
  sampleRateHz = 0;
  onDecision: VadDecisionListener = () => undefined;
  closed = false;

  readonly factory = (sampleRateHz: number, onDecision: VadDecisionListener) => {
    this.sampleRateHz = sampleRateHz;
    this.onDecision = onDecision;
    return {
      push: (_samples: Int16Array, startMs: number) => this.pushedAtMs.push(startMs),
      close: () => {
        this.closed = true;
      },
    };
  };

  /** Decides the windows of [fromMs, toMs) with `probability`. */
  decide(fromMs: number, toMs: number, probability: number): void {
    for (let at = fromMs; at < toMs; at += 32) {
      this.onDecision(probability, at, at + 32);
    }
  }
}

function setup(vad: LateVad) {
  let nowMs = 0;
  const events: VadEvent[] = [];
  const frames: [boolean, number, number][] = [];
  const transcriber = new ScriptedTranscriber([]);
  const input = new CallerInput({
    sampleRateHz: RATE,
    transcriber,
    transcriberConfig: { config: {}, apiKey: null },
    vad: vad.factory,
    now: () => nowMs,
    onVadFrame: (isSpeech, startMs, durationMs) => frames.push([isSpeech, startMs, durationMs]),
    onVadEvent: (event) => events.push({ ...event }),
    onTranscriberEvent: () => undefined,
  });
  const push = (toMs: number) => {
    for (; nowMs < toMs; nowMs += 20) {
      input.push(new Int16Array(FRAME), nowMs);
    }
  };
  return {
    input,
    events,
    frames,
    transcriber,
    push,
    setNow: (ms: number) => (nowMs = ms),
  };
}

describe('CallerInput with a pluggable VAD', () => {
  it('uses late decisions with their own spans and the clock for "decided at"', async () => {
    const vad = new LateVad();
    const { input, events, frames, transcriber, push } = setup(vad);
    await input.open(new AbortController().signal);
    expect(vad.sampleRateHz).toBe(RATE);
    push(400);
    expect(vad.pushedAtMs.slice(0, 3)).toEqual([0, 20, 40]);
    expect(events).toEqual([]);
    // The decisions for [0, 320) arrive at 400 ms.
    vad.decide(0, 320, 0.9);
    expect(events).toEqual([{ type: 'speech-start', atMs: 0, decidedAtMs: 400 }]);
    expect(frames[0]).toEqual([true, 0, 32]);
    expect(input.inSpeech).toBe(true);
    expect(transcriber.finalizeCalls).toBe(0);

    push(1400);
    vad.decide(320, 960, 0.1);
    expect(events[1]).toEqual({ type: 'speech-stop', atMs: 320, decidedAtMs: 1400 });
    expect(frames.at(-1)).toEqual([false, 928, 32]);
    // The transcriber is asked to finalise when speech stops, once.
    expect(transcriber.finalizeCalls).toBe(1);
    await input.close();
    expect(vad.closed).toBe(true);
  });

  it('a decision later than the clock keeps its own end as "decided at"', () => {
    const vad = new LateVad();
    const { events, setNow } = setup(vad);
    setNow(100);
    vad.decide(0, 320, 1);
    expect(events).toEqual([{ type: 'speech-start', atMs: 0, decidedAtMs: 224 }]);
  });

  it('muting ends speech in progress and keeps audio from VAD and transcriber', async () => {
    const vad = new LateVad();
    const { input, events, transcriber, push } = setup(vad);
    await input.open(new AbortController().signal);
    push(300);
    vad.decide(0, 288, 1);
    const pushed = transcriber.pushedSamples.length;
    const vadPushed = vad.pushedAtMs.length;
    input.setMuted(true);
    expect(events.map((e) => e.type)).toEqual(['speech-start', 'speech-stop']);
    expect(transcriber.finalizeCalls).toBe(1);
    push(600);
    vad.decide(288, 600, 1);
    expect(transcriber.pushedSamples.length).toBe(pushed);
    expect(vad.pushedAtMs.length).toBe(vadPushed);
    expect(events).toHaveLength(2);
    input.setMuted(false);
    push(700);
    expect(transcriber.pushedSamples.length).toBe(pushed + 5);
  });
});

describe('createEnergyCallerVad', () => {
  it('decides each frame at once over its own span', () => {
    const decisions: [number, number, number][] = [];
    const vad = createEnergyCallerVad(RATE, (p, start, end) => decisions.push([p, start, end]));
    vad.push(new Int16Array(FRAME), 0);
    const loud = speech(200);
    for (let i = 0; i < 10; i++) {
      vad.push(loud.subarray(i * FRAME, (i + 1) * FRAME), 20 + i * 20);
    }
    expect(decisions[0]).toEqual([0, 0, 20]);
    expect(decisions).toHaveLength(11);
    expect(decisions.slice(1).some(([p]) => p === 1)).toBe(true);
    expect(decisions.at(-1)!.slice(1)).toEqual([200, 220]);
    vad.close();
    vad.push(loud.subarray(0, FRAME), 220);
    expect(decisions).toHaveLength(11);
  });
});
