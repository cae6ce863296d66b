/**
 * A transfer Parla carries itself when the far end refuses our REFER: a new INVITE to the
 * destination through the call's trunk, and once it answers, the caller's media relayed to the
 * destination and back every 20 ms (G.711 decoded and encoded again by the two RTP sessions).
 * From the answer on the bridge owns both dialogs: a BYE on either leg hangs up the other, and
 * the call session (which ends `assistant-forwarded-call`) no longer touches the caller. Keys
 * pressed on one leg are keyed on the other (sip-bridge-dtmf.ts), after the destination's
 * extension, which is keyed once it answers.
 */
import { randomInt } from 'node:crypto';
import type { Doc } from '../store/resource-store.js';
import type { RtpPortAllocator } from '../transports/rtp/rtp-port-allocator.js';
import { RtpSession } from '../transports/rtp/rtp-session.js';
import type { SipDialog } from '../transports/sip/dialog.js';
import {
  answerOffer,
  createOffer,
  readAnswer,
  type LocalAudio,
} from '../transports/sip/sdp-offer-answer.js';
import { parseSdp, serializeSdp } from '../transports/sip/sdp.js';
import type { SipUserAgent } from '../transports/sip/sip-user-agent.js';
import { extensionSteps, ringTimeoutOf, type BridgeRoute } from './sip-bridge-route.js';
import type { SipCallMedia } from './sip-call-media.js';
import { SipCodecs } from './sip-codecs.js';
import { codecName } from './sip-live-calls.js';
import { dialGateway, type GatewayOutcome } from './sip-outbound-dial.js';
import { failureMessage, shouldTryNextGateway } from './sip-outbound-plan.js';
import { BridgedLegDtmf, newBridgeDtmfStats } from './sip-bridge-dtmf.js';
import { BridgeRelay } from './sip-bridge-relay.js';
import { sharedFramePacer, type FramePacer, type PacedStream } from './frame-pacer.js';
import type { TransferOutcome } from './telephony-leg.js';

const FRAME_MS = 20;
/** A key sent as INFO without a Duration is taken to be held this long. */
const DTMF_INFO_DEFAULT_MS = 100;
/** No RTP on a leg for this long ends the bridge (both legs hung up). */
const DEFAULT_INACTIVITY_TIMEOUT_MS = 30_000;
/** Our offer's telephone-event payload type, which the answer keeps (RFC 3264 §6.1). */
const TELEPHONE_EVENT_PT = 101;

/** The answered call whose caller is bridged. */
export interface BridgeCallerLeg {
  readonly dialog: SipDialog;
  readonly rtp: RtpSession;
  readonly media: SipCallMedia;
  /** Our SDP on the caller's dialog (answers the caller's re-INVITEs once bridged). */
  readonly local: LocalAudio;
  readonly lastSdp: Buffer;
  /** Resolves when the call ends: a dial still in flight is cancelled. */
  readonly ended: Promise<void>;
  /** The call layer lets go of the dialog (no hang-up on the call's end, events to the bridge). */
  readonly release: () => void;
}

export interface SipBridgesOptions {
  readonly allocator: RtpPortAllocator;
  readonly rtpBindAddress: string;
  readonly mediaAddress: string;
  readonly rtpInactivityTimeoutMs?: number;
  /**
   * Codecs of SIP calls (PARLA_SIP_CODECS); default SipCodecs.parse(). The new leg offers only
   * those of the caller's rate, so frames relay without resampling.
   */
  readonly codecs?: SipCodecs;
  /** The 20 ms clock of the relay. Default the one all SIP media of the process share. */
  readonly pacer?: FramePacer;
  readonly log: (error: unknown, message: string) => void;
}

/** One side of a live bridge. */
interface Leg {
  readonly dialog: SipDialog;
  readonly rtp: RtpSession;
  local: LocalAudio;
  lastSdp: Buffer;
  lastPackets: number;
  lastPacketAtMs: number;
  /** False while the leg holds the call (it sends nothing; silence is expected). */
  receiving: boolean;
  /** False while the leg's SDP says we must not send (recvonly or inactive on our side). */
  sending: boolean;
  /** Keys to this leg: the other leg's, and the destination's extension. */
  readonly dtmf: BridgedLegDtmf;
}

interface Bridge {
  readonly caller: Leg;
  readonly callee: Leg;
  paced?: PacedStream;
  readonly toCallee: BridgeRelay;
  readonly toCaller: BridgeRelay;
}

export class SipBridges {
  private agent: SipUserAgent | undefined;
  private readonly byDialog = new Map<string, Bridge>();
  private readonly byRtp = new Map<RtpSession, Bridge>();
  private readonly bridges = new Set<Bridge>();
  /** Keys relayed between the legs of every bridge (as events, as INFO, or dropped). */
  readonly dtmfStats = newBridgeDtmfStats();

  constructor(private readonly options: SipBridgesOptions) {}

  attach(agent: SipUserAgent): void {
    this.agent = agent;
  }

  /** Live bridges. */
  get size(): number {
    return this.bridges.size;
  }

  /** Whether a dialog is a leg of a live bridge (the SIP server routes its events here). */
  owns(dialog: SipDialog): boolean {
    return this.byDialog.has(dialog.id);
  }

  /** A leg ended (its BYE, or no ACK): the other leg is hung up. */
  onDialogEnded(dialog: SipDialog): void {
    const bridge = this.byDialog.get(dialog.id);
    if (bridge !== undefined) {
      this.end(bridge);
    }
  }

  /**
   * An RFC 4733 key that ended on an RTP session: when the session is a leg of a bridge, the key
   * goes to the other leg and this returns true (the caller's session is the call layer's, which
   * hands its keys here first; the destination's reports here itself).
   */
  relayDtmf(from: RtpSession | undefined, event: { digit: string; durationMs: number }): boolean {
    const bridge = from === undefined ? undefined : this.byRtp.get(from);
    if (bridge === undefined) {
      return false;
    }
    const to = bridge.caller.rtp === from ? bridge.callee : bridge.caller;
    to.dtmf.key(event.digit, event.durationMs);
    return true;
  }

  /** A key sent as SIP INFO on a leg: keyed on the other leg. */
  onInfoDtmf(dialog: SipDialog, digit: string, durationMs = DTMF_INFO_DEFAULT_MS): void {
    const bridge = this.byDialog.get(dialog.id);
    if (bridge !== undefined) {
      const to = bridge.caller.dialog.id === dialog.id ? bridge.callee : bridge.caller;
      to.dtmf.key(digit, durationMs);
    }
  }

  /** A re-INVITE or UPDATE on a leg: new address or codec (hold is relayed as silence). */
  onOffer(dialog: SipDialog, body: Buffer | undefined): Buffer | undefined {
    const bridge = this.byDialog.get(dialog.id);
    if (bridge === undefined) {
      return undefined;
    }
    const leg = bridge.caller.dialog.id === dialog.id ? bridge.caller : bridge.callee;
    if (body === undefined) {
      return leg.lastSdp;
    }
    const parsed = parseSdp(body.toString('utf8'));
    if (!parsed.ok) {
      return undefined;
    }
    const local = { ...leg.local, sessionVersion: leg.local.sessionVersion + 1 };
    // Either leg keeps its rate (the relay does not resample).
    const result = answerOffer(parsed.session, {
      ...local,
      codecs: SipCodecs.keepRate(local.codecs, leg.rtp.sampleRateHz),
    });
    if (!result.ok || result.answer === undefined) {
      return undefined;
    }
    const { negotiated } = result;
    leg.local = local;
    leg.rtp.setRemote({ address: negotiated.remoteAddress, port: negotiated.remotePort });
    leg.rtp.setCodec(
      codecName(negotiated),
      negotiated.payloadType,
      negotiated.telephoneEventPayloadType,
    );
    leg.receiving = negotiated.direction === 'sendrecv' || negotiated.direction === 'recvonly';
    leg.sending = negotiated.direction === 'sendrecv' || negotiated.direction === 'sendonly';
    leg.dtmf.eventsOut = leg.rtp.canSendDtmf && negotiated.telephoneEventPayloadType !== undefined;
    leg.lastPacketAtMs = performance.now();
    leg.lastSdp = Buffer.from(serializeSdp(result.answer));
    return leg.lastSdp;
  }

  /**
   * Dials the destination through the route's gateways; on its answer takes the caller over and
   * relays media. Resolves ok once the destination answered, else why it did not.
   */
  async bridge(
    caller: BridgeCallerLeg,
    route: Extract<BridgeRoute, { ok: true }>,
    destination: Doc,
  ): Promise<TransferOutcome> {
    const agent = this.agent;
    if (agent === undefined) {
      return { ok: false, code: 'transfer-failed', message: 'The SIP side is not running' };
    }
    const extension = extensionSteps(destination);
    if (extension !== undefined && 'message' in extension) {
      return { ok: false, code: 'invalid-destination', message: extension.message };
    }
    // The caller's rate first, so the relay need not resample unless the destination wants to.
    const codecs = (this.options.codecs ?? SipCodecs.parse()).codecs;
    const sameRate = SipCodecs.keepRate(codecs, caller.rtp.sampleRateHz);
    const offered = [...sameRate, ...codecs.filter((codec) => !sameRate.includes(codec))];
    const first = offered[0]!;
    const rtp = await RtpSession.open({
      allocator: this.options.allocator,
      bindAddress: this.options.rtpBindAddress,
      codec: SipCodecs.rtpCodec(first),
      payloadType: first.staticPayloadType ?? first.dynamicPayloadType ?? 96,
      telephoneEventPayloadType: TELEPHONE_EVENT_PT,
      onDtmf: (event) => this.relayDtmf(rtp, event),
    }).catch((error: unknown) => {
      this.options.log(error, 'no RTP session for a bridged transfer');
      return undefined;
    });
    if (rtp === undefined) {
      return { ok: false, code: 'transfer-failed', message: 'No free RTP port for the new call' };
    }
    rtp.setReceiving(false);
    const local: LocalAudio = {
      address: this.options.mediaAddress,
      port: rtp.localPort,
      codecs: offered,
      telephoneEvent: true,
      ptimeMs: FRAME_MS,
      sessionId: String(randomInt(1, 2 ** 47)),
      sessionVersion: 1,
    };
    const offer = createOffer(local);
    const offerSdp = Buffer.from(serializeSdp(offer));
    const ringTimeoutMs = ringTimeoutOf(destination);
    let outcome: GatewayOutcome | undefined;
    for (const attempt of route.attempts) {
      outcome = await dialGateway({
        send: (options, onProgress) => agent.dialogs.invite(options, onProgress),
        invite: {
          target: attempt.target,
          ...(attempt.outboundProxy !== undefined && { outboundProxy: attempt.outboundProxy }),
          requestUri: attempt.requestUri,
          from: route.from,
          to: `<${attempt.requestUri}>`,
          body: offerSdp,
          contentType: 'application/sdp',
        },
        ...(route.trunk.auth !== undefined && { auth: route.trunk.auth }),
        ringTimeoutMs,
        ended: caller.ended,
        onRinging: () => undefined,
      });
      if (caller.dialog.state === 'terminated' || !shouldTryNextGateway(outcome.result, false)) {
        break;
      }
    }
    const result = outcome?.result;
    if (result === undefined || !result.ok) {
      await rtp.close();
      const why =
        result === undefined
          ? 'the trunk has no gateway'
          : failureMessage(result, outcome?.ringTimedOut === true);
      return {
        ok: false,
        code: 'transfer-failed',
        message: `The destination was not reached: ${why}`,
      };
    }
    const { dialog, response } = result;
    const parsed =
      response.body.length === 0 ? undefined : parseSdp(response.body.toString('utf8'));
    const answer = parsed?.ok === true ? readAnswer(offer, parsed.session, local) : undefined;
    if (answer === undefined || !answer.ok) {
      void agent.hangUp(dialog);
      await rtp.close();
      const why = answer?.ok === false ? answer.reason : 'no SDP answer';
      return {
        ok: false,
        code: 'transfer-failed',
        message: `The destination answered, but ${why}`,
      };
    }
    if (caller.dialog.state === 'terminated' || !caller.media.handOver()) {
      void agent.hangUp(dialog);
      await rtp.close();
      return { ok: false, code: 'call-ended', message: 'The caller hung up during the transfer' };
    }
    caller.release();
    const { negotiated } = answer;
    rtp.setRemote({ address: negotiated.remoteAddress, port: negotiated.remotePort });
    rtp.setCodec(
      codecName(negotiated),
      negotiated.payloadType,
      negotiated.telephoneEventPayloadType,
    );
    rtp.setReceiving(true);
    const nowMs = performance.now();
    const leg = (
      legDialog: SipDialog,
      legRtp: RtpSession,
      legLocal: LocalAudio,
      sdp: Buffer,
      eventsOut: boolean,
    ): Leg => ({
      dialog: legDialog,
      rtp: legRtp,
      local: legLocal,
      lastSdp: sdp,
      lastPackets: legRtp.stats.packetsReceived,
      lastPacketAtMs: nowMs,
      receiving: true,
      sending: true,
      dtmf: new BridgedLegDtmf(agent.dialogs, legDialog, legRtp, eventsOut, this.dtmfStats),
    });
    const bridge: Bridge = {
      caller: leg(caller.dialog, caller.rtp, caller.local, caller.lastSdp, caller.rtp.canSendDtmf),
      callee: leg(dialog, rtp, local, offerSdp, negotiated.telephoneEventPayloadType !== undefined),
      toCallee: new BridgeRelay(caller.rtp, rtp),
      toCaller: new BridgeRelay(rtp, caller.rtp),
    };
    this.bridges.add(bridge);
    this.byDialog.set(caller.dialog.id, bridge);
    this.byDialog.set(dialog.id, bridge);
    this.byRtp.set(caller.rtp, bridge);
    this.byRtp.set(rtp, bridge);
    if (extension !== undefined) {
      // Queued before any key of the caller's: those follow the extension.
      void bridge.callee.dtmf.dial(extension).then((sent) => {
        if (!sent) {
          this.options.log(new Error('the extension did not go out'), 'bridged transfer');
        }
      });
    }
    bridge.paced = (this.options.pacer ?? sharedFramePacer).add(() => this.frame(bridge));
    return { ok: true };
  }

  /** Hangs up every bridge (the server is closing). */
  close(): void {
    for (const bridge of [...this.bridges]) {
      this.end(bridge);
    }
  }

  /** Relays one 20 ms frame both ways; ends a bridge whose media went silent. */
  private frame(bridge: Bridge): void {
    const nowMs = performance.now();
    bridge.toCallee.relay(bridge.callee.sending);
    bridge.toCaller.relay(bridge.caller.sending);
    const timeoutMs = this.options.rtpInactivityTimeoutMs ?? DEFAULT_INACTIVITY_TIMEOUT_MS;
    for (const leg of [bridge.caller, bridge.callee]) {
      const packets = leg.rtp.stats.packetsReceived;
      if (packets !== leg.lastPackets || !leg.receiving) {
        leg.lastPackets = packets;
        leg.lastPacketAtMs = nowMs;
      } else if (nowMs - leg.lastPacketAtMs > timeoutMs) {
        this.options.log(new Error('no RTP on a bridged leg'), 'bridged transfer ended');
        this.end(bridge);
        return;
      }
    }
  }

  private end(bridge: Bridge): void {
    if (!this.bridges.delete(bridge)) {
      return;
    }
    bridge.paced?.stop();
    for (const leg of [bridge.caller, bridge.callee]) {
      this.byDialog.delete(leg.dialog.id);
      this.byRtp.delete(leg.rtp);
      leg.dtmf.close();
      if (leg.dialog.state !== 'terminated') {
        void this.agent?.hangUp(leg.dialog).catch(() => undefined);
      }
      void leg.rtp.close();
    }
  }
}
