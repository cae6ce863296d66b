import type { WebSocket } from 'ws';

export interface AudioQueueOptions {
  /** Audio held back (while connecting, or while the socket is slow) beyond this drops the oldest. */
  maxQueuedBytes: number;
  /** Bytes handed to the socket and not yet written out before we hold the rest back. */
  highWaterBytes?: number;
}

const DEFAULT_HIGH_WATER_BYTES = 64 * 1024;

/**
 * Audio on its way to a vendor socket. Chunks wait here until a socket is attached, and whenever
 * the socket has more than `highWaterBytes` unwritten; the wait is bounded by dropping the oldest
 * chunks (counted in `droppedBytes`), so a stalled vendor never makes us hold unbounded memory.
 */
export class AudioSendQueue {
  /** Bytes dropped because the queue was full. */
  droppedBytes = 0;
  /** Bytes handed to the socket. */
  sentBytes = 0;
  readonly #maxQueuedBytes: number;
  #highWaterBytes: number;
  readonly #chunks: Buffer[] = [];
  #queuedBytes = 0;
  #inFlightBytes = 0;
  #socket: WebSocket | null = null;

  constructor(options: AudioQueueOptions) {
    this.#maxQueuedBytes = options.maxQueuedBytes;
    this.#highWaterBytes = options.highWaterBytes ?? DEFAULT_HIGH_WATER_BYTES;
  }

  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#queuedBytes += chunk.length;
    while (this.#queuedBytes > this.#maxQueuedBytes) {
      const dropped = this.#chunks.shift();
      if (dropped === undefined) {
        break;
      }
      this.#queuedBytes -= dropped.length;
      this.droppedBytes += dropped.length;
    }
    this.flush();
  }

  /** Starts sending to `socket` (already open). */
  attach(socket: WebSocket): void {
    this.#socket = socket;
    this.flush();
  }

  /** Hands everything queued to the socket regardless of the high-water mark (before closing). */
  flushAll(): void {
    this.#highWaterBytes = Number.POSITIVE_INFINITY;
    this.flush();
  }

  clear(): void {
    this.#chunks.length = 0;
    this.#queuedBytes = 0;
    this.#socket = null;
  }

  flush(): void {
    const socket = this.#socket;
    if (socket === null || socket.readyState !== socket.OPEN) {
      return;
    }
    while (this.#inFlightBytes < this.#highWaterBytes) {
      const chunk = this.#chunks.shift();
      if (chunk === undefined) {
        return;
      }
      this.#queuedBytes -= chunk.length;
      this.#inFlightBytes += chunk.length;
      this.sentBytes += chunk.length;
      socket.send(chunk, { binary: true }, () => {
        this.#inFlightBytes -= chunk.length;
        this.flush();
      });
    }
  }
}

/** A copy of the samples as little-endian PCM16 bytes (the caller may reuse its array). */
export function pcmBytes(samples: Int16Array): Buffer {
  return Buffer.from(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
}
