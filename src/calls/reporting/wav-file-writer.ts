import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeWav } from '../../media/codecs/wav.js';

/** Past this many bytes waiting for the disk, further audio is dropped (and counted). */
export const MAX_PENDING_BYTES = 8 * 1024 * 1024;
const HEADER_BYTES = 44;
/** The largest data chunk a RIFF header can describe. */
const MAX_DATA_BYTES = 0xffffffff - 36;

export interface WrittenWav {
  readonly path: string;
  readonly bytes: number;
  readonly frames: number;
}

/**
 * A 16-bit PCM WAV file written as audio arrives: a header with zero sizes first, then the data
 * in order, then the sizes patched in at the end. It is written under a temporary name and
 * renamed to `path` when finished, so no reader sees a half-written file. Writes are queued on
 * one promise chain; the bytes waiting are bounded by MAX_PENDING_BYTES.
 */
export class WavFileWriter {
  readonly path: string;
  readonly #temp: string;
  readonly #channelCount: 1 | 2;
  #chain: Promise<FileHandle | null>;
  #pendingBytes = 0;
  #dataBytes = 0;
  #droppedBytes = 0;
  #error: unknown = null;

  constructor(path: string, channelCount: 1 | 2, sampleRateHz: number) {
    this.path = path;
    const temp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    this.#temp = temp;
    this.#channelCount = channelCount;
    const header = writeWav(new Int16Array(0), { sampleRateHz, channelCount });
    this.#chain = (async () => {
      await mkdir(dirname(path), { recursive: true });
      const handle = await open(temp, 'wx', 0o600);
      await handle.write(header, 0, header.length, 0);
      return handle;
    })().catch((error: unknown) => {
      this.#error = error;
      return null;
    });
  }

  get droppedBytes(): number {
    return this.#droppedBytes;
  }

  /** Queues interleaved samples; the array is owned by the writer from now on. */
  write(samples: Int16Array, count: number): void {
    const byteLength = count * 2;
    if (
      this.#error !== null ||
      this.#pendingBytes + byteLength > MAX_PENDING_BYTES ||
      this.#dataBytes + byteLength > MAX_DATA_BYTES
    ) {
      this.#droppedBytes += byteLength;
      return;
    }
    const position = HEADER_BYTES + this.#dataBytes;
    this.#dataBytes += byteLength;
    this.#pendingBytes += byteLength;
    // PCM16 little-endian: Int16Array bytes are already in that order on the hosts Node runs on.
    const bytes = new Uint8Array(samples.buffer, samples.byteOffset, byteLength);
    this.#chain = this.#chain.then(async (handle) => {
      try {
        if (handle !== null && this.#error === null) {
          await handle.write(bytes, 0, byteLength, position);
        }
      } catch (error) {
        this.#error = error;
      }
      this.#pendingBytes -= byteLength;
      return handle;
    });
  }

  /** Patches the sizes, closes and renames into place; throws if any write failed. */
  async finish(): Promise<WrittenWav> {
    const handle = await this.#chain;
    try {
      if (handle === null || this.#error !== null) {
        throw this.#error instanceof Error ? this.#error : new Error(String(this.#error));
      }
      const sizes = Buffer.alloc(4);
      sizes.writeUInt32LE(36 + this.#dataBytes, 0);
      await handle.write(sizes, 0, 4, 4);
      sizes.writeUInt32LE(this.#dataBytes, 0);
      await handle.write(sizes, 0, 4, 40);
      await handle.close();
      await rename(this.#temp, this.path);
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await rm(this.#temp, { force: true });
      throw error;
    }
    return {
      path: this.path,
      bytes: HEADER_BYTES + this.#dataBytes,
      frames: this.#dataBytes / 2 / this.#channelCount,
    };
  }

  /** Drops everything written (the call's recording is not wanted after all). */
  async discard(): Promise<void> {
    const handle = await this.#chain;
    await handle?.close().catch(() => undefined);
    await rm(this.#temp, { force: true });
  }
}
