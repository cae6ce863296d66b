import type { WebSocket } from 'uWebSockets.js';
import { InboundAudioDecoder, OutboundAudioEncoder } from './audio-codec.js';
import type { CallTransport, TransportPeer } from './types.js';

/** Send-side limits of one socket. */
export interface BackpressureLimits {
  /** Above this many buffered bytes, audio frames are dropped (and counted). */
  softLimitBytes: number;
  /** Above this many buffered bytes (text keeps being queued) the call is ended. */
  hardLimitBytes: number;
  /** Dropping audio continuously for this long ends the call too. */
  stallTimeoutMs: number;
}

export const DEFAULT_BACKPRESSURE: BackpressureLimits = {
  softLimitBytes: 64 * 1024,
  hardLimitBytes: 1024 * 1024,
  stallTimeoutMs: 10_000,
};

const FRAME_MS = 20;
/** Caller audio may arrive ahead of real time (a file streamed at once) up to this much… */
const INBOUND_BURST_SECONDS = 60;
/** …and, sustained, at most this many times real time; beyond that it is dropped. */
const INBOUND_MAX_SPEED = 4;

/** One call's transport socket: decodes what arrives, encodes and meters what leaves. */
export class TransportConnection implements CallTransport {
  droppedAudioFrames = 0;
  maxBufferedBytes = 0;
  /** Caller bytes dropped for arriving faster than INBOUND_MAX_SPEED × real time. */
  droppedInboundBytes = 0;
  private closed = false;
  private readonly decoder: InboundAudioDecoder;
  private readonly encoder: OutboundAudioEncoder;
  /** When the current run of dropped frames began (performance.now()), or -1. */
  private droppingSinceMs = -1;
  private backpressureReported = false;
  /** Inbound token bucket, in bytes: refills at INBOUND_MAX_SPEED × the real-time byte rate. */
  private readonly inboundBytesPerMs: number;
  private readonly inboundBurstBytes: number;
  private inboundBudgetBytes: number;
  private inboundCheckedAtMs = performance.now();

  constructor(
    private readonly socket: WebSocket<unknown>,
    private readonly peer: TransportPeer,
    private readonly limits: BackpressureLimits,
  ) {
    this.decoder = new InboundAudioDecoder(peer.encoding);
    this.encoder = new OutboundAudioEncoder(
      peer.encoding,
      Math.round((peer.sampleRateHz * FRAME_MS) / 1000),
    );
    const bytesPerSecond = peer.sampleRateHz * (peer.encoding === 'mulaw' ? 1 : 2);
    this.inboundBytesPerMs = (bytesPerSecond * INBOUND_MAX_SPEED) / 1000;
    this.inboundBurstBytes = bytesPerSecond * INBOUND_BURST_SECONDS;
    this.inboundBudgetBytes = this.inboundBurstBytes;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** A binary frame from the client (valid only during this call). */
  receiveAudio(message: ArrayBuffer): void {
    const nowMs = performance.now();
    this.inboundBudgetBytes = Math.min(
      this.inboundBurstBytes,
      this.inboundBudgetBytes + (nowMs - this.inboundCheckedAtMs) * this.inboundBytesPerMs,
    );
    this.inboundCheckedAtMs = nowMs;
    if (message.byteLength > this.inboundBudgetBytes) {
      if (this.droppedInboundBytes === 0) {
        this.sendJson({
          type: 'error',
          code: 'audio-too-fast',
          message: `Audio is arriving faster than ${INBOUND_MAX_SPEED}× real time; the excess is dropped`,
        });
      }
      this.droppedInboundBytes += message.byteLength;
      this.decoder.skip(message);
      return;
    }
    this.inboundBudgetBytes -= message.byteLength;
    const samples = this.decoder.decode(message);
    if (samples.length > 0) {
      this.peer.onAudio(samples);
    }
  }

  sendAudio(samples: Int16Array): boolean {
    if (this.closed) {
      return false;
    }
    const buffered = this.socket.getBufferedAmount();
    if (buffered > this.limits.softLimitBytes) {
      this.droppedAudioFrames += 1;
      const nowMs = performance.now();
      if (this.droppingSinceMs < 0) {
        this.droppingSinceMs = nowMs;
      } else if (nowMs - this.droppingSinceMs >= this.limits.stallTimeoutMs) {
        this.reportBackpressure(buffered);
      }
      return false;
    }
    this.droppingSinceMs = -1;
    this.socket.send(this.encoder.encode(samples), true);
    this.noteBuffered(this.socket.getBufferedAmount());
    return true;
  }

  sendJson(message: object): void {
    if (this.closed) {
      return;
    }
    this.socket.send(JSON.stringify(message), false);
    const buffered = this.socket.getBufferedAmount();
    this.noteBuffered(buffered);
    if (buffered > this.limits.hardLimitBytes) {
      this.reportBackpressure(buffered);
    }
  }

  close(code: number, reason: string): void {
    if (this.closed) {
      return;
    }
    this.closed = true;
    // A close reason is at most 123 bytes; endedReasons are ASCII.
    this.socket.end(code, reason.slice(0, 123));
  }

  /** The socket is gone (uWS close handler): never touch it again. */
  markClosed(): void {
    this.closed = true;
  }

  private noteBuffered(bytes: number): void {
    if (bytes > this.maxBufferedBytes) {
      this.maxBufferedBytes = bytes;
    }
  }

  private reportBackpressure(buffered: number): void {
    if (!this.backpressureReported) {
      this.backpressureReported = true;
      this.peer.onBackpressure(buffered);
    }
  }
}
