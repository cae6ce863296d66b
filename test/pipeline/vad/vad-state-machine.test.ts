import { describe, expect, it } from 'vitest';
import {
  type VadEvent,
  VadStateMachine,
  type VadStateMachineOptions,
} from '../../../src/pipeline/vad/vad-state-machine.js';

const WINDOW_MS = 32;

/** Feeds one probability per 32 ms window from t = 0; returns copies of the events and phases. */
function run(probabilities: number[], options: VadStateMachineOptions = {}) {
  const machine = new VadStateMachine(options);
  const events: VadEvent[] = [];
  const phases: string[] = [];
  probabilities.forEach((p, i) => {
    const event = machine.update(p, i * WINDOW_MS, (i + 1) * WINDOW_MS);
    if (event !== null) {
      events.push({ ...event });
    }
    phases.push(machine.phase);
  });
  return { machine, events, phases };
}

const OPTIONS = { startMs: 96, stopMs: 160, onThreshold: 0.5, offThreshold: 0.35 };

describe('VadStateMachine', () => {
  it('confirms speech after startMs and reports when it really started', () => {
    const { events, phases } = run([0, 0.1, 0.9, 0.8, 0.9, 0.9], OPTIONS);
    expect(phases).toEqual(['quiet', 'quiet', 'starting', 'starting', 'speaking', 'speaking']);
    expect(events).toEqual([{ type: 'speech-start', atMs: 64, decidedAtMs: 160 }]);
  });

  it('ignores a burst shorter than startMs (debounce on the way up)', () => {
    const { events, phases } = run([0.9, 0.9, 0.1, 0, 0.9, 0.2], OPTIONS);
    expect(events).toEqual([]);
    expect(phases).toEqual(['starting', 'starting', 'quiet', 'quiet', 'starting', 'quiet']);
  });

  it('keeps speech through a pause shorter than stopMs (debounce on the way down)', () => {
    const speech = [0.9, 0.9, 0.9, 0.9];
    const { events, phases } = run([...speech, 0.1, 0.1, 0.1, 0.9, 0.9], OPTIONS);
    expect(events.map((e) => e.type)).toEqual(['speech-start']);
    expect(phases.slice(4)).toEqual(['stopping', 'stopping', 'stopping', 'speaking', 'speaking']);
  });

  it('reports the stop at the start of the silence once it held stopMs', () => {
    const { events, machine } = run([0.9, 0.9, 0.9, 0.9, 0.1, 0.1, 0.1, 0.1, 0.1, 0], OPTIONS);
    expect(events).toEqual([
      { type: 'speech-start', atMs: 0, decidedAtMs: 96 },
      { type: 'speech-stop', atMs: 128, decidedAtMs: 288 },
    ]);
    expect(machine.phase).toBe('quiet');
  });

  it('applies hysteresis: between off and on keeps the current side', () => {
    // 0.4 sits between 0.35 and 0.5: it does not start speech, does not end it, and does not end
    // a STARTING candidate either; it does not bring STOPPING back to SPEAKING.
    const quiet = run([0.4, 0.4, 0.4, 0.4], OPTIONS);
    expect(quiet.events).toEqual([]);
    expect(quiet.phases.every((p) => p === 'quiet')).toBe(true);

    const starting = run([0.6, 0.4, 0.4, 0.4], OPTIONS);
    expect(starting.events).toEqual([{ type: 'speech-start', atMs: 0, decidedAtMs: 96 }]);

    const speaking = run([0.9, 0.9, 0.9, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4], OPTIONS);
    expect(speaking.events.map((e) => e.type)).toEqual(['speech-start']);
    expect(speaking.machine.phase).toBe('speaking');

    const stopping = run([0.9, 0.9, 0.9, 0.2, 0.4, 0.4, 0.4, 0.4], OPTIONS);
    expect(stopping.events).toEqual([
      { type: 'speech-start', atMs: 0, decidedAtMs: 96 },
      { type: 'speech-stop', atMs: 96, decidedAtMs: 256 },
    ]);
  });

  it('confirms at once with zero debounce, and finish() closes open speech', () => {
    const { events, machine } = run([0.9, 0.1, 0.9], { startMs: 0, stopMs: 0 });
    expect(events.map((e) => [e.type, e.atMs])).toEqual([
      ['speech-start', 0],
      ['speech-stop', 32],
      ['speech-start', 64],
    ]);
    expect({ ...machine.finish(96) }).toEqual({ type: 'speech-stop', atMs: 96, decidedAtMs: 96 });
    expect(machine.finish(100)).toBeNull();
  });

  it('rejects thresholds the wrong way round', () => {
    expect(() => new VadStateMachine({ onThreshold: 0.3, offThreshold: 0.5 })).toThrow(RangeError);
  });
});
