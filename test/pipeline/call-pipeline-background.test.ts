import { describe, expect, it } from 'vitest';
import { levelDbfs } from '../../src/pipeline/vad/energy-vad.js';
import { PipelineDriver } from './support/pipeline-driver.js';

const MESSAGE = 'Hello, thanks for calling the clinic. How can I help you today?';

async function firstMessage(backgroundSound: 'off' | 'office'): Promise<PipelineDriver> {
  const driver = new PipelineDriver({
    recordOutput: true,
    pipeline: {
      firstMessageMode: 'assistant-speaks-first',
      firstMessage: MESSAGE,
      backgroundSound,
    },
  });
  await driver.start();
  await driver.run(6000);
  return driver;
}

describe('CallPipeline: backgroundSound', () => {
  it('office mixes the ambience under speech and silence; tick returns full frames', async () => {
    const off = await firstMessage('off');
    const office = await firstMessage('office');
    expect(office.frames.every((f) => f.samples === 320)).toBe(true);
    const speaking = off.frames.map((f) => f.samples > 0);
    expect(speaking.filter(Boolean).length).toBeGreaterThan(50);
    expect(speaking.filter((s) => !s).length).toBeGreaterThan(50);
    // Same call, same timing: the difference between the two outputs is the ambience.
    const under = { speech: [] as number[], silence: [] as number[] };
    office.output.forEach((frame, i) => {
      const added = frame.map((v, k) => v - off.output[i]![k]!);
      (speaking[i] ? under.speech : under.silence).push(...added);
    });
    for (const part of [under.speech, under.silence]) {
      const level = levelDbfs(Int16Array.from(part));
      expect(level).toBeGreaterThan(-45);
      expect(level).toBeLessThan(-36);
    }
    // The voice itself is unchanged underneath.
    expect(office.eventsOf('voice-input')).toEqual(off.eventsOf('voice-input'));
  });

  it('off sends digital silence when the assistant is silent', async () => {
    const off = await firstMessage('off');
    const silent = off.output.filter((_, i) => off.frames[i]!.samples === 0);
    expect(silent.length).toBeGreaterThan(50);
    expect(silent.every((frame) => frame.every((v) => v === 0))).toBe(true);
  });

  it('no audio before start or after the end', async () => {
    const driver = new PipelineDriver({ pipeline: { backgroundSound: 'office' } });
    const out = new Int16Array(320).fill(5);
    expect(driver.pipeline.tick(0, out)).toBe(0);
    expect(out.every((v) => v === 0)).toBe(true);
    await driver.start();
    driver.pipeline.end('customer-ended-call');
    expect(driver.pipeline.tick(20, out)).toBe(0);
  });
});
