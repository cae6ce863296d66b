import type { CallTransport } from '../transports/websocket/types.js';
import type { RtpSession } from '../transports/rtp/rtp-session.js';

const FRAME_SAMPLES = 160;
const FRAME_MS = 20;
/** At most this many frames are caught up in one tick after the event loop stalled. */
const MAX_CATCH_UP_FRAMES = 5;
/** Assistant audio buffered ahead of the RTP clock: 2 s at 8 kHz. Beyond it frames are dropped. */
const OUT_BUFFER_SAMPLES = 16_000;

export interface SipCallMediaOptions {
  readonly rtp: RtpSession;
  /** Caller audio, 20 ms of 8 kHz PCM16 per call; the array is the receiver's (transferable). */
  readonly onCallerAudio: (samples: Int16Array) => void;
  /** The call session closed its transport: hang up the SIP side (BYE) with this reason. */
  readonly onClose: (reason: string) => void;
  /** Monotonic milliseconds. Default performance.now. */
  readonly now?: () => number;
}

/**
 * The media of one SIP call on the main thread, seen by the CallSession as its transport: a
 * 20 ms clock pulls the caller's audio out of the RTP jitter buffer (to the worker) and sends
 * the assistant's audio, buffered in a preallocated ring, as RTP (silence when there is none).
 */
export class SipCallMedia implements CallTransport {
  droppedAudioFrames = 0;
  maxBufferedBytes = 0;
  /** False while the SDP says we must not send (the caller holds the call: we are recvonly). */
  sending = true;
  private readonly now: () => number;
  private readonly ring = new Int16Array(OUT_BUFFER_SAMPLES);
  private readonly frame = new Int16Array(FRAME_SAMPLES);
  private readIndex = 0;
  private buffered = 0;
  private timer: NodeJS.Timeout | undefined;
  private nextTickMs = 0;
  private talking = false;
  private closed = false;

  constructor(private readonly options: SipCallMediaOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  /** Starts the 20 ms clock (after the call is answered). */
  start(): void {
    if (this.timer !== undefined || this.closed) {
      return;
    }
    this.nextTickMs = this.now() + FRAME_MS;
    this.timer = setInterval(() => this.tick(), FRAME_MS / 2);
  }

  /** Runs the frames that are due; public so tests can drive it. */
  tick(): void {
    const nowMs = this.now();
    let frames = 0;
    while (this.nextTickMs <= nowMs && frames < MAX_CATCH_UP_FRAMES && !this.closed) {
      this.nextTickMs += FRAME_MS;
      frames++;
      this.pullCaller();
      this.sendAssistant();
    }
    if (this.nextTickMs <= nowMs) {
      // Too far behind: skip ahead rather than burst.
      this.nextTickMs = nowMs + FRAME_MS;
    }
  }

  sendAudio(samples: Int16Array): boolean {
    if (this.closed) {
      return false;
    }
    const free = OUT_BUFFER_SAMPLES - this.buffered;
    if (samples.length > free) {
      this.droppedAudioFrames++;
      return false;
    }
    const write = (this.readIndex + this.buffered) % OUT_BUFFER_SAMPLES;
    const first = Math.min(samples.length, OUT_BUFFER_SAMPLES - write);
    this.ring.set(samples.subarray(0, first), write);
    if (first < samples.length) {
      this.ring.set(samples.subarray(first), 0);
    }
    this.buffered += samples.length;
    this.maxBufferedBytes = Math.max(this.maxBufferedBytes, this.buffered * 2);
    return true;
  }

  /**
   * Client messages have no path to a phone caller; `clear` (the caller barged in) drops the
   * assistant audio not yet sent.
   */
  sendJson(message: object): void {
    if ((message as { type?: unknown }).type === 'clear') {
      this.clear();
    }
  }

  close(_code: number, reason: string): void {
    if (this.closed) {
      return;
    }
    this.stop();
    this.options.onClose(reason);
  }

  /** Stops the clock and the RTP session without hanging up (the SIP side already ended). */
  stop(): void {
    if (this.closed) {
      return;
    }
    this.closed = true;
    if (this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    void this.options.rtp.close();
  }

  /**
   * Stops the clock but leaves the RTP session open and the SIP side up: a bridge (a transfer
   * Parla carries itself, src/calls/sip-bridge.ts) relays the caller's media from now on, and
   * the call session's later close() no longer hangs up. False when the media already closed.
   */
  handOver(): boolean {
    if (this.closed) {
      return false;
    }
    this.closed = true;
    if (this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    return true;
  }

  /** Drops the assistant audio not yet sent (barge-in). */
  clear(): void {
    this.readIndex = 0;
    this.buffered = 0;
  }

  private pullCaller(): void {
    const pulled = this.options.rtp.pullFrame();
    // The copy is transferred to the worker, so it cannot be reused.
    this.options.onCallerAudio(pulled.samples.slice(0, FRAME_SAMPLES));
  }

  private sendAssistant(): void {
    const frame = this.frame;
    // While DTMF goes out the voice waits in the ring (the sender drops what it is given then).
    const count = this.options.rtp.sendingDtmf ? 0 : Math.min(this.buffered, FRAME_SAMPLES);
    if (count > 0) {
      if (!this.talking) {
        this.talking = true;
        this.options.rtp.markTalkspurt();
      }
      const first = Math.min(count, OUT_BUFFER_SAMPLES - this.readIndex);
      frame.set(this.ring.subarray(this.readIndex, this.readIndex + first));
      if (first < count) {
        frame.set(this.ring.subarray(0, count - first), first);
      }
      // The end of an utterance that is not a whole frame is padded with silence.
      frame.fill(0, count);
      this.readIndex = (this.readIndex + count) % OUT_BUFFER_SAMPLES;
      this.buffered -= count;
    } else {
      this.talking = false;
      frame.fill(0);
    }
    if (this.sending) {
      this.options.rtp.sendFrame(frame);
    }
  }
}
