import { ParlaError } from '../../core/errors.js';
import { checkRange } from '../check-range.js';

/**
 * Signed 16-bit PCM in bytes. Little-endian (PCM16LE) is what WAV files and most websocket audio
 * use; big-endian is RTP's L16 (RFC 3551). The view functions return an Int16Array or Uint8Array
 * over the same memory when the host is little-endian and the bytes are 2-byte aligned, and a copy
 * otherwise. The read/write functions copy into caller-provided buffers and allocate nothing.
 */
export const HOST_IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * The samples in little-endian PCM16 `bytes`, sharing memory with them where possible: writes to
 * one may show in the other. Throws ERR_BAD_REQUEST for an odd byte count.
 */
export function pcm16leView(bytes: Uint8Array): Int16Array {
  if (bytes.length % 2 !== 0) {
    throw new ParlaError(
      'ERR_BAD_REQUEST',
      `PCM16 audio must have an even number of bytes, got ${bytes.length}`,
    );
  }
  if (HOST_IS_LITTLE_ENDIAN && bytes.byteOffset % 2 === 0) {
    return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
  }
  const samples = new Int16Array(bytes.length / 2);
  readPcm16le(bytes, samples);
  return samples;
}

/** Little-endian PCM16 bytes of `samples`, sharing memory with them on a little-endian host. */
export function pcm16leBytes(samples: Int16Array): Uint8Array {
  if (HOST_IS_LITTLE_ENDIAN) {
    return new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
  }
  const bytes = new Uint8Array(samples.length * 2);
  writePcm16le(samples, bytes);
  return bytes;
}

/**
 * Reads `sampleCount` little-endian samples from `input` at `byteOffset` into `output` at
 * `outputOffset`. Returns the number of samples read.
 */
export function readPcm16le(
  input: Uint8Array,
  output: Int16Array,
  byteOffset = 0,
  sampleCount = (input.length - byteOffset) >> 1,
  outputOffset = 0,
): number {
  checkRange(input.length, byteOffset, sampleCount * 2);
  checkRange(output.length, outputOffset, sampleCount);
  for (let i = 0, j = byteOffset; i < sampleCount; i++, j += 2) {
    output[outputOffset + i] = ((input[j]! | (input[j + 1]! << 8)) << 16) >> 16;
  }
  return sampleCount;
}

/** Writes `sampleCount` samples from `input` as little-endian bytes; returns bytes written. */
export function writePcm16le(
  input: Int16Array,
  output: Uint8Array,
  inputOffset = 0,
  sampleCount = input.length - inputOffset,
  byteOffset = 0,
): number {
  checkRange(input.length, inputOffset, sampleCount);
  checkRange(output.length, byteOffset, sampleCount * 2);
  for (let i = 0, j = byteOffset; i < sampleCount; i++, j += 2) {
    const sample = input[inputOffset + i]!;
    output[j] = sample & 0xff;
    output[j + 1] = (sample >> 8) & 0xff;
  }
  return sampleCount * 2;
}

/** Big-endian (RTP L16) counterpart of readPcm16le(). */
export function readPcm16be(
  input: Uint8Array,
  output: Int16Array,
  byteOffset = 0,
  sampleCount = (input.length - byteOffset) >> 1,
  outputOffset = 0,
): number {
  checkRange(input.length, byteOffset, sampleCount * 2);
  checkRange(output.length, outputOffset, sampleCount);
  for (let i = 0, j = byteOffset; i < sampleCount; i++, j += 2) {
    output[outputOffset + i] = (((input[j]! << 8) | input[j + 1]!) << 16) >> 16;
  }
  return sampleCount;
}

/** Big-endian (RTP L16) counterpart of writePcm16le(). */
export function writePcm16be(
  input: Int16Array,
  output: Uint8Array,
  inputOffset = 0,
  sampleCount = input.length - inputOffset,
  byteOffset = 0,
): number {
  checkRange(input.length, inputOffset, sampleCount);
  checkRange(output.length, byteOffset, sampleCount * 2);
  for (let i = 0, j = byteOffset; i < sampleCount; i++, j += 2) {
    const sample = input[inputOffset + i]!;
    output[j] = (sample >> 8) & 0xff;
    output[j + 1] = sample & 0xff;
  }
  return sampleCount * 2;
}

/**
 * Averages interleaved stereo (or any channel count) into mono: `frameCount` frames from
 * `input` into `output`. Returns the number of mono samples written.
 */
export function downmixToMono(
  input: Int16Array,
  channelCount: number,
  output: Int16Array,
  frameCount = Math.floor(input.length / channelCount),
): number {
  if (!Number.isInteger(channelCount) || channelCount < 1) {
    throw new RangeError(`channel count must be a positive integer, got ${channelCount}`);
  }
  checkRange(input.length, 0, frameCount * channelCount);
  checkRange(output.length, 0, frameCount);
  if (channelCount === 1) {
    for (let i = 0; i < frameCount; i++) {
      output[i] = input[i]!;
    }
    return frameCount;
  }
  for (let i = 0, j = 0; i < frameCount; i++) {
    let sum = 0;
    for (let c = 0; c < channelCount; c++) {
      sum += input[j++]!;
    }
    output[i] = Math.round(sum / channelCount);
  }
  return frameCount;
}
