/**
 * Inbound SIP calls: an INVITE for a `byo-phone-number` from one of its trunk's gateways becomes
 * an `inboundPhoneCall` run by the call engine on the voice pipeline, with its RTP media on the
 * main thread (SipCallMedia) and DTMF turned into user input by the keypadInputPlan.
 */
import { randomInt } from 'node:crypto';
import type { Doc, Resource } from '../store/resource-store.js';
import type { Store } from '../store/store.js';
import type { RtpPortAllocator } from '../transports/rtp/rtp-port-allocator.js';
import { RtpSession, type RtpCodecName } from '../transports/rtp/rtp-session.js';
import type { DialogEndReason } from '../transports/sip/dialog-layer.js';
import type { SipDialog } from '../transports/sip/dialog.js';
import { getFrom, getTo, type SipRequest } from '../transports/sip/message.js';
import {
  PCMA,
  PCMU,
  answerOffer,
  type LocalAudio,
  type NegotiatedAudio,
} from '../transports/sip/sdp-offer-answer.js';
import { parseSdp, serializeSdp, type SdpSession } from '../transports/sip/sdp.js';
import type {
  IncomingInvite,
  SipCallHandler,
  SipUserAgent,
} from '../transports/sip/sip-user-agent.js';
import { decodeUriPart, isSipUri, parseUri, type AnyUri } from '../transports/sip/uri.js';
import type { CallEngine } from './call-engine.js';
import { CallStartError, type CallParamsBuilder } from './call-params-builder.js';
import type { CallSession } from './call-session.js';
import { routeInbound } from './sip-inbound-route.js';
import { SipCallMedia } from './sip-call-media.js';
import { KeypadInput, keypadInputPlanOf } from './sip-keypad-input.js';

export const ENDED_REASON_CUSTOMER_ENDED = 'customer-ended-call';
/** The number routes to no assistant, squad or workflow (assistant-request is not done yet). */
export const ENDED_REASON_ASSISTANT_REQUEST_FAILED = 'assistant-request-failed';
/** No RTP from the caller for the inactivity timeout. */
export const ENDED_REASON_RTP_TIMEOUT = 'call.in-progress.error-sip-rtp-timeout';
/** Our 200 OK was never ACKed. */
export const ENDED_REASON_NO_ACK = 'call.in-progress.error-sip-inbound-call-failed-to-connect';
export const ENDED_REASON_SESSION_EXPIRED = 'call.in-progress.error-sip-session-expired';
/** No media could be set up: no common codec, no free RTP port. */
export const ENDED_REASON_MEDIA = 'call.start.error-get-transport';

const TRANSPORT_SAMPLE_RATE_HZ = 8000;
const MAX_USER_LENGTH = 64;

export interface SipInboundCallsOptions {
  readonly store: Store;
  readonly engine: CallEngine;
  readonly builder: CallParamsBuilder;
  readonly allocator: RtpPortAllocator;
  /** The address RTP binds to. */
  readonly rtpBindAddress: string;
  /** The address our SDP gives the caller for media (reachable by the trunk). */
  readonly mediaAddress: string;
  readonly rtpInactivityTimeoutMs?: number;
  readonly log: (error: unknown, message: string) => void;
}

/** An INVITE being set up: a CANCEL may arrive during any await. */
interface Pending {
  cancelled: boolean;
}

interface LiveSipCall {
  readonly session: CallSession;
  readonly media: SipCallMedia;
  readonly keypad: KeypadInput;
  readonly rtp: RtpSession;
  /** Our side of the SDP: the same session id and port for the whole dialog. */
  local: LocalAudio;
  /** The SDP we last sent (offered again to a re-INVITE without an offer). */
  lastSdp: Buffer;
}

function userOf(uri: AnyUri | null | undefined): string | undefined {
  if (uri === null || uri === undefined) {
    return undefined;
  }
  const user = isSipUri(uri) ? uri.user : uri.scheme === 'tel' ? uri.opaque : undefined;
  return user === undefined ? undefined : decodeUriPart(user).slice(0, MAX_USER_LENGTH);
}

function codecName(negotiated: NegotiatedAudio): RtpCodecName {
  return negotiated.codec.encoding.toUpperCase() === 'PCMA' ? 'PCMA' : 'PCMU';
}

export class SipInboundCalls implements SipCallHandler {
  private agent: SipUserAgent | undefined;
  private readonly pending = new Map<IncomingInvite, Pending>();
  private readonly live = new Map<string, LiveSipCall>();

  constructor(private readonly options: SipInboundCallsOptions) {}

  /** The user agent that answers for this handler (set once it is started). */
  attach(agent: SipUserAgent): void {
    this.agent = agent;
  }

  get liveCalls(): number {
    return this.live.size;
  }

  onInvite(invite: IncomingInvite): void {
    const agent = this.agent!;
    if (this.options.engine.closing) {
      agent.dialogs.reject(invite, 503);
      return;
    }
    agent.dialogs.provisional(invite, 100);
    const pending: Pending = { cancelled: false };
    this.pending.set(invite, pending);
    void this.setUp(invite, pending)
      .catch((error: unknown) => {
        this.options.log(error, 'inbound SIP call failed');
        if (!pending.cancelled) {
          agent.dialogs.reject(invite, 500);
        }
      })
      .finally(() => this.pending.delete(invite));
  }

  onCancel(invite: IncomingInvite): void {
    const pending = this.pending.get(invite);
    if (pending !== undefined) {
      pending.cancelled = true;
    }
  }

  onDialogEnded(dialog: SipDialog, reason: DialogEndReason): void {
    const live = this.live.get(dialog.id);
    if (live === undefined) {
      return;
    }
    this.live.delete(dialog.id);
    live.keypad.close();
    live.media.stop();
    const endedReason = {
      'remote-bye': ENDED_REASON_CUSTOMER_ENDED,
      'ack-timeout': ENDED_REASON_NO_ACK,
      'session-expired': ENDED_REASON_SESSION_EXPIRED,
      'local-bye': undefined,
    }[reason];
    if (endedReason !== undefined) {
      live.session.end(endedReason);
    }
  }

  onInfoDtmf(dialog: SipDialog, digit: string): void {
    this.live.get(dialog.id)?.keypad.digit(digit);
  }

  /**
   * A re-INVITE or UPDATE: hold (sendonly/inactive from the caller stops the inactivity
   * timeout), a new address or a codec change. Without an offer, our last SDP is offered again.
   */
  onOffer(dialog: SipDialog, body: Buffer | undefined): Buffer | undefined {
    const live = this.live.get(dialog.id);
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
    const result = answerOffer(parsed.session, local);
    if (!result.ok || result.answer === undefined) {
      return undefined;
    }
    const { negotiated } = result;
    live.local = local;
    live.rtp.setRemote({ address: negotiated.remoteAddress, port: negotiated.remotePort });
    live.rtp.setCodec(codecName(negotiated), negotiated.payloadType);
    live.media.sending = negotiated.direction === 'sendrecv' || negotiated.direction === 'sendonly';
    // On hold (the caller sendonly or inactive) silence from the caller is expected.
    live.rtp.setReceiving(negotiated.direction === 'sendrecv');
    live.lastSdp = Buffer.from(serializeSdp(result.answer));
    return live.lastSdp;
  }

  private async setUp(invite: IncomingInvite, pending: Pending): Promise<void> {
    const agent = this.agent!;
    const { store } = this.options;
    const { request } = invite;
    const dialled = [userOf(parseUri(request.uri)), userOf(getTo(request)?.uri)];
    const route = await routeInbound(
      store,
      dialled.filter((user): user is string => user !== undefined),
      invite.source.address,
    );
    if (pending.cancelled) {
      return;
    }
    if (!route.ok) {
      // The same answer whether the number is unknown or the source is not its trunk's.
      agent.dialogs.reject(invite, 403);
      return;
    }
    const { orgId, phoneNumber } = route;
    const call = await store.resources.calls.create(orgId, inboundCallDoc(request, phoneNumber));
    if (pending.cancelled) {
      await endStored(store, orgId, call.id, ENDED_REASON_CUSTOMER_ENDED);
      return;
    }
    agent.dialogs.provisional(invite, 180);
    const failed = async (status: number, reason: string, message: string): Promise<void> => {
      agent.dialogs.reject(invite, status);
      await endStored(store, orgId, call.id, reason, message);
    };
    if (!['assistantId', 'squadId', 'workflowId'].some((field) => field in call)) {
      await failed(
        480,
        ENDED_REASON_ASSISTANT_REQUEST_FAILED,
        'The number has no assistant or squad, and assistant-request is not supported yet',
      );
      return;
    }
    const offer = offerOf(request);
    const probe = offer === undefined ? undefined : answerOffer(offer, this.localAudio(0));
    if (offer === undefined || probe === undefined || !probe.ok) {
      await failed(488, ENDED_REASON_MEDIA, 'The INVITE carries no usable audio offer');
      return;
    }
    let params;
    try {
      const internal = (await store.resources.calls.getInternal(orgId, call.id)) ?? call;
      params = await this.options.builder.build(orgId, internal, TRANSPORT_SAMPLE_RATE_HZ);
    } catch (error) {
      if (error instanceof CallStartError) {
        await failed(480, error.endedReason, error.message);
        return;
      }
      throw error;
    }
    const negotiated = probe.negotiated;
    // Filled once the call is bridged; the RTP callbacks and the hang-up read it.
    const slot: { live?: LiveSipCall; dialog?: SipDialog } = {};
    const rtp = await RtpSession.open({
      allocator: this.options.allocator,
      bindAddress: this.options.rtpBindAddress,
      remote: { address: negotiated.remoteAddress, port: negotiated.remotePort },
      codec: codecName(negotiated),
      payloadType: negotiated.payloadType,
      ...(negotiated.telephoneEventPayloadType !== undefined && {
        telephoneEventPayloadType: negotiated.telephoneEventPayloadType,
      }),
      ...(this.options.rtpInactivityTimeoutMs !== undefined && {
        inactivityTimeoutMs: this.options.rtpInactivityTimeoutMs,
      }),
      onDtmf: (event) => slot.live?.keypad.digit(event.digit),
      onInactive: () => slot.live?.session.end(ENDED_REASON_RTP_TIMEOUT),
    }).catch((error: unknown) => {
      this.options.log(error, 'no RTP session for an inbound call');
      return undefined;
    });
    if (rtp === undefined) {
      await failed(503, ENDED_REASON_MEDIA, 'No free RTP port');
      return;
    }
    if (pending.cancelled || this.options.engine.closing) {
      await rtp.close();
      await endStored(store, orgId, call.id, ENDED_REASON_CUSTOMER_ENDED);
      return;
    }
    const local = this.localAudio(rtp.localPort);
    const answer = answerOffer(offer, local);
    const answerSdp = Buffer.from(answer.ok && answer.answer ? serializeSdp(answer.answer) : '');
    const engine = this.options.engine;
    engine.open(orgId, call, params, 'pcm_s16le');
    const session = engine.session(call.id)!;
    const media = new SipCallMedia({
      rtp,
      onCallerAudio: (samples) => session.onAudio(samples),
      onClose: () => {
        slot.live?.keypad.close();
        if (slot.dialog !== undefined) {
          this.live.delete(slot.dialog.id);
          void agent.hangUp(slot.dialog);
        }
      },
    });
    const keypad = new KeypadInput(keypadInputPlanOf(params.assistant), (digits) => {
      session.control({
        type: 'add-message',
        message: { role: 'user', content: digits },
        triggerResponseEnabled: true,
      });
    });
    const live: LiveSipCall = { session, media, keypad, rtp, local, lastSdp: answerSdp };
    slot.live = live;
    session.onOpen(media);
    if (session.state === 'ended' || !answer.ok || answer.answer === undefined) {
      media.stop();
      agent.dialogs.reject(invite, 503);
      session.end(ENDED_REASON_MEDIA);
      return;
    }
    const dialog = agent.dialogs.accept(invite, {
      body: answerSdp,
      contentType: 'application/sdp',
    });
    if (dialog === undefined) {
      // The layer answered 400 or 422 (session timer terms we cannot meet).
      media.stop();
      session.end(ENDED_REASON_MEDIA);
      return;
    }
    slot.dialog = dialog;
    this.live.set(dialog.id, live);
    media.start();
  }

  private localAudio(port: number): LocalAudio {
    return {
      address: this.options.mediaAddress,
      port,
      codecs: [PCMU, PCMA],
      telephoneEvent: true,
      ptimeMs: 20,
      sessionId: String(randomInt(1, 2 ** 47)),
      sessionVersion: 1,
    };
  }
}

function offerOf(request: SipRequest): SdpSession | undefined {
  if (request.body.length === 0) {
    return undefined;
  }
  const parsed = parseSdp(request.body.toString('utf8'));
  return parsed.ok ? parsed.session : undefined;
}

function inboundCallDoc(request: SipRequest, phoneNumber: Resource): Doc {
  const fromUser = userOf(getFrom(request)?.uri);
  const doc: Doc = {
    type: 'inboundPhoneCall',
    status: 'queued',
    phoneCallTransport: 'sip',
    phoneNumberId: phoneNumber.id,
    customer: fromUser === undefined ? {} : { number: fromUser },
  };
  for (const field of ['assistantId', 'squadId', 'workflowId'] as const) {
    if (typeof phoneNumber[field] === 'string') {
      doc[field] = phoneNumber[field];
    }
  }
  return doc;
}

async function endStored(
  store: Store,
  orgId: string,
  callId: string,
  endedReason: string,
  endedMessage?: string,
): Promise<void> {
  const now = new Date().toISOString();
  await store.resources.calls.update(orgId, callId, (current) => ({
    ...current,
    status: 'ended',
    endedReason,
    ...(endedMessage !== undefined && { endedMessage }),
    startedAt: now,
    endedAt: now,
  }));
}
