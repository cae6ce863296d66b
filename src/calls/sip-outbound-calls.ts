/**
 * Outbound SIP calls: `POST /call` with a `byo-phone-number` dials the customer through the
 * number's `byo-sip-trunk`. The call session opens at once (so the monitor URLs work while it
 * rings); the INVITE carries our PCMU/PCMA/telephone-event offer, a 401/407 is answered with
 * digest credentials, 180/183 mark the call ringing (an SDP in them is kept as the early answer
 * the 2xx may leave out or change), and the 2xx starts the RTP media and the pipeline. A busy or
 * unanswered customer ends the call with its own endedReason.
 */
import { randomInt } from 'node:crypto';
import type { Doc, Resource } from '../store/resource-store.js';
import type { Store } from '../store/store.js';
import type { RtpPortAllocator } from '../transports/rtp/rtp-port-allocator.js';
import { parseDtmfDigits } from '../transports/rtp/dtmf-sender.js';
import { RtpSession } from '../transports/rtp/rtp-session.js';
import type { DialogEndReason } from '../transports/sip/dialog-layer.js';
import type { SipDialog } from '../transports/sip/dialog.js';
import {
  createOffer,
  readAnswer,
  type LocalAudio,
  type NegotiatedAudio,
  type SdpCodec,
  type NegotiationResult,
} from '../transports/sip/sdp-offer-answer.js';
import { parseSdp, serializeSdp } from '../transports/sip/sdp.js';
import type { SipUserAgent } from '../transports/sip/sip-user-agent.js';
import type { CallEngine } from './call-engine.js';
import { CallStartError, type CallParamsBuilder } from './call-params-builder.js';
import type { CallSession } from './call-session.js';
import { SipCallMedia } from './sip-call-media.js';
import { SipCodecs } from './sip-codecs.js';
import { codecName, SipLiveCalls, type LiveSipCall } from './sip-live-calls.js';
import type { SipBridges } from './sip-bridge.js';
import type { NumberOf } from './sip-bridge-route.js';
import { callRtpEvents, keypadFor, telephonyLegFor } from './sip-call-leg.js';
import { dialGateway, type GatewayOutcome } from './sip-outbound-dial.js';
import {
  ENDED_REASON_FAILED,
  ENDED_REASON_RTP_TIMEOUT,
  ENDED_REASON_TRANSPORT,
  failureMessage,
  failureReason,
  planOutboundCall,
  shouldTryNextGateway,
  type OutboundAttempt,
} from './sip-outbound-plan.js';
import type { OutboundTrunk } from './sip-outbound-trunk.js';
import { RESPONSE_ONLY_FIELDS } from './websocket-call-starter.js';

/** How long the customer's phone may ring before we give up (CANCEL, customer-did-not-answer). */
export const DEFAULT_RING_TIMEOUT_MS = 30_000;
/**
 * Beyond the ring timeout, what dialling may take before the engine gives up on the call: a
 * gateway that never answers (Timer B, 64·T1 = 32 s) and a failover to the next.
 */
const DIAL_MARGIN_MS = 45_000;
const TELEPHONE_EVENT_PT = 101;

export interface SipOutboundCallsOptions {
  readonly store: Store;
  readonly engine: CallEngine;
  readonly builder: CallParamsBuilder;
  readonly allocator: RtpPortAllocator;
  readonly rtpBindAddress: string;
  readonly mediaAddress: string;
  readonly rtpInactivityTimeoutMs?: number;
  /** How long the customer's phone may ring before we CANCEL. */
  readonly ringTimeoutMs?: number;
  /** Transfers whose REFER is refused are dialled through the call's trunk and bridged. */
  readonly bridges?: SipBridges;
  /**
   * Codecs of SIP calls (PARLA_SIP_CODECS); default SipCodecs.parse(). The pipeline is built
   * before the answer, so we offer only the codecs of the first one's rate.
   */
  readonly codecs?: SipCodecs;
  readonly log: (error: unknown, message: string) => void;
}

/** Filled once the call is answered; the RTP callbacks read it. */
interface CallSlot {
  live?: LiveSipCall;
}

interface Dialling {
  readonly slot: CallSlot;
  readonly orgId: string;
  /** What names the call's number (phoneNumberId or an inline phoneNumber). */
  readonly numberOf: NumberOf;
  readonly callId: string;
  readonly session: CallSession;
  readonly rtp: RtpSession;
  readonly local: LocalAudio;
  readonly trunk: OutboundTrunk;
  readonly attempts: readonly OutboundAttempt[];
  readonly from: string;
  readonly params: Parameters<CallEngine['open']>[2];
  /** `customer.extension`: keyed as DTMF once the call is answered. */
  readonly extension?: string;
}

function ended(endedReason: string, endedMessage: string): Doc {
  const now = new Date().toISOString();
  return { status: 'ended', endedReason, endedMessage, startedAt: now, endedAt: now };
}

export class SipOutboundCalls {
  private agent: SipUserAgent | undefined;
  private readonly live = new SipLiveCalls(ENDED_REASON_FAILED);

  constructor(private readonly options: SipOutboundCallsOptions) {}

  attach(agent: SipUserAgent): void {
    this.agent = agent;
  }

  get liveCalls(): number {
    return this.live.size;
  }

  /** Whether a dialog is one of our answered calls (the SIP server routes its events here). */
  owns(dialog: SipDialog): boolean {
    return this.live.has(dialog);
  }

  /**
   * Starts an `outboundPhoneCall`: checks the number and trunk, builds the call's pipeline
   * parameters, opens the session and sends the INVITE. Resolves with the fields to merge into
   * the stored call (the monitor URLs, or `ended` when it cannot start).
   */
  async start(orgId: string, call: Resource): Promise<Doc> {
    const { store, engine } = this.options;
    if (engine.closing || this.agent === undefined) {
      return ended('worker-shutdown', 'This Parla server is shutting down');
    }
    const plan = await planOutboundCall(store, orgId, call);
    if (!plan.ok) {
      return ended(plan.endedReason, plan.message);
    }
    const { trunk, attempts, from } = plan;
    const codecs = this.options.codecs ?? SipCodecs.parse();
    const transportRateHz = codecs.preferredRateHz;
    const offered = codecs.atRate(transportRateHz);
    let params;
    try {
      const internal = (await store.resources.calls.getInternal(orgId, call.id)) ?? call;
      params = await this.options.builder.build(orgId, internal, transportRateHz);
    } catch (error) {
      if (error instanceof CallStartError) {
        return ended(error.endedReason, error.message);
      }
      throw error;
    }
    const slot: CallSlot = {};
    const rtp = await this.openRtp(slot, offered[0]!);
    if (rtp === undefined) {
      return ended(ENDED_REASON_TRANSPORT, 'No free RTP port');
    }
    // A phone call has no websocket transport: only the monitor URLs are shown.
    let urls;
    try {
      urls = engine.open(orgId, call, params, 'pcm_s16le', {
        connectTimeoutMs: (this.options.ringTimeoutMs ?? DEFAULT_RING_TIMEOUT_MS) + DIAL_MARGIN_MS,
      });
    } catch (error) {
      await rtp.close();
      throw error; // the engine is shutting down: the route ends the call
    }
    const { listenUrl, controlUrl } = urls;
    const monitor = {
      ...(listenUrl !== undefined && { listenUrl }),
      ...(controlUrl !== undefined && { controlUrl }),
    };
    const session = engine.session(call.id)!;
    const local = this.localAudio(rtp.localPort, offered);
    const { extension } = (call.customer ?? {}) as Doc;
    void this.dial({
      slot,
      orgId,
      numberOf: { phoneNumberId: call.phoneNumberId, phoneNumber: call.phoneNumber },
      callId: call.id,
      session,
      rtp,
      local,
      trunk,
      attempts,
      from,
      params,
      ...(typeof extension === 'string' && extension !== '' && { extension }),
    }).catch((error: unknown) => {
      this.options.log(error, 'outbound SIP call failed');
      void rtp.close();
      session.end(ENDED_REASON_FAILED);
    });
    return { [RESPONSE_ONLY_FIELDS]: { monitor } };
  }

  onDialogEnded(dialog: SipDialog, reason: DialogEndReason): void {
    this.live.onDialogEnded(dialog, reason);
  }

  onInfoDtmf(dialog: SipDialog, digit: string): void {
    this.live.onInfoDtmf(dialog, digit);
  }

  /** A re-INVITE or UPDATE from the customer's side (hold, new address, codec change). */
  onOffer(dialog: SipDialog, body: Buffer | undefined): Buffer | undefined {
    return this.live.onOffer(dialog, body);
  }

  private async openRtp(slot: CallSlot, first: SdpCodec): Promise<RtpSession | undefined> {
    const rtp = await RtpSession.open({
      allocator: this.options.allocator,
      bindAddress: this.options.rtpBindAddress,
      codec: SipCodecs.rtpCodec(first),
      payloadType: first.staticPayloadType ?? first.dynamicPayloadType ?? 96,
      // Our offer's telephone-event payload type, which the answer keeps (RFC 3264 §6.1).
      telephoneEventPayloadType: TELEPHONE_EVENT_PT,
      ...callRtpEvents(
        slot,
        this.options.bridges,
        this.options.rtpInactivityTimeoutMs,
        ENDED_REASON_RTP_TIMEOUT,
      ),
    }).catch((error: unknown) => {
      this.options.log(error, 'no RTP session for an outbound call');
      return undefined;
    });
    // No media is expected until the answer: the inactivity timeout starts then.
    rtp?.setReceiving(false);
    return rtp;
  }

  /** Tries the gateways in order until one answers, rings, or fails for the phone's reasons. */
  private async dial(call: Dialling): Promise<void> {
    const { session, rtp, local } = call;
    const offer = createOffer(local);
    const answerIn = (body: Buffer): NegotiationResult | undefined => {
      const parsed = body.length === 0 ? undefined : parseSdp(body.toString('utf8'));
      return parsed?.ok === true ? readAnswer(offer, parsed.session, local) : undefined;
    };
    // Early media (a 180/183 with SDP): its answer is latched for the 2xx, which may repeat it,
    // change it or carry none. Nothing is played or heard before the 2xx: the assistant must
    // not talk to a ringback tone.
    let early: NegotiationResult | undefined;
    let outcome: GatewayOutcome | undefined;
    for (const attempt of call.attempts) {
      outcome = await dialGateway({
        send: (options, onProgress) => this.agent!.dialogs.invite(options, onProgress),
        invite: {
          target: attempt.target,
          ...(attempt.outboundProxy !== undefined && { outboundProxy: attempt.outboundProxy }),
          requestUri: attempt.requestUri,
          from: call.from,
          to: `<${attempt.requestUri}>`,
          body: Buffer.from(serializeSdp(offer)),
          contentType: 'application/sdp',
        },
        ...(call.trunk.auth !== undefined && { auth: call.trunk.auth }),
        ringTimeoutMs: this.options.ringTimeoutMs ?? DEFAULT_RING_TIMEOUT_MS,
        ended: session.done,
        onRinging: () => session.markRinging(),
        onProvisional: (response) => {
          const answer = answerIn(response.body);
          early = answer?.ok === true ? answer : early;
        },
      });
      if (session.state === 'ended' || !shouldTryNextGateway(outcome.result, outcome.rang)) {
        break;
      }
    }
    const { result, rang, ringTimedOut } = outcome!;
    if (!result.ok) {
      await rtp.close();
      if (session.state !== 'ended') {
        session.end(failureReason(result, ringTimedOut, rang));
        void this.explain(call, failureMessage(result, ringTimedOut));
      }
      return;
    }
    const { dialog, response } = result;
    const answer = response.body.length === 0 ? early : answerIn(response.body);
    if (session.state === 'ended' || answer === undefined || !answer.ok) {
      await rtp.close();
      void this.agent!.hangUp(dialog);
      if (session.state !== 'ended') {
        session.end(ENDED_REASON_FAILED);
        const why = answer?.ok === false ? answer.reason : 'no SDP answer';
        void this.explain(call, `The customer answered, but ${why}`);
      }
      return;
    }
    this.connect(call, dialog, answer.negotiated, Buffer.from(serializeSdp(offer)));
  }

  /** The customer answered: media both ways, the pipeline starts (status in-progress). */
  private connect(
    call: Dialling,
    dialog: SipDialog,
    negotiated: NegotiatedAudio,
    offerSdp: Buffer,
  ): void {
    const agent = this.agent!;
    const { session, rtp } = call;
    rtp.setRemote({ address: negotiated.remoteAddress, port: negotiated.remotePort });
    rtp.setCodec(
      codecName(negotiated),
      negotiated.payloadType,
      negotiated.telephoneEventPayloadType,
    );
    // As on a re-INVITE (sip-live-calls.ts): a far end that answers sendonly holds the call.
    rtp.setReceiving(negotiated.direction === 'sendrecv');
    const media = new SipCallMedia({
      rtp,
      onCallerAudio: (samples) => session.onAudio(samples),
      onClose: () => {
        live.keypad.close();
        this.live.delete(dialog);
        void agent.hangUp(dialog);
      },
    });
    media.sending = negotiated.direction !== 'recvonly' && negotiated.direction !== 'inactive';
    const keypad = keypadFor(session, call.params.assistant);
    const live: LiveSipCall = { session, media, keypad, rtp, local: call.local, lastSdp: offerSdp };
    const trunk = {
      bridges: this.options.bridges,
      store: this.options.store,
      orgId: call.orgId,
      numberOf: call.numberOf,
    };
    const leg = telephonyLegFor(agent, dialog, live, trunk, () => {
      keypad.close();
      this.live.delete(dialog);
    });
    live.leg = leg;
    call.slot.live = live;
    this.live.set(dialog, live);
    session.attachTelephony(leg);
    session.onOpen(media);
    if (session.state === 'ended') {
      this.live.delete(dialog);
      media.stop();
      void agent.hangUp(dialog);
      return;
    }
    media.start();
    if (call.extension !== undefined) {
      this.dialExtension(call.extension, rtp, negotiated);
    }
  }

  /** Keys the extension (digits, `w` 0.5 s, `W` 1 s) after a 1 s pause for the far end. */
  private dialExtension(extension: string, rtp: RtpSession, negotiated: NegotiatedAudio): void {
    const parsed = parseDtmfDigits(`W${extension}`);
    if (!parsed.ok || negotiated.telephoneEventPayloadType === undefined) {
      this.options.log(
        new Error(parsed.ok ? 'telephone-event was not negotiated' : parsed.message),
        'customer.extension not dialled',
      );
      return;
    }
    void rtp.sendDtmfSteps(parsed.steps);
  }

  /** Adds why the trunk failed the call to the stored call, once its end is stored. */
  private async explain(call: Dialling, endedMessage: string): Promise<void> {
    await call.session.done;
    try {
      await this.options.store.resources.calls.update(call.orgId, call.callId, (current) => ({
        ...current,
        endedMessage,
      }));
    } catch (error) {
      this.options.log(error, 'could not store why an outbound call failed');
    }
  }

  /** 180/183: the stored call shows `ringing` (the session itself is still waiting). */
  private localAudio(port: number, codecs: readonly SdpCodec[]): LocalAudio {
    return {
      address: this.options.mediaAddress,
      port,
      codecs,
      telephoneEvent: true,
      ptimeMs: 20,
      sessionId: String(randomInt(1, 2 ** 47)),
      sessionVersion: 1,
    };
  }
}
