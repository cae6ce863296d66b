import type { RtpCodecName, RtpSession } from '../transports/rtp/rtp-session.js';
import type { DialogEndReason } from '../transports/sip/dialog-layer.js';
import type { SipDialog } from '../transports/sip/dialog.js';
import {
  answerOffer,
  type LocalAudio,
  type NegotiatedAudio,
} from '../transports/sip/sdp-offer-answer.js';
import { parseSdp, serializeSdp } from '../transports/sip/sdp.js';
import type { CallSession } from './call-session.js';
import type { SipCallMedia } from './sip-call-media.js';
import { SipCodecs } from './sip-codecs.js';
import type { KeypadInput } from './sip-keypad-input.js';
import type { SipTelephonyLeg } from './sip-telephony-leg.js';
import { ENDED_REASON_FORWARDED } from './telephony-leg.js';

export const ENDED_REASON_CUSTOMER_ENDED = 'customer-ended-call';
export const ENDED_REASON_SESSION_EXPIRED = 'call.in-progress.error-sip-session-expired';

/** An answered SIP call: its session, media, keypad, RTP, SDP state and telephone leg. */
export interface LiveSipCall {
  readonly session: CallSession;
  readonly media: SipCallMedia;
  readonly keypad: KeypadInput;
  readonly rtp: RtpSession;
  /** Our side of the SDP: the same session id and port for the whole dialog. */
  local: LocalAudio;
  /** The SDP we last sent (offered again to a re-INVITE without an offer). */
  lastSdp: Buffer;
  /** Transfers (REFER) and DTMF out. */
  leg?: SipTelephonyLeg;
}

/** The RTP codec of a negotiation (PCMU, PCMA, G722 or opus). */
export function codecName(negotiated: NegotiatedAudio): RtpCodecName {
  return SipCodecs.rtpCodec(negotiated.codec);
}

/**
 * The answered calls of one direction (inbound or outbound) by dialog id, and what the SIP side
 * does to them alike: a dialog's end, INFO digits, and re-INVITE/UPDATE offers.
 */
export class SipLiveCalls {
  readonly #calls = new Map<string, LiveSipCall>();

  /** `ackTimeoutReason`: why a call ends when our 2xx (or theirs) is never ACKed. */
  constructor(private readonly ackTimeoutReason: string) {}

  get size(): number {
    return this.#calls.size;
  }

  has(dialog: SipDialog): boolean {
    return this.#calls.has(dialog.id);
  }

  set(dialog: SipDialog, live: LiveSipCall): void {
    this.#calls.set(dialog.id, live);
  }

  delete(dialog: SipDialog): void {
    this.#calls.delete(dialog.id);
  }

  onDialogEnded(dialog: SipDialog, reason: DialogEndReason): void {
    const live = this.#calls.get(dialog.id);
    if (live === undefined) {
      return;
    }
    this.#calls.delete(dialog.id);
    live.keypad.close();
    live.media.stop();
    live.leg?.onDialogEnded();
    // A far end that took our REFER and hung up has been forwarded, not lost.
    const endedReason =
      live.leg?.transferAccepted === true
        ? ENDED_REASON_FORWARDED
        : {
            'remote-bye': ENDED_REASON_CUSTOMER_ENDED,
            'ack-timeout': this.ackTimeoutReason,
            'session-expired': ENDED_REASON_SESSION_EXPIRED,
            'local-bye': undefined,
          }[reason];
    if (endedReason !== undefined) {
      live.session.end(endedReason);
    }
  }

  onInfoDtmf(dialog: SipDialog, digit: string): void {
    this.#calls.get(dialog.id)?.keypad.digit(digit);
  }

  /**
   * A re-INVITE or UPDATE: hold (sendonly/inactive from the far end stops the inactivity
   * timeout), a new address or a codec change. Without an offer, our last SDP is offered again.
   * The pipeline's rate is fixed for the call, so a new codec must run at the session's rate
   * (G.722 ↔ Opus, PCMU ↔ PCMA): the other codecs are left out of the answer. Returns our
   * answer, or undefined to refuse (488).
   */
  onOffer(dialog: SipDialog, body: Buffer | undefined): Buffer | undefined {
    const live = this.#calls.get(dialog.id);
    if (live === undefined) {
      return undefined;
    }
    if (body === undefined) {
      return live.lastSdp;
    }
    const parsed = parseSdp(body.toString('utf8'));
    if (!parsed.ok) {
      return undefined;
    }
    const local = { ...live.local, sessionVersion: live.local.sessionVersion + 1 };
    const result = answerOffer(parsed.session, {
      ...local,
      codecs: SipCodecs.keepRate(local.codecs, live.rtp.sampleRateHz),
    });
    if (!result.ok || result.answer === undefined) {
      return undefined;
    }
    const { negotiated } = result;
    live.local = local;
    live.rtp.setRemote({ address: negotiated.remoteAddress, port: negotiated.remotePort });
    live.rtp.setCodec(
      codecName(negotiated),
      negotiated.payloadType,
      negotiated.telephoneEventPayloadType,
    );
    live.media.sending = negotiated.direction === 'sendrecv' || negotiated.direction === 'sendonly';
    // On hold (the far end sendonly or inactive) what it sends (music, or nothing) is not for
    // the assistant: it is dropped and the RTP timeout waits.
    live.rtp.setReceiving(negotiated.direction === 'sendrecv');
    live.lastSdp = Buffer.from(serializeSdp(result.answer));
    return live.lastSdp;
  }
}
