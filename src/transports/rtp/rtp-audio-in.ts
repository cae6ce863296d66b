import { JitterBuffer, type JitterBufferFrame } from '../../media/jitter/jitter-buffer.js';
import type { RtpCodecProfile } from './rtp-codecs.js';
import { RtpReframer } from './rtp-reframer.js';

export interface RtpAudioInDelays {
  readonly minDelayMs?: number | undefined;
  readonly maxDelayMs?: number | undefined;
}

/**
 * The receiving audio path of one codec: RTP payloads onto the 20 ms frame grid (cut for G.711
 * and G.722, whole packets for Opus) and into a jitter buffer that plays PCM at the codec's
 * rate. A codec change replaces the whole path.
 */
export class RtpAudioIn {
  readonly jitter: JitterBuffer;
  private readonly reframer: RtpReframer;
  private readonly wholePackets: boolean;

  constructor(profile: RtpCodecProfile, delays: RtpAudioInDelays) {
    this.jitter = new JitterBuffer({
      ...profile.jitterOptions(),
      ...(delays.minDelayMs !== undefined && { minDelayMs: delays.minDelayMs }),
      ...(delays.maxDelayMs !== undefined && { maxDelayMs: delays.maxDelayMs }),
    });
    this.reframer = new RtpReframer(this.jitter, profile.frameClockUnits);
    this.wholePackets = profile.framing === 'packets';
  }

  /** One audio payload. False when a whole packet fell off the frame grid (dropped). */
  push(
    timestamp: number,
    data: Uint8Array,
    offset: number,
    length: number,
    nowMs: number,
  ): boolean {
    if (!this.wholePackets) {
      this.reframer.push(timestamp, data, offset, length, nowMs);
      return true;
    }
    return this.reframer.pushPacket(timestamp, data, offset, length, nowMs) === 1;
  }

  /** The next 20 ms frame to play (the object is reused). */
  pull(): JitterBufferFrame {
    return this.jitter.pull();
  }

  /** A new SSRC: a new frame grid, the frame numbering going on. */
  restartGrid(): void {
    this.reframer.reset();
  }
}
