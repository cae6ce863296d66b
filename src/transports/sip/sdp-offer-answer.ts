import {
  attributeValue,
  mediaDirection,
  type SdpAttribute,
  type SdpDirection,
  type SdpMedia,
  type SdpSession,
} from './sdp.js';

/** An audio codec as SDP names it (rtpmap encoding name and RTP clock rate). */
export interface SdpCodec {
  readonly encoding: string;
  readonly clockRateHz: number;
  readonly channels?: number;
  /** RFC 3551 static payload type, when the codec has one. */
  readonly staticPayloadType?: number;
  /** Payload type to offer when there is no static one. */
  readonly dynamicPayloadType?: number;
  /** Our a=fmtp parameters for the codec, written in offers and answers. */
  readonly fmtp?: string;
}

export const PCMU: SdpCodec = { encoding: 'PCMU', clockRateHz: 8000, staticPayloadType: 0 };
export const PCMA: SdpCodec = { encoding: 'PCMA', clockRateHz: 8000, staticPayloadType: 8 };
/** G.722 samples at 16 kHz but keeps an 8000 Hz RTP clock for historical reasons (RFC 3551). */
export const G722: SdpCodec = { encoding: 'G722', clockRateHz: 8000, staticPayloadType: 9 };
/**
 * RFC 7587: always opus/48000/2 in SDP. We decode and encode mono at 16 kHz, so we ask for no
 * more (maxplaybackrate, sprop-maxcapturerate, stereo=0) and send no more (sprop-stereo=0).
 * useinbandfec=0 (the RFC's default, said out loud): the libopus binding we decode with cannot
 * decode FEC, so the bits a peer would spend on it are wasted; lost frames get libopus' PLC.
 */
export const OPUS: SdpCodec = {
  encoding: 'opus',
  clockRateHz: 48000,
  channels: 2,
  dynamicPayloadType: 111,
  fmtp: 'maxplaybackrate=16000;sprop-maxcapturerate=16000;stereo=0;sprop-stereo=0;useinbandfec=0',
};

const STATIC: Record<number, SdpCodec> = { 0: PCMU, 8: PCMA, 9: G722 };
const DEFAULT_TELEPHONE_EVENT_PT = 101;
/** RFC 4733 DTMF events 0–9, *, #, A–D. */
const DTMF_EVENTS = '0-15';

export interface LocalAudio {
  /** The address and port our RTP socket receives on. */
  readonly address: string;
  readonly port: number;
  /** Codecs we can run, most preferred first. */
  readonly codecs: readonly SdpCodec[];
  /** Offer or accept RFC 4733 telephone-event. */
  readonly telephoneEvent: boolean;
  readonly ptimeMs: number;
  readonly direction?: SdpDirection;
  readonly sessionId: string;
  readonly sessionVersion: number;
}

export interface NegotiatedAudio {
  /** Index of the accepted m= line in the offer. */
  readonly mediaIndex: number;
  readonly payloadType: number;
  readonly codec: SdpCodec;
  readonly telephoneEventPayloadType?: number;
  readonly remoteAddress: string;
  readonly remotePort: number;
  /** The packetization the peer asked to receive (a=ptime), when it said. */
  readonly remotePtimeMs?: number;
  /** Our direction for the stream. */
  readonly direction: SdpDirection;
}

export type NegotiationResult =
  | { readonly ok: true; readonly negotiated: NegotiatedAudio; readonly answer?: SdpSession }
  | {
      readonly ok: false;
      readonly code: 'SDP_NO_AUDIO' | 'SDP_NO_COMMON_CODEC';
      readonly reason: string;
    };

/** Payload type → codec of an m= line, from its rtpmap lines and the static table. */
export function mediaCodecs(media: SdpMedia): Map<number, SdpCodec> {
  const codecs = new Map<number, SdpCodec>();
  for (const format of media.formats) {
    const payloadType = Number(format);
    const known = STATIC[payloadType];
    if (known !== undefined) {
      codecs.set(payloadType, known);
    }
  }
  for (const attribute of media.attributes) {
    const match =
      attribute.name === 'rtpmap'
        ? /^([0-9]{1,3}) +([^/ ]+)\/([0-9]+)(?:\/([0-9]+))?$/.exec(attribute.value ?? '')
        : null;
    if (match !== null && media.formats.includes(match[1]!)) {
      codecs.set(Number(match[1]), {
        encoding: match[2]!,
        clockRateHz: Number(match[3]),
        ...(match[4] !== undefined && { channels: Number(match[4]) }),
      });
    }
  }
  return codecs;
}

function sameCodec(a: SdpCodec, b: SdpCodec): boolean {
  return a.encoding.toLowerCase() === b.encoding.toLowerCase() && a.clockRateHz === b.clockRateHz;
}

function isAudioRtp(media: SdpMedia): boolean {
  return (
    media.type === 'audio' &&
    media.port !== 0 &&
    (media.protocol === 'RTP/AVP' || media.protocol === 'RTP/AVPF')
  );
}

/** Our direction given the peer's (RFC 3264 §6.1) and what we want. */
function answerDirection(remote: SdpDirection, local: SdpDirection): SdpDirection {
  const weSend =
    (local === 'sendrecv' || local === 'sendonly') &&
    (remote === 'sendrecv' || remote === 'recvonly');
  const weReceive =
    (local === 'sendrecv' || local === 'recvonly') &&
    (remote === 'sendrecv' || remote === 'sendonly');
  return weSend ? (weReceive ? 'sendrecv' : 'sendonly') : weReceive ? 'recvonly' : 'inactive';
}

/**
 * Answers an offer (RFC 3264 §6): accepts the first audio RTP stream that shares a codec with
 * us, taking the offerer's order of preference, plus telephone-event at the same clock rate;
 * every other m= line is rejected with port 0. Fails (answer 488) when no stream fits.
 */
export function answerOffer(offer: SdpSession, local: LocalAudio): NegotiationResult {
  let chosen: { index: number; negotiated: NegotiatedAudio } | undefined;
  let sawAudio = false;
  offer.media.forEach((media, index) => {
    if (chosen !== undefined || !isAudioRtp(media)) {
      return;
    }
    sawAudio = true;
    const negotiated = pickCodec(offer, media, index, local);
    if (negotiated !== undefined) {
      chosen = { index, negotiated };
    }
  });
  if (chosen === undefined) {
    return sawAudio
      ? { ok: false, code: 'SDP_NO_COMMON_CODEC', reason: 'no offered codec is supported' }
      : { ok: false, code: 'SDP_NO_AUDIO', reason: 'no audio RTP stream offered' };
  }
  const { index, negotiated } = chosen;
  const media = offer.media.map((offered, position): SdpMedia => {
    if (position !== index) {
      return {
        type: offered.type,
        port: 0,
        protocol: offered.protocol,
        formats: offered.formats.slice(0, 1),
        attributes: [],
        otherLines: [],
      };
    }
    const codecs: [number, SdpCodec][] = [[negotiated.payloadType, negotiated.codec]];
    if (negotiated.telephoneEventPayloadType !== undefined) {
      codecs.push([
        negotiated.telephoneEventPayloadType,
        telephoneEvent(negotiated.codec.clockRateHz),
      ]);
    }
    return audioMedia(local, offered.protocol, codecs, negotiated.direction);
  });
  return { ok: true, negotiated, answer: session(local, media) };
}

function pickCodec(
  offer: SdpSession,
  media: SdpMedia,
  index: number,
  local: LocalAudio,
): NegotiatedAudio | undefined {
  const offered = mediaCodecs(media);
  for (const format of media.formats) {
    const payloadType = Number(format);
    const codec = offered.get(payloadType);
    const ours =
      codec === undefined
        ? undefined
        : local.codecs.find((candidate) => sameCodec(candidate, codec));
    if (codec === undefined || ours === undefined) {
      continue;
    }
    const event = local.telephoneEvent
      ? [...offered].find(([, candidate]) =>
          sameCodec(candidate, telephoneEvent(codec.clockRateHz)),
        )
      : undefined;
    const ptime = Number(attributeValue(media, 'ptime'));
    return {
      mediaIndex: index,
      payloadType,
      codec: { ...ours, ...(codec.channels !== undefined && { channels: codec.channels }) },
      ...(event !== undefined && { telephoneEventPayloadType: event[0] }),
      remoteAddress: (media.connection ?? offer.connection)!.address,
      remotePort: media.port,
      ...(ptime > 0 && ptime <= 200 && { remotePtimeMs: ptime }),
      direction: answerDirection(mediaDirection(offer, media), local.direction ?? 'sendrecv'),
    };
  }
  return undefined;
}

/** An offer of one audio stream with our codecs and telephone-event (RFC 3264 §5). */
export function createOffer(local: LocalAudio): SdpSession {
  const codecs: [number, SdpCodec][] = local.codecs.map((codec) => [
    codec.staticPayloadType ?? codec.dynamicPayloadType ?? 96,
    codec,
  ]);
  const rates = new Set(local.codecs.map((codec) => codec.clockRateHz));
  if (local.telephoneEvent) {
    let payloadType = DEFAULT_TELEPHONE_EVENT_PT;
    for (const rate of rates) {
      codecs.push([payloadType++, telephoneEvent(rate)]);
    }
  }
  return session(local, [audioMedia(local, 'RTP/AVP', codecs, local.direction ?? 'sendrecv')]);
}

/** Reads the answer to our offer (RFC 3264 §7): what the peer accepted and where to send. */
export function readAnswer(
  offer: SdpSession,
  answer: SdpSession,
  local: LocalAudio,
): NegotiationResult {
  const index = answer.media.findIndex(
    (media, position) => isAudioRtp(media) && offer.media[position] !== undefined,
  );
  if (index < 0) {
    return { ok: false, code: 'SDP_NO_AUDIO', reason: 'the answer accepted no audio stream' };
  }
  const picked = pickCodec(answer, answer.media[index]!, index, local);
  return picked === undefined
    ? { ok: false, code: 'SDP_NO_COMMON_CODEC', reason: 'the answer chose no codec we offered' }
    : { ok: true, negotiated: picked };
}

function telephoneEvent(clockRateHz: number): SdpCodec {
  return { encoding: 'telephone-event', clockRateHz };
}

function audioMedia(
  local: LocalAudio,
  protocol: string,
  codecs: [number, SdpCodec][],
  direction: SdpDirection,
): SdpMedia {
  const attributes: SdpAttribute[] = [];
  for (const [payloadType, codec] of codecs) {
    const channels = codec.channels === undefined ? '' : `/${codec.channels}`;
    attributes.push({
      name: 'rtpmap',
      value: `${payloadType} ${codec.encoding}/${codec.clockRateHz}${channels}`,
    });
    if (codec.encoding === 'telephone-event') {
      attributes.push({ name: 'fmtp', value: `${payloadType} ${DTMF_EVENTS}` });
    } else if (codec.fmtp !== undefined) {
      attributes.push({ name: 'fmtp', value: `${payloadType} ${codec.fmtp}` });
    }
  }
  attributes.push(
    { name: 'ptime', value: String(local.ptimeMs) },
    { name: direction, value: null },
  );
  return {
    type: 'audio',
    port: local.port,
    protocol,
    formats: codecs.map(([payloadType]) => String(payloadType)),
    attributes,
    otherLines: [],
  };
}

function session(local: LocalAudio, media: SdpMedia[]): SdpSession {
  const addrType = local.address.includes(':') ? 'IP6' : 'IP4';
  return {
    origin: {
      username: '-',
      sessionId: local.sessionId,
      sessionVersion: String(local.sessionVersion),
      netType: 'IN',
      addrType,
      address: local.address,
    },
    sessionName: 'parla',
    connection: { netType: 'IN', addrType, address: local.address },
    timing: ['0 0'],
    attributes: [],
    otherLines: [],
    media,
  };
}
