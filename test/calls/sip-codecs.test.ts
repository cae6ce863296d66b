import { afterEach, describe, expect, it } from 'vitest';
import { SipCodecs } from '../../src/calls/sip-codecs.js';
import { codecName, SipLiveCalls, type LiveSipCall } from '../../src/calls/sip-live-calls.js';
import { RtpPortAllocator } from '../../src/transports/rtp/rtp-port-allocator.js';
import { RtpSession, type RtpCodecName } from '../../src/transports/rtp/rtp-session.js';
import type { SipDialog } from '../../src/transports/sip/dialog.js';
import {
  G722,
  OPUS,
  PCMA,
  PCMU,
  answerOffer,
  type LocalAudio,
} from '../../src/transports/sip/sdp-offer-answer.js';
import { parseSdp } from '../../src/transports/sip/sdp.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) {
    await cleanup();
  }
});

function offer(mLine: string, ...attributes: string[]): Buffer {
  return Buffer.from(
    [
      'v=0',
      'o=- 3 3 IN IP4 127.0.0.1',
      's=-',
      'c=IN IP4 127.0.0.1',
      't=0 0',
      mLine,
      ...attributes,
      '',
    ].join('\r\n'),
  );
}

function local(codecs: SipCodecs): LocalAudio {
  return {
    address: '127.0.0.1',
    port: 40_000,
    codecs: codecs.codecs,
    telephoneEvent: true,
    ptimeMs: 20,
    sessionId: '5',
    sessionVersion: 1,
  };
}

describe('SIP codec preferences', () => {
  it('reads the setting in order, any case, and refuses unknown or repeated codecs', () => {
    expect(SipCodecs.parse().codecs).toEqual([PCMU, PCMA, G722, OPUS]);
    expect(SipCodecs.parse(' Opus, g722 ,pcma').codecs).toEqual([OPUS, G722, PCMA]);
    expect(() => SipCodecs.parse('PCMU,GSM')).toThrow(/unknown SIP codec "gsm"/);
    expect(() => SipCodecs.parse('PCMU,pcmu')).toThrow(/listed twice/);
    expect(() => SipCodecs.parse('')).toThrow(RangeError);
  });

  it('knows the RTP codec and transport rate of each negotiated codec', () => {
    const cases: [typeof PCMU, RtpCodecName, number][] = [
      [PCMU, 'PCMU', 8000],
      [PCMA, 'PCMA', 8000],
      [G722, 'G722', 16_000],
      [OPUS, 'opus', 16_000],
    ];
    for (const [codec, rtp, rateHz] of cases) {
      expect(SipCodecs.rtpCodec(codec)).toBe(rtp);
      expect(SipCodecs.transportRateHz(codec)).toBe(rateHz);
      // As the offer spells it (opus/48000/2, upper or lower case).
      const negotiated = { codec: { ...codec, encoding: codec.encoding.toUpperCase() } };
      expect(codecName(negotiated as Parameters<typeof codecName>[0])).toBe(rtp);
    }
    expect(() => SipCodecs.rtpCodec({ encoding: 'GSM', clockRateHz: 8000 })).toThrow(RangeError);
    expect(SipCodecs.parse('opus,PCMU,G722').preferredRateHz).toBe(16_000);
    expect(SipCodecs.parse('opus,PCMU,G722').atRate(16_000)).toEqual([OPUS, G722]);
    expect(SipCodecs.parse().atRate(8000)).toEqual([PCMU, PCMA]);
  });

  it('negotiates per the offerer and the setting', () => {
    const parsed = (body: Buffer) => {
      const result = parseSdp(body.toString());
      if (!result.ok) {
        throw new Error(result.reason);
      }
      return result.session;
    };
    const opusOnly = parsed(offer('m=audio 5000 RTP/AVP 111', 'a=rtpmap:111 opus/48000/2'));
    const g722First = parsed(offer('m=audio 5000 RTP/AVP 9 0'));
    const pick = (session: typeof opusOnly, setting?: string) => {
      const result = answerOffer(session, local(SipCodecs.parse(setting)));
      return result.ok ? result.negotiated.codec.encoding : result.code;
    };
    expect(pick(opusOnly)).toBe('opus');
    expect(pick(g722First)).toBe('G722');
    expect(pick(g722First, 'PCMU,PCMA')).toBe('PCMU');
    expect(pick(opusOnly, 'PCMU,PCMA,G722')).toBe('SDP_NO_COMMON_CODEC');
  });

  it('a re-INVITE may change the codec only to one of the call rate', async () => {
    const minPort = 30_000 + 2 * Math.floor(Math.random() * 5000);
    const allocator = new RtpPortAllocator({ minPort, maxPort: minPort + 19 });
    const rtp = await RtpSession.open({
      allocator,
      bindAddress: '127.0.0.1',
      codec: 'G722',
      payloadType: 9,
    });
    cleanups.push(() => rtp.close());
    const calls = new SipLiveCalls('ack-timeout');
    const dialog = { id: 'dialog-1' } as SipDialog;
    const live = {
      rtp,
      media: { sending: true },
      local: local(SipCodecs.parse()),
      lastSdp: Buffer.alloc(0),
    } as unknown as LiveSipCall;
    calls.set(dialog, live);

    // PCMU comes first in both lists, but the call runs at 16 kHz: Opus is taken.
    const switched = calls.onOffer(
      dialog,
      offer(
        'm=audio 5002 RTP/AVP 0 111 101',
        'a=rtpmap:111 opus/48000/2',
        'a=rtpmap:101 telephone-event/48000',
      ),
    );
    expect(switched?.toString()).toContain('m=audio 40000 RTP/AVP 111 101\r\n');
    expect([rtp.codec, rtp.sampleRateHz, rtp.frameSamples]).toEqual(['opus', 16_000, 320]);
    expect(live.local.codecs).toEqual([PCMU, PCMA, G722, OPUS]);

    // Only 8 kHz codecs offered: refused (488), the call keeps Opus.
    expect(calls.onOffer(dialog, offer('m=audio 5002 RTP/AVP 0 8'))).toBeUndefined();
    expect(rtp.codec).toBe('opus');
  });
});
