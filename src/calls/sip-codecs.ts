/**
 * Which codecs SIP calls run, from the `sipCodecs` setting (PARLA_SIP_CODECS), and what a
 * negotiated codec means for the media: the RTP codec and the PCM rate the call's pipeline runs
 * at (8 kHz for G.711, 16 kHz for G.722 and Opus).
 */
import type { RtpCodecName } from '../transports/rtp/rtp-codecs.js';
import { G722, OPUS, PCMA, PCMU, type SdpCodec } from '../transports/sip/sdp-offer-answer.js';

const BY_NAME: Readonly<Record<string, { codec: SdpCodec; rtp: RtpCodecName; rateHz: number }>> = {
  pcmu: { codec: PCMU, rtp: 'PCMU', rateHz: 8000 },
  pcma: { codec: PCMA, rtp: 'PCMA', rateHz: 8000 },
  g722: { codec: G722, rtp: 'G722', rateHz: 16_000 },
  opus: { codec: OPUS, rtp: 'opus', rateHz: 16_000 },
};

/** The default: G.711 first (no transcoding for PSTN trunks), wideband accepted when offered. */
export const DEFAULT_SIP_CODECS = 'PCMU,PCMA,G722,opus';

function entryOf(codec: SdpCodec) {
  const entry = BY_NAME[codec.encoding.toLowerCase()];
  if (entry === undefined || entry.codec.clockRateHz !== codec.clockRateHz) {
    throw new RangeError(`${codec.encoding}/${codec.clockRateHz} is not a codec SIP calls run`);
  }
  return entry;
}

/**
 * The local codec list, most preferred first, and the codec facts the call layer needs. As
 * answerer we take the offerer's order among these (RFC 3264 §6.1, answerOffer); as offerer
 * this order is our preference.
 */
export class SipCodecs {
  private constructor(readonly codecs: readonly SdpCodec[]) {}

  /**
   * From the setting's comma list (any case, spaces allowed). Throws a RangeError naming an
   * unknown or repeated codec, or an empty list; config/load.ts checks the setting the same way.
   */
  static parse(setting: string = DEFAULT_SIP_CODECS): SipCodecs {
    const names = setting.split(',').map((name) => name.trim().toLowerCase());
    const codecs: SdpCodec[] = [];
    for (const name of names) {
      const entry = Object.hasOwn(BY_NAME, name) ? BY_NAME[name] : undefined;
      if (entry === undefined) {
        throw new RangeError(`unknown SIP codec "${name}": use PCMU, PCMA, G722 or opus`);
      }
      if (codecs.includes(entry.codec)) {
        throw new RangeError(`SIP codec ${entry.codec.encoding} is listed twice`);
      }
      codecs.push(entry.codec);
    }
    return new SipCodecs(codecs);
  }

  /** The RTP codec that runs a negotiated SDP codec. */
  static rtpCodec(codec: SdpCodec): RtpCodecName {
    return entryOf(codec).rtp;
  }

  /** The PCM rate (Hz) of the frames an RtpSession exchanges with this codec. */
  static transportRateHz(codec: SdpCodec): number {
    return entryOf(codec).rateHz;
  }

  /** The rate of the most preferred codec (outbound calls offer only codecs of this rate). */
  get preferredRateHz(): number {
    return SipCodecs.transportRateHz(this.codecs[0]!);
  }

  /**
   * The codecs of one transport rate, in order: a call's pipeline keeps its rate for its life,
   * so re-INVITEs, and offers made before the pipeline's rate is known, keep to it.
   */
  atRate(rateHz: number): readonly SdpCodec[] {
    return SipCodecs.keepRate(this.codecs, rateHz);
  }

  /** The codecs of a list that run at `rateHz`, in order. */
  static keepRate(codecs: readonly SdpCodec[], rateHz: number): SdpCodec[] {
    return codecs.filter((codec) => SipCodecs.transportRateHz(codec) === rateHz);
  }
}
