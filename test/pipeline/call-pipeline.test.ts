import { describe, expect, it } from 'vitest';
import { PipelineDriver, speech } from './support/pipeline-driver.js';

const REPLY =
  'Sure, I can move that appointment for you. Which day and time would work best for you?';

describe('CallPipeline: a full turn', () => {
  it('answers caller speech: transcript, endpoint, model, voice, audio out, metrics', async () => {
    const driver = new PipelineDriver({
      script: [{ text: 'I would like to move my appointment.' }],
      model: { replies: [REPLY] },
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
