import { describe, expect, it } from 'vitest';
import { BridgeRelay } from '../../src/calls/sip-bridge-relay.js';
import type { RtpSession } from '../../src/transports/rtp/rtp-session.js';

/** A leg at `sampleRateHz` whose jitter buffer plays a tone, and which records what it sends. */
function leg(sampleRateHz: number, toneHz: number) {
  const frameSamples = sampleRateHz / 50;
  const sent: Int16Array[] = [];
  let position = 0;
  // Longer than a frame, as the jitter buffer's frame object may be.
  const frame = { samples: new Int16Array(frameSamples + 32), kind: 'audio' };
  const rtp = {
    sampleRateHz,
    frameSamples,
    pullFrame: () => {
      for (let i = 0; i < frameSamples; i++, position++) {
        frame.samples[i] = Math.round(
          8000 * Math.sin((2 * Math.PI * toneHz * position) / sampleRateHz),
        );
      }
      return frame;
    },
    sendFrame: (samples: Int16Array) => {
      expect(samples).toHaveLength(frameSamples);
      sent.push(samples.slice());
    },
  } as unknown as RtpSession;
  return { rtp, sent };
}

/** Power of `samples` at `hz` relative to their total power (a single-bin DFT). */
function toneShare(samples: Int16Array, sampleRateHz: number, hz: number): number {
  let re = 0;
  let im = 0;
  let total = 0;
  for (let i = 0; i < samples.length; i++) {
    const x = samples[i]!;
    re += x * Math.cos((2 * Math.PI * hz * i) / sampleRateHz);
    im += x * Math.sin((2 * Math.PI * hz * i) / sampleRateHz);
    total += x * x;
  }
  return (2 * (re * re + im * im)) / samples.length / total;
}

function joined(frames: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(frames.reduce((sum, frame) => sum + frame.length, 0));
  let at = 0;
  for (const frame of frames) {
    out.set(frame, at);
    at += frame.length;
  }
  return out;
}

describe('BridgeRelay', () => {
  it('passes frames through unchanged between legs of one rate', () => {
    const from = leg(8000, 440);
    const to = leg(8000, 0);
    const relay = new BridgeRelay(from.rtp, to.rtp);
    relay.relay(true);
    const expected = Int16Array.from({ length: 160 }, (_, i) =>
      Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)),
    );
    expect(to.sent).toEqual([expected]);
  });

  it.each([
    [16000, 8000],
    [8000, 16000],
  ])('resamples a %i Hz leg for a %i Hz leg, keeping the tone', (fromRateHz, toRateHz) => {
    const from = leg(fromRateHz, 1000);
    const to = leg(toRateHz, 0);
    const relay = new BridgeRelay(from.rtp, to.rtp);
    for (let i = 0; i < 50; i++) {
      relay.relay(true);
    }
    expect(to.sent).toHaveLength(50);
    // After the filter's delay, nearly all the power is the 1 kHz tone.
    const steady = joined(to.sent.slice(5));
    expect(toneShare(steady, toRateHz, 1000)).toBeGreaterThan(0.95);
  });

  it('drains the leg without sending while the other leg must not get media', () => {
    const from = leg(16000, 1000);
    const to = leg(8000, 0);
    const relay = new BridgeRelay(from.rtp, to.rtp);
    relay.relay(false);
    relay.relay(false);
    expect(to.sent).toEqual([]);
    relay.relay(true);
    expect(to.sent).toHaveLength(1);
  });
});
