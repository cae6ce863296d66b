import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealClock } from '../../bench/harness/clock.js';
import { runCalls } from '../../bench/harness/runner.js';
import { WebsocketCallerTransport } from '../../bench/harness/websocket-transport.js';
import { startFakeParla, type FakeParla } from './fake-parla-websocket.js';
import { signal } from './synthetic-audio.js';

const KEY = 'parla_runner_key';
let parla: FakeParla;

beforeAll(async () => {
  parla = await startFakeParla(KEY, { latencyMs: 400, endOfTurnSilenceMs: 300, replyMs: 800 });
});
afterAll(async () => {
  await parla.close();
});

const speech = {
  kind: 'speech' as const,
  audio: 'tone',
  pauseBeforeMs: 200,
  afterReplyOnsetMs: 0,
  pauses: [],
  samples: signal(800, [{ fromMs: 100, toMs: 700 }]),
};

describe('runCalls over the websocket adapter', () => {
  it('plays two concurrent calls in real time over real sockets and measures their replies', async () => {
    const stages = [
      { endpointingLatency: 300, transcriberLatency: 20, modelLatency: 50, voiceLatency: 30 },
      { endpointingLatency: 310, transcriberLatency: 25, modelLatency: 40, voiceLatency: 25 },
    ];
    parla.turnLatencies = stages;
    // The first reads find the call ended before its artifact is stored: the adapter waits for it.
    parla.getsBeforeArtifact = 2;
    const result = await runCalls({
      clock: new RealClock(),
      transport: () =>
        new WebsocketCallerTransport({ baseUrl: parla.baseUrl, apiKey: KEY, assistantId: 'a' }),
      scripts: [{ name: 'tones', assistantSpeaksFirst: false, turns: [speech, speech] }],
      calls: 2,
      caller: { tailMs: 300 },
    });
    expect(result.calls.map((c) => c.error)).toEqual([null, null]);
    for (const call of result.calls) {
      expect(call.callId).toMatch(/^call-/);
      expect(call.turns).toHaveLength(2);
      expect(call.messageCounts['speech-update']).toBe(4);
      // The server's per-turn breakdown, fetched from the ended call's artifact.
      expect(call.turns.map((t) => t.stagesMs)).toEqual(stages);
      expect(call.serverTurnStages).toEqual(stages);
      for (const turn of call.turns) {
        // The fake answers 400 ms after the last loud sample it received: never sooner. The upper
        // bound only guards against a reply being missed (real time on a shared machine).
        expect(turn.voiceToVoiceMs).toBeGreaterThanOrEqual(400 - 20);
        expect(turn.voiceToVoiceMs).toBeLessThan(1500);
      }
    }
    // Every socket was closed by the callers when they hung up.
    expect(parla.received.slice(-2).every((r) => r.closed)).toBe(true);
  });
});
