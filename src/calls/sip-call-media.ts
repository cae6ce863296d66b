import type { CallTransport } from '../transports/websocket/types.js';
import type { RtpSession } from '../transports/rtp/rtp-session.js';
import { sharedFramePacer, type FramePacer, type PacedStream } from './frame-pacer.js';

/** Assistant audio buffered ahead of the RTP clock. Beyond it frames are dropped. */
const OUT_BUFFER_MS = 2000;

export interface SipCallMediaOptions {
  /**
   * The call's RTP session; its sampleRateHz and frameSamples (8 kHz G.711, 16 kHz G.722 and
   * Opus) size the frames both ways, for the life of the call.
   */
  readonly rtp: RtpSession;
  /** Caller audio, 20 ms of PCM16 at the session's rate per call; the receiver's array. */
  readonly onCallerAudio: (samples: Int16Array) => void;
  /** The call session closed its transport: hang up the SIP side (BYE) with this reason. */
  readonly onClose: (reason: string) => void;
  /** The 20 ms clock. Default the one all SIP media of the process share. */
  readonly pacer?: FramePacer;
}

/**
 * The media of one SIP call on the main thread, seen by the CallSession as its transport: the
 * shared 20 ms clock pulls the caller's audio out of the RTP jitter buffer (to the worker) and sends
 * the assistant's audio, buffered in a preallocated ring, as RTP (silence when there is none).
 */
export class SipCallMedia implements CallTransport {
  droppedAudioFrames = 0;
  maxBufferedBytes = 0;
  /** False while the SDP says we must not send (the caller holds the call: we are recvonly). */
  sending = true;
  /** The rate of the audio both ways: sendAudio() takes it, onCallerAudio gets it. */
  readonly sampleRateHz: number;
  private readonly frameSamples: number;
  private readonly bufferSamples: number;
  private readonly ring: Int16Array;
  private readonly frame: Int16Array;
  private readIndex = 0;
  private buffered = 0;
  private paced: PacedStream | undefined;
  private talking = false;
  private closed = false;

  constructor(private readonly options: SipCallMediaOptions) {
    this.sampleRateHz = options.rtp.sampleRateHz;
    this.frameSamples = options.rtp.frameSamples;
    this.bufferSamples = (this.sampleRateHz * OUT_BUFFER_MS) / 1000;
    this.ring = new Int16Array(this.bufferSamples);
    this.frame = new Int16Array(this.frameSamples);
  }

  /** Starts the 20 ms clock (after the call is answered). */
  start(): void {
    if (this.paced !== undefined || this.closed) {
      return;
    }
    this.paced = (this.options.pacer ?? sharedFramePacer).add(() => {
      this.pullCaller();
      this.sendAssistant();
    });
  }

  sendAudio(samples: Int16Array): boolean {
    if (this.closed) {
      return false;
    }
    const free = this.bufferSamples - this.buffered;
    if (samples.length > free) {
      this.droppedAudioFrames++;
      return false;
    }
    const write = (this.readIndex + this.buffered) % this.bufferSamples;
    const first = Math.min(samples.length, this.bufferSamples - write);
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
    this.paced?.stop();
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
    this.paced?.stop();
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
    this.options.onCallerAudio(pulled.samples.slice(0, this.frameSamples));
  }

  private sendAssistant(): void {
    const frame = this.frame;
    // While DTMF goes out the voice waits in the ring (the sender drops what it is given then).
    const count = this.options.rtp.sendingDtmf ? 0 : Math.min(this.buffered, this.frameSamples);
    if (count > 0) {
      if (!this.talking) {
        this.talking = true;
        this.options.rtp.markTalkspurt();
      }
      const first = Math.min(count, this.bufferSamples - this.readIndex);
      frame.set(this.ring.subarray(this.readIndex, this.readIndex + first));
      if (first < count) {
        frame.set(this.ring.subarray(0, count - first), first);
      }
      // The end of an utterance that is not a whole frame is padded with silence.
      frame.fill(0, count);
      this.readIndex = (this.readIndex + count) % this.bufferSamples;
      this.buffered -= count;
    } else {
      this.talking = false;
      frame.fill(0);
    }
    // The session keeps its rate for the call's life (sip-codecs.ts); were it to change, the
    // frames would no longer fit and are held back rather than thrown at the session.
    if (this.sending && this.options.rtp.frameSamples === this.frameSamples) {
      this.options.rtp.sendFrame(frame);
    }
  }
}
