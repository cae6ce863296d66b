import { ParlaError } from '../../core/errors.js';
import { decodeALaw, decodeMuLaw, encodeALaw, encodeMuLaw } from './g711.js';
import { readPcm16le, writePcm16le } from './pcm16.js';

/**
 * RIFF WAVE files: 16-bit PCM, 8-bit µ-law (format tag 7) and 8-bit A-law (format tag 6), mono or
 * stereo, including WAVE_FORMAT_EXTENSIBLE headers that wrap those. Chunks other than `fmt ` and
 * `data` are skipped. Broken or unsupported files raise ERR_BAD_REQUEST with the reason.
 */
export type WavEncoding = 'pcm16' | 'mulaw' | 'alaw';

export interface WavAudio {
  encoding: WavEncoding;
  sampleRateHz: number;
  channelCount: 1 | 2;
  /** Samples per channel. */
  frameCount: number;
  durationMs: number;
  /** Decoded samples, interleaved when stereo. */
  samples: Int16Array;
  /** The `data` chunk as stored (PCM16LE or G.711 codes); a view into the input. */
  data: Uint8Array;
}

export interface WriteWavOptions {
  sampleRateHz: number;
  /** Default 1. With 2, `samples` are interleaved left/right. */
  channelCount?: 1 | 2;
  /** Default 'pcm16'. */
  encoding?: WavEncoding;
}

const FORMAT_PCM = 1;
const FORMAT_ALAW = 6;
const FORMAT_MULAW = 7;
const FORMAT_EXTENSIBLE = 0xfffe;
/** A data chunk size some streaming writers leave in place: "until the end of the file". */
const SIZE_UNKNOWN = 0xffffffff;
const MAX_SAMPLE_RATE_HZ = 768_000;

interface Format {
  encoding: WavEncoding;
  channelCount: 1 | 2;
  sampleRateHz: number;
  blockAlign: number;
}

export function readWav(bytes: Uint8Array): WavAudio {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 12) {
    throw bad(`file is ${bytes.length} bytes, shorter than a RIFF header`);
  }
  const riff = fourCC(bytes, 0);
  if (riff !== 'RIFF') {
    throw bad(
      riff === 'RIFX' || riff === 'RF64'
        ? `${riff} files are not supported, only little-endian RIFF`
        : 'not a RIFF file',
    );
  }
  if (fourCC(bytes, 8) !== 'WAVE') {
    throw bad(`RIFF form is "${fourCC(bytes, 8)}", not WAVE`);
  }
  let format: Format | undefined;
  let data: Uint8Array | undefined;
  let offset = 12;
  while (offset < bytes.length && (format === undefined || data === undefined)) {
    if (bytes.length - offset < 8) {
      throw bad(`truncated chunk header at byte ${offset}`);
    }
    const id = fourCC(bytes, offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    const remaining = bytes.length - body;
    if (id === 'data') {
      if (size === SIZE_UNKNOWN) {
        data = bytes.subarray(body);
      } else if (size > remaining) {
        throw bad(`truncated: the data chunk declares ${size} bytes but ${remaining} follow`);
      } else {
        data = bytes.subarray(body, body + size);
      }
    } else {
      if (size > remaining) {
        throw bad(`truncated: the "${id}" chunk declares ${size} bytes but ${remaining} follow`);
      }
      if (id === 'fmt ') {
        format = parseFormat(view, body, size);
      }
    }
    offset = body + size + (size & 1);
  }
  if (format === undefined) {
    throw bad('no fmt chunk');
  }
  if (data === undefined) {
    throw bad('no data chunk');
  }
  if (data.length % format.blockAlign !== 0) {
    throw bad(
      `truncated: ${data.length} data bytes is not a whole number of ${format.blockAlign}-byte frames`,
    );
  }
  const sampleCount = format.encoding === 'pcm16' ? data.length / 2 : data.length;
  const samples = new Int16Array(sampleCount);
  if (format.encoding === 'pcm16') {
    readPcm16le(data, samples);
  } else if (format.encoding === 'mulaw') {
    decodeMuLaw(data, samples);
  } else {
    decodeALaw(data, samples);
  }
  const frameCount = sampleCount / format.channelCount;
  return {
    encoding: format.encoding,
    sampleRateHz: format.sampleRateHz,
    channelCount: format.channelCount,
    frameCount,
    durationMs: (frameCount * 1000) / format.sampleRateHz,
    samples,
    data,
  };
}

/** A complete WAV file holding `samples` (interleaved when stereo), encoded as asked. */
export function writeWav(samples: Int16Array, options: WriteWavOptions): Uint8Array {
  const encoding = options.encoding ?? 'pcm16';
  const channelCount = options.channelCount ?? 1;
  const { sampleRateHz } = options;
  if (channelCount !== 1 && channelCount !== 2) {
    throw new RangeError(`channel count must be 1 or 2, got ${String(channelCount)}`);
  }
  if (!Number.isInteger(sampleRateHz) || sampleRateHz < 1 || sampleRateHz > MAX_SAMPLE_RATE_HZ) {
    throw new RangeError(`sample rate must be an integer from 1 to ${MAX_SAMPLE_RATE_HZ} Hz`);
  }
  if (samples.length % channelCount !== 0) {
    throw new RangeError(`${samples.length} samples do not split into ${channelCount} channels`);
  }
  const pcm = encoding === 'pcm16';
  const bytesPerSample = pcm ? 2 : 1;
  const dataSize = samples.length * bytesPerSample;
  const fmtSize = pcm ? 16 : 18;
  const factSize = pcm ? 0 : 12;
  const fileSize = 12 + 8 + fmtSize + factSize + 8 + dataSize + (dataSize & 1);
  if (fileSize - 8 > 0xffffffff) {
    throw new RangeError('audio too long for a RIFF file');
  }
  const bytes = new Uint8Array(fileSize);
  const view = new DataView(bytes.buffer);
  writeFourCC(bytes, 0, 'RIFF');
  view.setUint32(4, fileSize - 8, true);
  writeFourCC(bytes, 8, 'WAVE');
  writeFourCC(bytes, 12, 'fmt ');
  view.setUint32(16, fmtSize, true);
  view.setUint16(20, pcm ? FORMAT_PCM : encoding === 'mulaw' ? FORMAT_MULAW : FORMAT_ALAW, true);
  view.setUint16(22, channelCount, true);
  view.setUint32(24, sampleRateHz, true);
  view.setUint32(28, sampleRateHz * channelCount * bytesPerSample, true);
  view.setUint16(32, channelCount * bytesPerSample, true);
  view.setUint16(34, bytesPerSample * 8, true);
  let offset = 36;
  if (!pcm) {
    view.setUint16(offset, 0, true); // cbSize
    writeFourCC(bytes, offset + 2, 'fact');
    view.setUint32(offset + 6, 4, true);
    view.setUint32(offset + 10, samples.length / channelCount, true);
    offset += 14;
  }
  writeFourCC(bytes, offset, 'data');
  view.setUint32(offset + 4, dataSize, true);
  offset += 8;
  if (pcm) {
    writePcm16le(samples, bytes, 0, samples.length, offset);
  } else if (encoding === 'mulaw') {
    encodeMuLaw(samples, bytes, 0, samples.length, offset);
  } else {
    encodeALaw(samples, bytes, 0, samples.length, offset);
  }
  return bytes;
}

function parseFormat(view: DataView, offset: number, size: number): Format {
  if (size < 16) {
    throw bad(`fmt chunk is ${size} bytes, shorter than 16`);
  }
  let tag = view.getUint16(offset, true);
  const channels = view.getUint16(offset + 2, true);
  const sampleRateHz = view.getUint32(offset + 4, true);
  const blockAlign = view.getUint16(offset + 12, true);
  const bitsPerSample = view.getUint16(offset + 14, true);
  if (tag === FORMAT_EXTENSIBLE) {
    if (size < 40) {
      throw bad(`WAVE_FORMAT_EXTENSIBLE fmt chunk is ${size} bytes, shorter than 40`);
    }
    // The sub-format GUID starts with the classic format tag.
    tag = view.getUint16(offset + 24, true);
  }
  let encoding: WavEncoding;
  if (tag === FORMAT_PCM && bitsPerSample === 16) {
    encoding = 'pcm16';
  } else if ((tag === FORMAT_MULAW || tag === FORMAT_ALAW) && bitsPerSample === 8) {
    encoding = tag === FORMAT_MULAW ? 'mulaw' : 'alaw';
  } else {
    throw bad(
      `unsupported format: tag ${tag} with ${bitsPerSample} bits per sample ` +
        '(supported: 16-bit PCM, 8-bit µ-law, 8-bit A-law)',
    );
  }
  if (channels !== 1 && channels !== 2) {
    throw bad(`unsupported channel count ${channels} (supported: 1 or 2)`);
  }
  if (sampleRateHz < 1 || sampleRateHz > MAX_SAMPLE_RATE_HZ) {
    throw bad(`unsupported sample rate ${sampleRateHz} Hz`);
  }
  const expectedBlockAlign = (channels * bitsPerSample) / 8;
  if (blockAlign !== expectedBlockAlign) {
    throw bad(`block align is ${blockAlign}, expected ${expectedBlockAlign}`);
  }
  return { encoding, channelCount: channels, sampleRateHz, blockAlign };
}

function fourCC(bytes: Uint8Array, offset: number): string {
  return String.fromCharCode(
    bytes[offset]!,
    bytes[offset + 1]!,
    bytes[offset + 2]!,
    bytes[offset + 3]!,
  );
}

function writeFourCC(bytes: Uint8Array, offset: number, id: string): void {
  for (let i = 0; i < 4; i++) {
    bytes[offset + i] = id.charCodeAt(i);
  }
}

function bad(reason: string): ParlaError {
  return new ParlaError('ERR_BAD_REQUEST', `invalid WAV file: ${reason}`);
}
