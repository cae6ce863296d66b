import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  decodeALaw,
  decodeALawSample,
  decodeG711,
  decodeMuLaw,
  decodeMuLawSample,
  encodeALaw,
  encodeALawSample,
  encodeG711,
  encodeMuLaw,
  encodeMuLawSample,
} from '../../../src/media/codecs/g711.js';

/*
 * The ITU-T G.191 Software Tool Library reference (g711.c: alaw_compress, alaw_expand,
 * ulaw_compress, ulaw_expand), transcribed line for line with C `short` arithmetic. The codec
 * under test is table-driven; these loops are the authority it is checked against.
 */
function toShort(x: number): number {
  return (x << 16) >> 16;
}

function referenceAlawCompress(linear: number): number {
  let ix = linear < 0 ? toShort(~linear) >> 4 : linear >> 4;
  if (ix > 15) {
    let iexp = 1;
    while (ix > 16 + 15) {
      ix >>= 1;
      iexp++;
    }
    ix -= 16;
    ix += iexp << 4;
  }
  if (linear >= 0) {
    ix |= 0x0080;
  }
  return (ix ^ 0x0055) & 0xff;
}

function referenceAlawExpand(log: number): number {
  let ix = log ^ 0x0055;
  ix &= 0x007f;
  const iexp = ix >> 4;
  let mant = ix & 0x000f;
  if (iexp > 0) {
    mant = mant + 16;
  }
  mant = (mant << 4) + 0x0008;
  if (iexp > 1) {
    mant = mant << (iexp - 1);
  }
  return toShort(log > 127 ? mant : -mant);
}

function referenceUlawCompress(linear: number): number {
  let absno = linear < 0 ? (toShort(~linear) >> 2) + 33 : (linear >> 2) + 33;
  if (absno > 0x1fff) {
    absno = 0x1fff;
  }
  let i = absno >> 6;
  let segno = 1;
  while (i !== 0) {
    segno++;
    i >>= 1;
  }
  const highNibble = 0x0008 - segno;
  let lowNibble = (absno >> segno) & 0x000f;
  lowNibble = 0x000f - lowNibble;
  let log = (highNibble << 4) | lowNibble;
  if (linear >= 0) {
    log = log | 0x0080;
  }
  return log & 0xff;
}

function referenceUlawExpand(log: number): number {
  const sign = log < 0x0080 ? -1 : 1;
  let mantissa = ~log;
  const exponent = (mantissa >> 4) & 0x0007;
  const segment = exponent + 1;
  mantissa = mantissa & 0x000f;
  const step = 4 << segment;
  return toShort(sign * ((0x0080 << exponent) + step * mantissa + step / 2 - 4 * 33));
}

const ALL_SAMPLES = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
const ALL_CODES = Uint8Array.from({ length: 256 }, (_, i) => i);

describe('G.711 against the ITU-T reference', () => {
  it('encodes all 65536 inputs to the reference µ-law and A-law codes', () => {
    const mu = new Uint8Array(65536);
    const a = new Uint8Array(65536);
    expect(encodeMuLaw(ALL_SAMPLES, mu)).toBe(65536);
    expect(encodeALaw(ALL_SAMPLES, a)).toBe(65536);
    let muMismatches = 0;
    let aMismatches = 0;
    for (let i = 0; i < 65536; i++) {
      const x = ALL_SAMPLES[i]!;
      if (mu[i] !== referenceUlawCompress(x)) {
        muMismatches++;
      }
      if (a[i] !== referenceAlawCompress(x)) {
        aMismatches++;
      }
      if (encodeMuLawSample(x) !== mu[i] || encodeALawSample(x) !== a[i]) {
        throw new Error(`single-sample encoders disagree at ${x}`);
      }
    }
    expect(muMismatches).toBe(0);
    expect(aMismatches).toBe(0);
  });

  it('decodes all 256 codes to the reference values', () => {
    const mu = new Int16Array(256);
    const a = new Int16Array(256);
    decodeMuLaw(ALL_CODES, mu);
    decodeALaw(ALL_CODES, a);
    for (let code = 0; code < 256; code++) {
      expect(mu[code]).toBe(referenceUlawExpand(code));
      expect(a[code]).toBe(referenceAlawExpand(code));
      expect(decodeMuLawSample(code)).toBe(mu[code]);
      expect(decodeALawSample(code)).toBe(a[code]);
    }
  });

  it('has the well-known values at zero and full scale', () => {
    expect(encodeMuLawSample(0)).toBe(0xff);
    expect(encodeMuLawSample(-1)).toBe(0x7f);
    expect(encodeALawSample(0)).toBe(0xd5);
    expect(encodeALawSample(-1)).toBe(0x55);
    expect(decodeMuLawSample(0x80)).toBe(32124);
    expect(decodeMuLawSample(0x00)).toBe(-32124);
    expect(decodeMuLawSample(0xff)).toBe(0);
    expect(decodeALawSample(0xaa)).toBe(32256);
    expect(decodeALawSample(0x2a)).toBe(-32256);
    expect(decodeALawSample(0xd5)).toBe(8);
    expect(encodeMuLawSample(32767)).toBe(0x80);
    expect(encodeMuLawSample(-32768)).toBe(0x00);
    expect(encodeALawSample(32767)).toBe(0xaa);
    expect(encodeALawSample(-32768)).toBe(0x2a);
  });
});

describe('G.711 against CPython audioop (an independent implementation)', () => {
  const fixture = JSON.parse(
    readFileSync(new URL('../../fixtures/media/g711-audioop.json', import.meta.url), 'utf8'),
  ) as { aLawEncodeSha256: string; aLawDecode: number[]; muLawDecode: number[] };

  it('matches its A-law codes for every input and both decode tables', () => {
    const a = new Uint8Array(65536);
    encodeALaw(ALL_SAMPLES, a);
    expect(createHash('sha256').update(a).digest('hex')).toBe(fixture.aLawEncodeSha256);
    const mu = new Int16Array(256);
    const al = new Int16Array(256);
    decodeMuLaw(ALL_CODES, mu);
    decodeALaw(ALL_CODES, al);
    expect(Array.from(mu)).toEqual(fixture.muLawDecode);
    expect(Array.from(al)).toEqual(fixture.aLawDecode);
  });
});

describe('G.711 round trips and buffers', () => {
  it('is idempotent: decoding, encoding and decoding again gives the same value', () => {
    for (const law of ['mulaw', 'alaw'] as const) {
      const decoded = new Int16Array(256);
      const reencoded = new Uint8Array(256);
      const decodedAgain = new Int16Array(256);
      decodeG711(law, ALL_CODES, decoded);
      encodeG711(law, decoded, reencoded);
      decodeG711(law, reencoded, decodedAgain);
      expect(decodedAgain).toEqual(decoded);
      // Every code except µ-law's negative zero (0x7f, which decodes to 0 like 0xff) round-trips.
      const changed = ALL_CODES.filter((code) => reencoded[code] !== code);
      expect(Array.from(changed)).toEqual(law === 'mulaw' ? [0x7f] : []);
    }
  });

  it('keeps a 20 ms frame within the quantisation step of each law', () => {
    const frame = Int16Array.from({ length: 160 }, (_, i) =>
      Math.round(12000 * Math.sin((2 * Math.PI * 440 * i) / 8000)),
    );
    for (const law of ['mulaw', 'alaw'] as const) {
      const codes = new Uint8Array(160);
      const back = new Int16Array(160);
      encodeG711(law, frame, codes);
      decodeG711(law, codes, back);
      for (let i = 0; i < 160; i++) {
        const x = frame[i]!;
        // Segment step at |x|: 2^(segment+1) on the 13/14-bit scale, × 4 or 8 on 16 bits.
        const bound = Math.max(law === 'mulaw' ? 8 : 16, Math.abs(x) / 16);
        expect(Math.abs(back[i]! - x)).toBeLessThanOrEqual(bound);
      }
    }
  });

  it('reads and writes at offsets and rejects ranges that do not fit', () => {
    const input = Int16Array.from([0, 1000, -1000, 30000, -30000]);
    const out = new Uint8Array(8).fill(0x11);
    expect(encodeMuLaw(input, out, 1, 3, 4)).toBe(3);
    expect(Array.from(out.subarray(0, 4))).toEqual([0x11, 0x11, 0x11, 0x11]);
    expect(out[4]).toBe(encodeMuLawSample(1000));
    expect(out[6]).toBe(encodeMuLawSample(30000));
    const decoded = new Int16Array(3);
    expect(decodeMuLaw(out, decoded, 4, 3)).toBe(3);
    expect(decoded[2]).toBe(decodeMuLawSample(encodeMuLawSample(30000)));
    expect(encodeALaw(new Int16Array(0), new Uint8Array(0))).toBe(0);
    expect(() => encodeMuLaw(input, new Uint8Array(4))).toThrow(RangeError);
    expect(() => decodeALaw(new Uint8Array(4), new Int16Array(4), 2, 3)).toThrow(RangeError);
  });
});
