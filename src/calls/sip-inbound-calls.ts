/**
 * Inbound SIP calls: an INVITE for a `byo-phone-number` from one of its trunk's gateways becomes
 * an `inboundPhoneCall` run by the call engine on the voice pipeline, with its RTP media on the
 * main thread (SipCallMedia) and DTMF turned into user input by the keypadInputPlan.
 */
import { randomInt } from 'node:crypto';
import type { Store } from '../store/store.js';
import type { RtpPortAllocator } from '../transports/rtp/rtp-port-allocator.js';
import { RtpSession } from '../transports/rtp/rtp-session.js';
import type { DialogEndReason } from '../transports/sip/dialog-layer.js';
import type { SipDialog } from '../transports/sip/dialog.js';
import { answerOffer, type LocalAudio } from '../transports/sip/sdp-offer-answer.js';
import { serializeSdp } from '../transports/sip/sdp.js';
import type {
  IncomingInvite,
  SipCallHandler,
  SipUserAgent,
} from '../transports/sip/sip-user-agent.js';
import type { SipFloodGuard } from '../transports/sip/flood-guard.js';
import type { CallEngine } from './call-engine.js';
import { CallStartError, type CallParamsBuilder } from './call-params-builder.js';
import { SipInboundAdmission } from './sip-inbound-admission.js';
import { SipInboundAnnouncements } from './sip-inbound-announcement.js';
import { decideInbound } from './sip-inbound-decision.js';
import { endStored, inboundCallDoc, offerOf } from './sip-inbound-records.js';
import { SipCallMedia } from './sip-call-media.js';
import { SipCodecs } from './sip-codecs.js';
import {
  codecName,
  ENDED_REASON_CUSTOMER_ENDED,
  SipLiveCalls,
  type LiveSipCall,
} from './sip-live-calls.js';
import type { SipBridges } from './sip-bridge.js';
import { callRtpEvents, keypadFor, telephonyLegFor } from './sip-call-leg.js';

/** No RTP from the caller for the inactivity timeout. */
export const ENDED_REASON_RTP_TIMEOUT = 'call.in-progress.error-sip-rtp-timeout';
/** Our 200 OK was never ACKed. */
export const ENDED_REASON_NO_ACK = 'call.in-progress.error-sip-inbound-call-failed-to-connect';
/** No media could be set up: no common codec, no free RTP port. */
export const ENDED_REASON_MEDIA = 'call.start.error-get-transport';

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
  /** The assistant-request deadline; default 7.5 s (tests shorten it). */
  readonly assistantRequestDeadlineMs?: number;
  /** For assistant-request (tests); default the global fetch. */
  readonly fetch?: typeof fetch;
  /** Ignores sources that keep being refused; false turns it off. Default: a SipFloodGuard. */
  readonly floodGuard?: SipFloodGuard | false;
  /**
   * Challenge INVITEs from outside every allowlist (401) and accept trunk digest credentials.
   * Default true; false answers them 403 at once.
   */
  readonly inboundDigestAuth?: boolean;
  /** The digest realm; default mediaAddress. */
  readonly digestRealm?: string;
  /** Transfers whose REFER is refused are dialled through the number's trunk and bridged. */
  readonly bridges?: SipBridges;
  /** Codecs answered, in our order (PARLA_SIP_CODECS); default SipCodecs.parse(). */
  readonly codecs?: SipCodecs;
  readonly log: (error: unknown, message: string) => void;
}

/** An INVITE being set up: a CANCEL may arrive during any await. */
interface Pending {
  cancelled: boolean;
  /** Aborted with `cancelled`, for the work that can stop at once (speech synthesis). */
  readonly cancel: AbortController;
}

export class SipInboundCalls implements SipCallHandler {
  private agent: SipUserAgent | undefined;
  private readonly pending = new Map<IncomingInvite, Pending>();
  private readonly live = new SipLiveCalls(ENDED_REASON_NO_ACK);
  private readonly admission: SipInboundAdmission;
  private readonly announcements: SipInboundAnnouncements;

  constructor(private readonly options: SipInboundCallsOptions) {
    this.admission = new SipInboundAdmission({
      store: options.store,
      ...(options.floodGuard !== undefined && { floodGuard: options.floodGuard }),
      digestRealm:
        options.inboundDigestAuth === false ? false : (options.digestRealm ?? options.mediaAddress),
    });
    this.announcements = new SipInboundAnnouncements({
      ...options,
      localAudio: (port) => this.localAudio(port),
    });
  }

  /** The user agent that answers for this handler (set once it is started). */
  attach(agent: SipUserAgent): void {
    this.agent = agent;
    this.admission.guard(agent.dialogs);
  }

  get floodGuard(): SipFloodGuard | undefined {
    return this.admission.floodGuard;
  }

  get liveCalls(): number {
    return this.live.size + this.announcements.size;
  }

  /** Hangs up the calls still speaking an assistant-request error (the server is closing). */
  close(): Promise<void> {
    return this.announcements.close();
  }

  onInvite(invite: IncomingInvite): void {
    const agent = this.agent!;
    if (this.options.engine.closing) {
      agent.dialogs.reject(invite, 503);
      return;
    }
    agent.dialogs.provisional(invite, 100);
    const pending: Pending = { cancelled: false, cancel: new AbortController() };
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
      pending.cancel.abort();
    }
  }

  onDialogEnded(dialog: SipDialog, reason: DialogEndReason): void {
    this.announcements.onDialogEnded(dialog);
    this.live.onDialogEnded(dialog, reason);
  }

  onInfoDtmf(dialog: SipDialog, digit: string): void {
    this.live.onInfoDtmf(dialog, digit);
  }

  onOffer(dialog: SipDialog, body: Buffer | undefined): Buffer | undefined {
    return this.live.onOffer(dialog, body);
  }

  private async setUp(invite: IncomingInvite, pending: Pending): Promise<void> {
    const agent = this.agent!;
    const { store } = this.options;
    const { request } = invite;
    const route = await this.admission.admit(invite);
    if (pending.cancelled) {
      return;
    }
    if (!route.ok) {
      agent.dialogs.reject(invite, route.status, route.headers);
      return;
    }
    const { orgId, phoneNumber, trunk } = route;
    let call = await store.resources.calls.create(orgId, inboundCallDoc(request, phoneNumber));
    if (pending.cancelled) {
      await endStored(store, orgId, call.id, ENDED_REASON_CUSTOMER_ENDED);
      return;
    }
    agent.dialogs.provisional(invite, 180);
    const failed = async (status: number, reason: string, message: string): Promise<void> => {
      agent.dialogs.reject(invite, status);
      await endStored(store, orgId, call.id, reason, message);
    };
    const decision = await decideInbound({
      store,
      orgId,
      call,
      phoneNumber,
      trunk,
      sourceAddress: invite.source.address,
      ...(this.options.assistantRequestDeadlineMs !== undefined && {
        assistantRequestDeadlineMs: this.options.assistantRequestDeadlineMs,
      }),
      ...(this.options.fetch !== undefined && { fetch: this.options.fetch }),
    });
    if (pending.cancelled) {
      await endStored(store, orgId, call.id, ENDED_REASON_CUSTOMER_ENDED);
      return;
    }
    if (decision.action === 'redirect') {
      agent.dialogs.reject(invite, 302, [['Contact', `<${decision.contact}>`]]);
      await endStored(store, orgId, call.id, decision.endedReason, decision.endedMessage, {
        destination: decision.destination,
      });
      return;
    }
    if (decision.action === 'reject') {
      agent.dialogs.reject(invite, decision.status, [['Reason', decision.reason]]);
      await endStored(store, orgId, call.id, decision.endedReason, decision.endedMessage);
      return;
    }
    if (decision.action === 'announce') {
      const cancelled = pending.cancel.signal;
      await this.announcements.announce({
        agent,
        invite,
        cancelled,
        orgId,
        callId: call.id,
        decision,
      });
      return;
    }
    if (Object.keys(decision.fields).length > 0) {
      const updated = await store.resources.calls.update(orgId, call.id, (current) => ({
        ...current,
        ...decision.fields,
      }));
      call = updated ?? call;
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
      // The pipeline runs at the negotiated codec's rate: 8 kHz G.711, 16 kHz G.722 and Opus.
      const transportRateHz = SipCodecs.transportRateHz(probe.negotiated.codec);
      params = await this.options.builder.build(orgId, internal, transportRateHz);
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
      ...callRtpEvents(
        slot,
        this.options.bridges,
        this.options.rtpInactivityTimeoutMs,
        ENDED_REASON_RTP_TIMEOUT,
      ),
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
          this.live.delete(slot.dialog);
          void agent.hangUp(slot.dialog);
        }
      },
    });
    const keypad = keypadFor(session, params.assistant);
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
    this.live.set(dialog, live);
    live.leg = telephonyLegFor(
      agent,
      dialog,
      live,
      { bridges: this.options.bridges, store, orgId, numberOf: { phoneNumberId: phoneNumber.id } },
      () => {
        keypad.close();
        this.live.delete(dialog);
        delete slot.dialog;
      },
    );
    session.attachTelephony(live.leg);
    media.start();
  }

  private localAudio(port: number): LocalAudio {
    return {
      address: this.options.mediaAddress,
      port,
      codecs: (this.options.codecs ?? SipCodecs.parse()).codecs,
      telephoneEvent: true,
      ptimeMs: 20,
      sessionId: String(randomInt(1, 2 ** 47)),
      sessionVersion: 1,
    };
  }
}
