import { Resampler } from '../media/resample/resampler.js';
import type { RtpSession } from '../transports/rtp/rtp-session.js';

/**
 * One direction of a bridge Parla carries: every 20 ms, the next frame of one leg's jitter
 * buffer (silence when none came) goes out on the other leg, resampled when the legs run at
 * different rates (a G.722 or Opus caller transferred to a G.711-only destination). The
 * resampler and its output frame are made once; relaying allocates nothing.
 */
export class BridgeRelay {
  private readonly resampler: Resampler | undefined;
  private readonly frame: Int16Array;

  constructor(
    private readonly from: RtpSession,
    private readonly to: RtpSession,
  ) {
    this.resampler =
      from.sampleRateHz === to.sampleRateHz
        ? undefined
        : new Resampler({ inputRateHz: from.sampleRateHz, outputRateHz: to.sampleRateHz });
    this.frame = new Int16Array(to.frameSamples);
  }

  /** Relays one frame; `sending` false (the other leg must not get media) only drains. */
  relay(sending: boolean): void {
    const { samples } = this.from.pullFrame();
    const input =
      samples.length === this.from.frameSamples
        ? samples
        : samples.subarray(0, this.from.frameSamples);
    const resampler = this.resampler;
    if (resampler === undefined) {
      if (sending) {
        this.to.sendFrame(input);
      }
      return;
    }
    // Resampled even when not sending, so the filter's history stays continuous.
    const written = resampler.process(input, this.frame);
    this.frame.fill(0, written);
    if (sending) {
      this.to.sendFrame(this.frame);
    }
  }
}
