import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CallRecording } from '../../../src/calls/reporting/call-recording.js';
import { readWav } from '../../../src/media/codecs/wav.js';

const RATE = 16_000;
const FRAME = 320; // 20 ms

let dir: string;
let clockMs: number;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'parla-recording-'));
  clockMs = 1000;
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function recording(bufferSeconds?: number): CallRecording {
  return new CallRecording({
    monoPath: join(dir, 'mono', 'original'),
    stereoPath: join(dir, 'stereo', 'original'),
    nowMs: () => clockMs,
    ...(bufferSeconds !== undefined ? { bufferSeconds } : {}),
  });
}

function frame(value: number): Int16Array {
  return new Int16Array(FRAME).fill(value);
}

describe('CallRecording', () => {
  it('writes mono (mixed) and stereo (customer left, assistant right) on the clock timeline', async () => {
    const rec = recording();
    const user = frame(1000);
    for (let k = 0; k < 50; k++) {
      clockMs += 20;
      rec.push('user', user, RATE);
      if (k >= 25 && k < 35) {
        // The assistant speaks from 0.5 s to 0.7 s; before that it sent nothing.
        rec.push('assistant', frame(2000), RATE);
      }
    }
    const result = await rec.finish();
    expect(result).not.toBeNull();
    expect(result!.frames).toBe(50 * FRAME);
    expect(result!.durationMs).toBe(1000);

    const mono = readWav(readFileSync(result!.mono!.path));
    expect(mono).toMatchObject({ sampleRateHz: RATE, channelCount: 1, frameCount: 50 * FRAME });
    expect(mono.samples[0]).toBe(1000);
    expect(mono.samples[8000 - 1]).toBe(1000);
    expect(mono.samples[8000]).toBe(3000);
    expect(mono.samples[11_200 - 1]).toBe(3000);
    expect(mono.samples[11_200]).toBe(1000);

    const stereo = readWav(readFileSync(result!.stereo!.path));
    expect(stereo).toMatchObject({ channelCount: 2, frameCount: 50 * FRAME, durationMs: 1000 });
    const left = stereo.samples.filter((_, i) => i % 2 === 0);
    const right = stereo.samples.filter((_, i) => i % 2 === 1);
    expect(left.every((v) => v === 1000)).toBe(true);
    expect(right.slice(0, 8000).every((v) => v === 0)).toBe(true);
    expect(right.slice(8000, 11_200).every((v) => v === 2000)).toBe(true);
    expect(right.slice(11_200).every((v) => v === 0)).toBe(true);
    expect(result!.mono!.bytes).toBe(44 + 50 * FRAME * 2);
    // Only the finished files remain: temporary names were renamed away.
    expect(readdirSync(join(dir, 'mono'))).toEqual(['original']);
  });

  it('clamps the mix instead of wrapping', async () => {
    const rec = recording();
    clockMs += 20;
    rec.push('user', frame(30_000), RATE);
    rec.push('assistant', frame(30_000), RATE);
    const result = await rec.finish();
    const mono = readWav(readFileSync(result!.mono!.path));
    expect(mono.samples.every((v) => v === 32_767)).toBe(true);
  });

  it('keeps memory bounded: a long one-sided stretch forces silence into the other track', async () => {
    const rec = recording(1);
    // 3 s of the customer with an assistant that never speaks, faster than real time.
    for (let k = 0; k < 150; k++) {
      clockMs += 1;
      rec.push('user', frame(k % 100), RATE);
    }
    const result = await rec.finish();
    expect(result!.frames).toBe(150 * FRAME);
    const stereo = readWav(readFileSync(result!.stereo!.path));
    for (let k = 0; k < 150; k++) {
      expect(stereo.samples[2 * k * FRAME]).toBe(k % 100);
    }
    expect(stereo.samples.filter((_, i) => i % 2 === 1).every((v) => v === 0)).toBe(true);
  });

  it('drops audio at another sample rate and counts it; no audio means no files', async () => {
    const rec = recording();
    clockMs += 20;
    rec.push('user', frame(1), RATE);
    rec.push('assistant', new Int16Array(160), 8000);
    const result = await rec.finish();
    expect(result!.droppedSamples).toBe(160);
    const silent = recording();
    expect(await silent.finish()).toBeNull();
  });
});
