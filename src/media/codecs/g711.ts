import { checkRange } from '../check-range.js';

/**
 * ITU-T G.711 µ-law and A-law, table-driven. Decoding is one lookup in a 256-entry table per
 * code. Encoding is one lookup per sample: µ-law uses the top 14 bits of a sample (16384 entries),
 * A-law the top 12 (4096 entries), which is all the precision either law looks at, so the tables
 * give the same codes as the ITU-T reference for every 16-bit input (test/media/codecs/g711.test.ts
 * checks all 65536). Codes are the transmitted octets: A-law with even bits inverted, µ-law with
 * all bits inverted. Decoded values are on the 16-bit scale (µ-law ±32124, A-law ±32256).
 */
export type G711Law = 'mulaw' | 'alaw';

const MULAW_DECODE = new Int16Array(256);
const ALAW_DECODE = new Int16Array(256);
/** Indexed by (sample >> 2) & 0x3fff. */
const MULAW_ENCODE = new Uint8Array(1 << 14);
/** Indexed by (sample >> 4) & 0xfff. */
const ALAW_ENCODE = new Uint8Array(1 << 12);

for (let code = 0; code < 256; code++) {
  const u = ~code & 0xff;
  const uExponent = (u >> 4) & 7;
  const uMagnitude = ((((u & 15) << 3) + 0x84) << uExponent) - 0x84;
  MULAW_DECODE[code] = u & 0x80 ? -uMagnitude : uMagnitude;

  const a = code ^ 0x55;
  const aExponent = (a >> 4) & 7;
  let aMagnitude = ((a & 15) << 4) + 8;
  if (aExponent > 0) {
    aMagnitude = (aMagnitude + 0x100) << (aExponent - 1);
  }
  ALAW_DECODE[code] = a & 0x80 ? aMagnitude : -aMagnitude;
}

for (let index = 0; index < 1 << 14; index++) {
  const value = (index << 18) >> 18; // the top 14 bits of a sample, sign-extended
  // The reference works on the one's complement of negative samples, biased by 33.
  let magnitude = (value < 0 ? ~value : value) + 33;
  if (magnitude > 0x1fff) {
    magnitude = 0x1fff;
  }
  const segment = 31 - Math.clz32(magnitude) - 5; // 0..7, as magnitude is 33..8191
  const mantissa = (magnitude >> (segment + 1)) & 15;
  MULAW_ENCODE[index] = (~((segment << 4) | mantissa) & 0x7f) | (value >= 0 ? 0x80 : 0);
}

for (let index = 0; index < 1 << 12; index++) {
  const value = (index << 20) >> 20; // the top 12 bits of a sample, sign-extended
  const magnitude = value < 0 ? ~value : value; // 0..2047
  let code = magnitude;
  if (magnitude > 15) {
    const exponent = 31 - Math.clz32(magnitude) - 3; // 1..7
    code = (exponent << 4) | ((magnitude >> (exponent - 1)) & 15);
  }
  ALAW_ENCODE[index] = (code | (value >= 0 ? 0x80 : 0)) ^ 0x55;
}

export function encodeMuLawSample(sample: number): number {
  return MULAW_ENCODE[(sample >> 2) & 0x3fff]!;
}

export function decodeMuLawSample(code: number): number {
  return MULAW_DECODE[code & 0xff]!;
}

export function encodeALawSample(sample: number): number {
  return ALAW_ENCODE[(sample >> 4) & 0xfff]!;
}

export function decodeALawSample(code: number): number {
  return ALAW_DECODE[code & 0xff]!;
}

/**
 * Encodes `length` samples of `input` from `inputOffset` into `output` at `outputOffset`, one
 * byte per sample. Returns the number of bytes written.
 */
export function encodeMuLaw(
  input: Int16Array,
  output: Uint8Array,
  inputOffset = 0,
  length = input.length - inputOffset,
  outputOffset = 0,
): number {
  checkRange(input.length, inputOffset, length);
  checkRange(output.length, outputOffset, length);
  const table = MULAW_ENCODE;
  for (let i = 0; i < length; i++) {
    output[outputOffset + i] = table[(input[inputOffset + i]! >> 2) & 0x3fff]!;
  }
  return length;
}

/** Decodes `length` codes into `output`; returns the number of samples written. */
export function decodeMuLaw(
  input: Uint8Array,
  output: Int16Array,
  inputOffset = 0,
  length = input.length - inputOffset,
  outputOffset = 0,
): number {
  checkRange(input.length, inputOffset, length);
  checkRange(output.length, outputOffset, length);
  const table = MULAW_DECODE;
  for (let i = 0; i < length; i++) {
    output[outputOffset + i] = table[input[inputOffset + i]!]!;
  }
  return length;
}

/** A-law counterpart of encodeMuLaw(). */
export function encodeALaw(
  input: Int16Array,
  output: Uint8Array,
  inputOffset = 0,
  length = input.length - inputOffset,
  outputOffset = 0,
): number {
  checkRange(input.length, inputOffset, length);
  checkRange(output.length, outputOffset, length);
  const table = ALAW_ENCODE;
  for (let i = 0; i < length; i++) {
    output[outputOffset + i] = table[(input[inputOffset + i]! >> 4) & 0xfff]!;
  }
  return length;
}

/** A-law counterpart of decodeMuLaw(). */
export function decodeALaw(
  input: Uint8Array,
  output: Int16Array,
  inputOffset = 0,
  length = input.length - inputOffset,
  outputOffset = 0,
): number {
  checkRange(input.length, inputOffset, length);
  checkRange(output.length, outputOffset, length);
  const table = ALAW_DECODE;
  for (let i = 0; i < length; i++) {
    output[outputOffset + i] = table[input[inputOffset + i]!]!;
  }
  return length;
}

/** encodeMuLaw() or encodeALaw(). */
export function encodeG711(
  law: G711Law,
  input: Int16Array,
  output: Uint8Array,
  inputOffset = 0,
  length = input.length - inputOffset,
  outputOffset = 0,
): number {
  return law === 'mulaw'
    ? encodeMuLaw(input, output, inputOffset, length, outputOffset)
    : encodeALaw(input, output, inputOffset, length, outputOffset);
}

/** decodeMuLaw() or decodeALaw(). */
export function decodeG711(
  law: G711Law,
  input: Uint8Array,
  output: Int16Array,
  inputOffset = 0,
  length = input.length - inputOffset,
  outputOffset = 0,
): number {
  return law === 'mulaw'
    ? decodeMuLaw(input, output, inputOffset, length, outputOffset)
    : decodeALaw(input, output, inputOffset, length, outputOffset);
}
