import { describe, expect, it } from 'vitest';
import { FramePacer } from '../../src/calls/frame-pacer.js';
import { SipCallMedia } from '../../src/calls/sip-call-media.js';
import type { RtpSession } from '../../src/transports/rtp/rtp-session.js';

/** An RtpSession stand-in recording what the media clock does with it. */
function fakeRtp() {
  const sent: Int16Array[] = [];
  let marks = 0;
  let closed = 0;
  const frame = { samples: new Int16Array(160).fill(7), sampleRateHz: 8000, ptsMs: 0 };
  const state = { sendingDtmf: false };
  const rtp = {
    sampleRateHz: 8000,
    frameSamples: 160,
    get sendingDtmf() {
      return state.sendingDtmf;
    },
    pullFrame: () => frame,
    sendFrame: (samples: Int16Array) => sent.push(samples.slice()),
    markTalkspurt: () => marks++,
    close: () => {
      closed++;
      return Promise.resolve();
    },
  } as unknown as RtpSession;
  return { rtp, sent, state, marks: () => marks, closed: () => closed };
}

describe('SIP call media', () => {
  it('sends buffered assistant audio in 20 ms frames, then silence', () => {
    let nowMs = 0;
    const pacer = new FramePacer({ now: () => nowMs, timer: false });
    const fake = fakeRtp();
    const caller: Int16Array[] = [];
    const media = new SipCallMedia({
      rtp: fake.rtp,
      onCallerAudio: (samples) => caller.push(samples),
      onClose: () => {},
      pacer,
    });
    media.start();
    expect(media.sendAudio(new Int16Array(240).fill(100))).toBe(true);
    nowMs = 60;
    pacer.tick();
    media.stop();
    expect(fake.sent).toHaveLength(3);
    expect(fake.sent[0]!.every((sample) => sample === 100)).toBe(true);
    // 240 samples: one full frame, then the last 80 padded with silence, then silence.
    expect(fake.sent[1]!.subarray(0, 80).every((sample) => sample === 100)).toBe(true);
    expect(fake.sent[1]!.subarray(80).every((sample) => sample === 0)).toBe(true);
    expect(fake.sent[2]!.every((sample) => sample === 0)).toBe(true);
    expect(fake.marks()).toBe(1);
    expect(caller).toHaveLength(3);
    expect(caller[0]).toHaveLength(160);
    expect(caller[0]).not.toBe(caller[1]);
    expect(fake.closed()).toBe(1);
  });

  it('drops the audio not yet sent when the caller barges in', () => {
    let nowMs = 0;
    const pacer = new FramePacer({ now: () => nowMs, timer: false });
    const fake = fakeRtp();
    const media = new SipCallMedia({
      rtp: fake.rtp,
      onCallerAudio: () => {},
      onClose: () => {},
      pacer,
    });
    media.start();
    media.sendAudio(new Int16Array(1600).fill(100));
    nowMs = 20;
    pacer.tick();
    media.sendJson({ type: 'clear' });
    nowMs = 40;
    pacer.tick();
    media.stop();
    expect(fake.sent.map((frame) => frame[0])).toEqual([100, 0]);
  });

  it('holds the assistant audio back while DTMF goes out, then sends all of it', () => {
    let nowMs = 0;
    const pacer = new FramePacer({ now: () => nowMs, timer: false });
    const fake = fakeRtp();
    const media = new SipCallMedia({
      rtp: fake.rtp,
      onCallerAudio: () => {},
      onClose: () => {},
      pacer,
    });
    media.start();
    media.sendAudio(new Int16Array(320).fill(100));
    fake.state.sendingDtmf = true;
    nowMs = 40;
    pacer.tick();
    fake.state.sendingDtmf = false;
    nowMs = 100;
    pacer.tick();
    media.stop();
    // Two ticks during the keys (what the sender replaces with events), then the voice, whole.
    expect(fake.sent.map((frame) => frame[0])).toEqual([0, 0, 100, 100, 0]);
  });

  it('sends nothing while the caller holds the call', () => {
    let nowMs = 0;
    const pacer = new FramePacer({ now: () => nowMs, timer: false });
    const fake = fakeRtp();
    const media = new SipCallMedia({
      rtp: fake.rtp,
      onCallerAudio: () => {},
      onClose: () => {},
      pacer,
    });
    media.start();
    media.sending = false;
    nowMs = 40;
    pacer.tick();
    media.sending = true;
    nowMs = 60;
    pacer.tick();
    media.stop();
    expect(fake.sent).toHaveLength(1);
  });

  it('drops what does not fit its 2 s buffer and counts it', () => {
    const media = new SipCallMedia({
      rtp: fakeRtp().rtp,
      onCallerAudio: () => {},
      onClose: () => {},
    });
    expect(media.sendAudio(new Int16Array(16_000))).toBe(true);
    expect(media.sendAudio(new Int16Array(160))).toBe(false);
    expect(media.droppedAudioFrames).toBe(1);
    expect(media.maxBufferedBytes).toBe(32_000);
  });

  it('hangs up once when the call session closes it', () => {
    const reasons: string[] = [];
    const media = new SipCallMedia({
      rtp: fakeRtp().rtp,
      onCallerAudio: () => {},
      onClose: (reason) => reasons.push(reason),
    });
    media.close(1000, 'assistant-ended-call');
    media.close(1000, 'again');
    expect(reasons).toEqual(['assistant-ended-call']);
  });
});
