import { describe, expect, it } from 'vitest';
import {
  G722,
  OPUS,
  PCMA,
  PCMU,
  answerOffer,
  createOffer,
  readAnswer,
  type LocalAudio,
} from '../../../src/transports/sip/sdp-offer-answer.js';
import { parseSdp, serializeSdp, type SdpSession } from '../../../src/transports/sip/sdp.js';

const LOCAL: LocalAudio = {
  address: '192.0.2.1',
  port: 40000,
  codecs: [PCMU, PCMA, G722, OPUS],
  telephoneEvent: true,
  ptimeMs: 20,
  sessionId: '77',
  sessionVersion: 1,
};

/** An offer from 198.51.100.7 with one m= line and its attributes. */
function offerOf(mLine: string, ...attributes: string[]): SdpSession {
  const lines = ['v=0', 'o=- 9 9 IN IP4 198.51.100.7', 's=-', 'c=IN IP4 198.51.100.7', 't=0 0'];
  const parsed = parseSdp([...lines, mLine, ...attributes, ''].join('\r\n'));
  if (!parsed.ok) {
    throw new Error(`${parsed.code}: ${parsed.reason}`);
  }
  return parsed.session;
}

describe('SDP with G.722 and Opus', () => {
  it('offers every codec, telephone-event per RTP clock, and our Opus fmtp', () => {
    const text = serializeSdp(createOffer(LOCAL));
    expect(text).toContain('m=audio 40000 RTP/AVP 0 8 9 111 101 102\r\n');
    expect(text).toContain('a=rtpmap:9 G722/8000\r\n');
    expect(text).toContain('a=rtpmap:111 opus/48000/2\r\n');
    expect(text).toContain(
      'a=fmtp:111 maxplaybackrate=16000;sprop-maxcapturerate=16000;stereo=0;sprop-stereo=0;useinbandfec=0\r\n',
    );
    expect(text).toContain('a=rtpmap:101 telephone-event/8000\r\n');
    expect(text).toContain('a=rtpmap:102 telephone-event/48000\r\n');
  });

  it('answers an Opus-only offer with Opus, its fmtp and telephone-event/48000', () => {
    const offer = offerOf(
      'm=audio 5004 RTP/AVP 109 110',
      'a=rtpmap:109 opus/48000/2',
      'a=fmtp:109 useinbandfec=1;minptime=10',
      'a=rtpmap:110 telephone-event/48000',
      'a=fmtp:110 0-16',
    );
    const result = answerOffer(offer, LOCAL);
    expect(result.ok && result.negotiated).toMatchObject({
      payloadType: 109,
      codec: { encoding: 'opus', clockRateHz: 48000 },
      telephoneEventPayloadType: 110,
    });
    const text = result.ok ? serializeSdp(result.answer!) : '';
    expect(text).toContain('m=audio 40000 RTP/AVP 109 110\r\n');
    expect(text).toContain('a=rtpmap:109 opus/48000/2\r\n');
    expect(text).toContain('a=fmtp:109 maxplaybackrate=16000;');
    expect(text).toContain('a=rtpmap:110 telephone-event/48000\r\n');
  });

  it('pairs telephone-event only at the codec clock: Opus with only /8000 gets no DTMF', () => {
    const offer = offerOf(
      'm=audio 5004 RTP/AVP 111 101',
      'a=rtpmap:111 opus/48000/2',
      'a=rtpmap:101 telephone-event/8000',
    );
    const result = answerOffer(offer, LOCAL);
    expect(result.ok && result.negotiated.codec.encoding).toBe('opus');
    expect(result.ok && result.negotiated.telephoneEventPayloadType).toBeUndefined();
  });

  it("takes the offerer's order among the codecs we run (RFC 3264 §6.1)", () => {
    const offer = offerOf('m=audio 5004 RTP/AVP 9 0 101', 'a=rtpmap:101 telephone-event/8000');
    const wideband = answerOffer(offer, LOCAL);
    expect(
      wideband.ok && [wideband.negotiated.codec.encoding, wideband.negotiated.payloadType],
    ).toEqual(['G722', 9]);
    expect(wideband.ok && wideband.negotiated.telephoneEventPayloadType).toBe(101);
    const narrow = answerOffer(offer, { ...LOCAL, codecs: [PCMU, PCMA] });
    expect(narrow.ok && narrow.negotiated.codec.encoding).toBe('PCMU');
    const none = answerOffer(offerOf('m=audio 5004 RTP/AVP 9'), { ...LOCAL, codecs: [OPUS] });
    expect(none).toMatchObject({ ok: false, code: 'SDP_NO_COMMON_CODEC' });
  });

  it('reads an Opus answer to our offer, with its telephone-event payload type', () => {
    const offer = createOffer(LOCAL);
    const answer = offerOf(
      'm=audio 6008 RTP/AVP 111 102',
      'a=rtpmap:111 opus/48000/2',
      'a=rtpmap:102 telephone-event/48000',
    );
    const read = readAnswer(offer, answer, LOCAL);
    expect(read.ok && read.negotiated).toMatchObject({
      payloadType: 111,
      codec: { encoding: 'opus' },
      telephoneEventPayloadType: 102,
      remotePort: 6008,
    });
  });
});
