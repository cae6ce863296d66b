import { describe, expect, it } from 'vitest';
import { settle } from './support/virtual-clock.js';
import { PipelineDriver, speech } from './support/pipeline-driver.js';

const NO_WAITS = {
  waitSeconds: 0,
  transcriptionEndpointingPlan: {
    onPunctuationSeconds: 0,
    onNoPunctuationSeconds: 0,
    onNumberSeconds: 0,
  },
};

describe('CallPipeline: decisions between ticks', () => {
  it('asks the model as soon as the VAD decides the caller stopped, not at the next tick', async () => {
    const driver = new PipelineDriver({
      script: [{ text: 'Hello there.' }],
      model: { replies: ['Hi.'] },
      pipeline: { startSpeakingPlan: NO_WAITS },
    });
    const pipeline = driver.pipeline;
    await driver.start();
    const frames = speech(1000);
    const out = new Int16Array(320);
    let requestedAfter: 'push' | 'tick' | null = null;
    // Frames arrive 10 ms out of phase with the ticks, as a transport's do.
    for (let t = 0; t < 3000 && requestedAfter === null; t += 20) {
      driver.clock.advanceTo(t);
      const at = t < 1000 ? frames.subarray(t * 16, t * 16 + 320) : new Int16Array(320);
      pipeline.pushCallerFrame(at, t);
      await settle();
      if (driver.model.requests.length > 0) {
        requestedAfter = 'push';
        break;
      }
      driver.clock.advanceTo(t + 10);
      pipeline.tick(t + 10, out);
      await settle();
      if (driver.model.requests.length > 0) {
        requestedAfter = 'tick';
      }
    }
    expect(requestedAfter).toBe('push');
    expect(pipeline.messages.at(-1)).toEqual({ role: 'user', content: 'Hello there.' });
  });

  it('tells the owner when a reply has audio to play, so its first frame can go out at once', async () => {
    let nowMs = 0;
    const ready: number[] = [];
    const driver = new PipelineDriver({
      // A first byte 70 ms after the request: between two 20 ms ticks.
      voice: { firstByteDelayMs: 70 },
      pipeline: {
        firstMessageMode: 'assistant-speaks-first',
        firstMessage: 'Hello.',
        clock: () => nowMs,
        onAudioReady: () => ready.push(nowMs),
      },
    });
    await driver.start();
    const out = new Int16Array(320);
    for (let t = 0; t <= 200 && ready.length === 0; t += 10) {
      nowMs = t;
      driver.clock.advanceTo(t);
      await settle();
      if (t % 20 === 0 && ready.length === 0) {
        driver.pipeline.tick(t, out);
        await settle();
      }
    }
    expect(ready).toEqual([70]);
    // The owner ticks at once: the first frame goes out at 70 ms, not at the 80 ms tick.
    expect(driver.pipeline.tick(70, out)).toBe(320);
    expect(
      driver.events.find((e) => e.type === 'speech-update' && e.role === 'assistant'),
    ).toMatchObject({ status: 'started', atMs: 70 });
    // Pacing goes on from the regular ticks; no further notice for this message.
    expect(driver.pipeline.tick(80, out)).toBe(320);
    await settle();
    expect(ready).toEqual([70]);
  });
});
