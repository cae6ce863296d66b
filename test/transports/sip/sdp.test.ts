import { describe, expect, it } from 'vitest';
import {
  G722,
  OPUS,
  PCMA,
  PCMU,
  answerOffer,
  createOffer,
  mediaCodecs,
  readAnswer,
  type LocalAudio,
} from '../../../src/transports/sip/sdp-offer-answer.js';
import {
  mediaDirection,
  parseSdp,
  serializeSdp,
  type SdpSession,
} from '../../../src/transports/sip/sdp.js';

const LOCAL: LocalAudio = {
  address: '192.0.2.1',
  port: 40000,
  codecs: [PCMU, PCMA],
  telephoneEvent: true,
  ptimeMs: 20,
  sessionId: '1234',
  sessionVersion: 1,
};

function sdp(text: string): SdpSession {
  const result = parseSdp(text.replace(/^\n/, '').replace(/\n/g, '\r\n'));
  if (!result.ok) {
    throw new Error(`${result.code}: ${result.reason}`);
  }
  return result.session;
}

const CARRIER_OFFER = `
v=0
o=carrier 2890844526 2890844527 IN IP4 203.0.113.10
s=Talk
c=IN IP4 203.0.113.10
b=AS:84
t=0 0
m=audio 30000 RTP/AVP 18 8 0 96
b=TIAS:64000
a=rtpmap:18 G729/8000
a=fmtp:18 annexb=no
a=rtpmap:8 PCMA/8000
a=rtpmap:0 PCMU/8000
a=rtpmap:96 telephone-event/8000
a=fmtp:96 0-16
a=ptime:30
a=sendrecv
m=video 30002 RTP/AVP 97
a=rtpmap:97 H264/90000
`;

describe('SDP parsing and serialization (RFC 4566)', () => {
  it('parses a carrier offer and writes it back line for line', () => {
    const session = sdp(CARRIER_OFFER);
    expect(session.origin.address).toBe('203.0.113.10');
    expect(session.media.map((media) => [media.type, media.port, media.formats])).toEqual([
      ['audio', 30000, ['18', '8', '0', '96']],
      ['video', 30002, ['97']],
    ]);
    expect(
      [...mediaCodecs(session.media[0]!)].map(([pt, codec]) => `${pt}:${codec.encoding}`),
    ).toEqual(['8:PCMA', '0:PCMU', '18:G729', '96:telephone-event']);
    expect(serializeSdp(session)).toBe(CARRIER_OFFER.replace(/^\n/, '').replace(/\n/g, '\r\n'));
  });

  it('uses static payload types without rtpmap and reads directions with session fallback', () => {
    const session = sdp(`
v=0
o=- 1 1 IN IP4 198.51.100.2
s=-
c=IN IP4 198.51.100.2
t=0 0
a=sendonly
m=audio 5004 RTP/AVP 0 9
m=audio 5006 RTP/AVP 8
a=inactive
`);
    expect([...mediaCodecs(session.media[0]!).values()]).toEqual([PCMU, G722]);
    expect(session.media.map((media) => mediaDirection(session, media))).toEqual([
      'sendonly',
      'inactive',
    ]);
  });

  it('rejects malformed descriptions with stable codes', () => {
    const cases: [string, string][] = [
      ['o=x 1 1 IN IP4 a\r\ns=-\r\n', 'SDP_MISSING_FIELD'],
      [
        'v=0\r\no=x 1 1 IN IP4 a\r\ns=-\r\nm=audio 70000 RTP/AVP 0\r\nc=IN IP4 a\r\n',
        'SDP_BAD_FIELD',
      ],
      ['v=0\r\no=x 1 1 IN IP4 a\r\ns=-\r\nm=audio 5004 RTP/AVP 0\r\n', 'SDP_MISSING_FIELD'],
      [
        'v=0\r\no=x 1 1 IN IP4 a\r\ns=-\r\nc=IN IP4 a\r\nm=audio 5004 RTP/AVP 300\r\n',
        'SDP_BAD_FIELD',
      ],
      ['v=0\r\no=x 1\r\ns=-\r\n', 'SDP_BAD_FIELD'],
      ['v=0\r\nhello\r\n', 'SDP_BAD_LINE'],
      ['v=0\r\n' + 'a=x\r\n'.repeat(600), 'SDP_TOO_LARGE'],
    ];
    for (const [text, code] of cases) {
      const result = parseSdp(text);
      expect(result.ok ? 'ok' : result.code, text.slice(0, 60)).toBe(code);
    }
  });
});

describe('offer/answer (RFC 3264) with telephone-event (RFC 4733)', () => {
  it('answers with the offerer’s first shared codec, its DTMF payload type, and rejects other streams', () => {
    const result = answerOffer(sdp(CARRIER_OFFER), LOCAL);
    expect(result.ok).toBe(true);
    if (!result.ok) {
      return;
    }
    expect(result.negotiated).toEqual({
      mediaIndex: 0,
      payloadType: 8,
      codec: PCMA,
      telephoneEventPayloadType: 96,
      remoteAddress: '203.0.113.10',
      remotePort: 30000,
      remotePtimeMs: 30,
      direction: 'sendrecv',
    });
    const answer = serializeSdp(result.answer!);
    expect(answer).toContain('m=audio 40000 RTP/AVP 8 96\r\n');
    expect(answer).toContain('a=rtpmap:96 telephone-event/8000\r\na=fmtp:96 0-15\r\n');
    expect(answer).toContain('m=video 0 RTP/AVP 97\r\n');
    expect(answer).toContain('c=IN IP4 192.0.2.1\r\n');
    expect(parseSdp(answer).ok).toBe(true);
  });

  it('mirrors the offered direction and follows hold', () => {
    for (const [offered, expected] of [
      ['sendonly', 'recvonly'],
      ['recvonly', 'sendonly'],
      ['inactive', 'inactive'],
      ['sendrecv', 'sendrecv'],
    ]) {
      const offer = sdp(CARRIER_OFFER.replace('a=sendrecv', `a=${offered}`));
      const result = answerOffer(offer, LOCAL);
      expect(result.ok && result.negotiated.direction).toBe(expected);
      expect(result.ok && serializeSdp(result.answer!)).toContain(`a=${expected}\r\n`);
    }
  });

  it('fails with a stable code when nothing fits (the caller answers 488)', () => {
    const g729Only = sdp(
      CARRIER_OFFER.replace('m=audio 30000 RTP/AVP 18 8 0 96', 'm=audio 30000 RTP/AVP 18'),
    );
    expect(answerOffer(g729Only, LOCAL)).toMatchObject({ ok: false, code: 'SDP_NO_COMMON_CODEC' });
    const srtp = sdp(CARRIER_OFFER.replace('RTP/AVP 18 8 0 96', 'RTP/SAVP 0'));
    expect(answerOffer(srtp, LOCAL)).toMatchObject({ ok: false, code: 'SDP_NO_AUDIO' });
  });

  it('accepts Opus and G.722 when the local side lists them', () => {
    const offer = sdp(`
v=0
o=- 5 5 IN IP6 2001:db8::5
s=-
c=IN IP6 2001:db8::5
t=0 0
m=audio 6000 RTP/AVP 111 9 101
a=rtpmap:111 opus/48000/2
a=rtpmap:101 telephone-event/48000
`);
    const result = answerOffer(offer, { ...LOCAL, codecs: [OPUS, G722] });
    expect(
      result.ok && [result.negotiated.payloadType, result.negotiated.telephoneEventPayloadType],
    ).toEqual([111, 101]);
    expect(result.ok && serializeSdp(result.answer!)).toContain('a=rtpmap:111 opus/48000/2\r\n');
  });

  it('creates an offer and reads the answer to it', () => {
    const offer = createOffer(LOCAL);
    const text = serializeSdp(offer);
    expect(text).toContain('m=audio 40000 RTP/AVP 0 8 101\r\n');
    expect(text).toContain('a=ptime:20\r\na=sendrecv\r\n');
    const theirs: LocalAudio = { ...LOCAL, address: '198.51.100.9', port: 7000, codecs: [PCMA] };
    const parsed = parseSdp(text);
    expect(parsed.ok).toBe(true);
    const answered = answerOffer((parsed as { session: SdpSession }).session, theirs);
    expect(answered.ok).toBe(true);
    const read = readAnswer(offer, answered.ok ? answered.answer! : offer, LOCAL);
    expect(read.ok && read.negotiated).toMatchObject({
      payloadType: 8,
      telephoneEventPayloadType: 101,
      remoteAddress: '198.51.100.9',
      remotePort: 7000,
    });
  });
});
