import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readWav } from '../../src/media/codecs/wav.js';
import { readFileSync } from 'node:fs';
import { loadScript, parseScript, withPauses } from '../../bench/harness/script.js';

const FIXTURES = 'bench/fixtures/callers';

describe('parseScript', () => {
  it('fills defaults and sorts pauses', () => {
    const script = parseScript({
      name: 's',
      turns: [
        {
          kind: 'speech',
          audio: 'a.wav',
          pauses: [
            { atMs: 900, durationMs: 100 },
            { atMs: 100, durationMs: 50 },
          ],
        },
        { kind: 'interruption', audio: 'b.wav', afterReplyOnsetMs: 1500 },
      ],
    });
    expect(script).toEqual({
      name: 's',
      assistantSpeaksFirst: false,
      turns: [
        {
          kind: 'speech',
          audio: 'a.wav',
          pauseBeforeMs: 500,
          afterReplyOnsetMs: 1000,
          pauses: [
            { atMs: 100, durationMs: 50 },
            { atMs: 900, durationMs: 100 },
          ],
        },
        {
          kind: 'interruption',
          audio: 'b.wav',
          pauseBeforeMs: 500,
          afterReplyOnsetMs: 1500,
          pauses: [],
        },
      ],
    });
  });

  it('lists every problem of a bad script in one error', () => {
    let error: any;
    try {
      parseScript(
        {
          name: '',
          extra: 1,
          turns: [
            { kind: 'shout', audio: '../../etc/passwd', pauseBeforeMs: -1 },
            { kind: 'speech', audio: '/abs.wav', pauses: [{ atMs: 'x' }] },
          ],
        },
        'bad.json',
      );
    } catch (caught) {
      error = caught;
    }
    expect(error.code).toBe('ERR_BENCH_SCRIPT');
    for (const part of [
      'unknown field "extra"',
      'name must be',
      'turns[0].kind must be one of',
      "turns[0].audio must stay inside the script's folder",
      'turns[0].pauseBeforeMs must be',
      'turns[1].audio must be a relative path',
      'turns[1].pauses[0] must be',
    ]) {
      expect(error.message).toContain(part);
    }
    expect(() => parseScript([], 'x')).toThrow(/must be a JSON object/);
    expect(() => parseScript({ name: 'n', turns: [] })).toThrow(/turns must be a list of 1–200/);
  });
});

describe('withPauses', () => {
  it('inserts silence at the given offsets', () => {
    const audio = Int16Array.from({ length: 16 }, (_, i) => i + 1);
    // 1 kHz: 1 sample per ms.
    const out = withPauses(
      audio,
      [
        { atMs: 4, durationMs: 3 },
        { atMs: 10, durationMs: 2 },
      ],
      1000,
    );
    expect([...out]).toEqual([
      1, 2, 3, 4, 0, 0, 0, 5, 6, 7, 8, 9, 10, 0, 0, 11, 12, 13, 14, 15, 16,
    ]);
  });
});

describe('committed fixtures', () => {
  it('are 16 kHz mono PCM16 speech, under 1.5 MB in all', () => {
    const wavs = readdirSync(FIXTURES).filter((f) => f.endsWith('.wav'));
    expect(wavs.length).toBeGreaterThanOrEqual(12);
    const total = wavs.reduce((sum, f) => sum + statSync(join(FIXTURES, f)).size, 0);
    expect(total).toBeLessThan(1.5e6);
    for (const file of wavs) {
      const wav = readWav(readFileSync(join(FIXTURES, file)));
      expect([wav.encoding, wav.sampleRateHz, wav.channelCount]).toEqual(['pcm16', 16_000, 1]);
      expect(wav.durationMs).toBeGreaterThan(400);
    }
  });

  it('every script loads, with its pauses and frame padding', async () => {
    const scripts = readdirSync(FIXTURES).filter((f) => f.endsWith('.script.json'));
    expect(scripts.length).toBeGreaterThanOrEqual(4);
    for (const file of scripts) {
      const script = await loadScript(join(FIXTURES, file), 16_000);
      for (const turn of script.turns) {
        expect(turn.samples.length % 320).toBe(0);
      }
    }
    const booking = await loadScript(join(FIXTURES, 'booking.script.json'), 16_000);
    const plain = readWav(readFileSync(join(FIXTURES, 'f1-book-table.wav')));
    expect(booking.turns[0]!.samples.length).toBeGreaterThanOrEqual(
      plain.samples.length + 600 * 16,
    );
    // Resampled on load when the call runs at another rate.
    const at8k = await loadScript(join(FIXTURES, 'booking.script.json'), 8000);
    expect(
      Math.abs(at8k.turns[1]!.samples.length * 2 - booking.turns[1]!.samples.length),
    ).toBeLessThanOrEqual(320);
  });

  it('refuses a script whose WAV is missing, with the path', async () => {
    await expect(loadScript('test/bench/no-such.script.json', 16_000)).rejects.toMatchObject({
      code: 'ERR_BENCH_SCRIPT',
    });
  });
});
