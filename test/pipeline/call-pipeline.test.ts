import { describe, expect, it } from 'vitest';
import type { CallerVadFactory } from '../../src/pipeline/vad/caller-vad.js';
import { createEnergyCallerVad } from '../../src/pipeline/vad/energy-caller-vad.js';
import { PipelineDriver, speech } from './support/pipeline-driver.js';

/** The energy VAD with its decisions held back `lagFrames` frames, as batched Silero does. */
function laggingVad(lagFrames: number, decidedAt: number[]): CallerVadFactory {
  return (sampleRateHz, onDecision) => {
    const held: [number, number, number][] = [];
    const inner = createEnergyCallerVad(sampleRateHz, (p, start, end) =>
      held.push([p, start, end]),
    );
    return {
      push(samples, startMs) {
        inner.push(samples, startMs);
        while (held.length > lagFrames) {
          const [p, start, end] = held.shift()!;
          decidedAt.push(startMs);
          onDecision(p, start, end);
        }
      },
      close: () => inner.close(),
    };
  };
}

const REPLY =
  'Sure, I can move that appointment for you. Which day and time would work best for you?';

describe('CallPipeline: a full turn', () => {
  it('answers caller speech: transcript, endpoint, model, voice, audio out, metrics', async () => {
    const driver = new PipelineDriver({
      script: [{ text: 'I would like to move my appointment.' }],
      model: { replies: [REPLY], usage: { promptTokens: 21, completionTokens: 19 } },
    });
    await driver.start();
    expect(driver.transcriber.openedRateHz).toBe(16000);
    await driver.run(400);
    driver.say(speech(1500));
    await driver.run(8000, () =>
      driver
        .eventsOf('speech-update')
        .some((e) => e.role === 'assistant' && e.status === 'stopped'),
    );

    const types = driver.events.map((event) => event.type);
    expect(types).toContain('transcript');
    const userUpdates = driver.eventsOf('speech-update').filter((e) => e.role === 'user');
    expect(userUpdates.map((e) => e.status)).toEqual(['started', 'stopped']);
    const finals = driver.eventsOf('transcript').filter((e) => e.transcriptType === 'final');
    expect(finals.map((e) => [e.role, e.transcript])).toEqual([
      ['user', 'I would like to move my appointment.'],
      ['assistant', REPLY],
    ]);
    expect(driver.eventsOf('transcript').some((e) => e.transcriptType === 'partial')).toBe(true);

    const request = driver.model.requests[0]!;
    expect(request.messages).toEqual([
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'I would like to move my appointment.' },
    ]);
    expect(
      driver
        .eventsOf('model-output')
        .map((e) => e.output)
        .join(''),
    ).toBe(REPLY);
    expect(driver.eventsOf('model-usage').map((e) => [e.promptTokens, e.completionTokens])).toEqual(
      [[21, 19]],
    );
    const inputs = driver.eventsOf('voice-input').map((e) => e.input);
    expect(inputs.length).toBeGreaterThan(1);
    expect(driver.voice.requests.every((r) => r.sampleRateHz === 24000)).toBe(true);

    // Audio frames came out, each full but possibly the last, and the turn was measured.
    const audible = driver.frames.filter((frame) => frame.samples > 0);
    expect(audible.length).toBeGreaterThan(50);
    const [metrics] = driver.eventsOf('metrics');
    expect(metrics).toBeDefined();
    const latency = metrics!.latency;
    expect(latency.endpointingMs).not.toBeNull();
    // Work done between ticks carries the last tick's time: within one 20 ms frame.
    expect(latency.modelFirstTokenMs).toBeGreaterThanOrEqual(80);
    expect(latency.modelFirstTokenMs).toBeLessThanOrEqual(100);
    expect(latency.voiceFirstByteMs).toBeGreaterThanOrEqual(40);
    expect(latency.voiceToVoiceMs).toBeGreaterThan(latency.endpointingMs!);
    expect(driver.pipeline.messages.at(-1)).toEqual({ role: 'assistant', content: REPLY });
    expect(driver.pipeline.ended).toBe(false);
  });

  it('finalises the transcriber when the caller stops speaking', async () => {
    const driver = new PipelineDriver({
      script: [{ text: 'Hello there.' }],
      model: { replies: ['Hi.'] },
    });
    await driver.start();
    await driver.run(200);
    expect(driver.transcriber.finalizeCalls).toBe(0);
    driver.say(speech(1200));
    await driver.runUntilAssistant('stopped');
    const stops = driver.eventsOf('speech-update').filter((e) => e.role === 'user');
    expect(stops.map((e) => e.status)).toEqual(['started', 'stopped']);
    expect(driver.transcriber.finalizeCalls).toBe(1);
  });

  it('works with a VAD whose decisions come late (batched), timing speech by its spans', async () => {
    const decidedAt: number[] = [];
    const driver = new PipelineDriver({
      script: [{ text: 'I would like to move my appointment.' }],
      model: { replies: ['Sure.'] },
      pipeline: { vad: laggingVad(3, decidedAt) },
    });
    await driver.start();
    await driver.run(400);
    driver.say(speech(1500));
    await driver.runUntilAssistant('stopped');
    expect(decidedAt.length).toBeGreaterThan(50);
    const user = driver.eventsOf('speech-update').filter((e) => e.role === 'user');
    expect(user.map((e) => e.status)).toEqual(['started', 'stopped']);
    // Reported when decided (three frames late), while the turn's timing uses the audio's time.
    const punctual = new PipelineDriver({
      script: [{ text: 'I would like to move my appointment.' }],
      model: { replies: ['Sure.'] },
    });
    await punctual.start();
    await punctual.run(400);
    punctual.say(speech(1500));
    await punctual.runUntilAssistant('stopped');
    const onTime = punctual.eventsOf('speech-update').filter((e) => e.role === 'user');
    expect(user[0]!.atMs - onTime[0]!.atMs).toBe(60);
    const lagged = driver.eventsOf('metrics')[0]!.latency.endpointingMs!;
    const direct = punctual.eventsOf('metrics')[0]!.latency.endpointingMs!;
    // Endpointing counts from the audio's own stop time, so the lag does not change it.
    expect(lagged).toBe(direct);
    expect(lagged).toBeGreaterThan(0);
  });

  it('runs an 8 kHz call: caller audio resampled to 16 kHz, voice audio to 8 kHz', async () => {
    const driver = new PipelineDriver({
      sampleRateHz: 8000,
      script: [{ text: 'Hello there.' }],
      model: { replies: ['Hi, how can I help you today?'] },
    });
    await driver.start();
    await driver.run(200);
    driver.say(speech(1200));
    await driver.runUntilAssistant('stopped');
    expect(driver.transcriber.openedRateHz).toBe(16000);
    // 20 ms caller frames of 160 samples reach the transcriber as about 320 samples.
    const pushed = driver.transcriber.pushedSamples;
    const total = pushed.reduce((sum, n) => sum + n, 0);
    expect(Math.abs(total - pushed.length * 320)).toBeLessThanOrEqual(2);
    const audible = driver.frames.filter((f) => f.samples > 0);
    expect(audible.length).toBeGreaterThan(10);
    expect(Math.max(...audible.map((f) => f.samples))).toBe(160);
  });
});
