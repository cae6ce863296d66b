import type { Store } from '../store/store.js';
import { RtpPortAllocator } from '../transports/rtp/rtp-port-allocator.js';
import type { DialogEndReason } from '../transports/sip/dialog-layer.js';
import type { SipDialog } from '../transports/sip/dialog.js';
import {
  SipUserAgent,
  type IncomingInvite,
  type SipCallHandler,
} from '../transports/sip/sip-user-agent.js';
import type { SipTimerConfig } from '../transports/sip/timers.js';
import type { CallEngine } from './call-engine.js';
import type { CallParamsBuilder } from './call-params-builder.js';
import { SipBridges } from './sip-bridge.js';
import { SipCodecs } from './sip-codecs.js';
import { SipInboundCalls } from './sip-inbound-calls.js';
import { SipOutboundCalls } from './sip-outbound-calls.js';
import { SipRegistrations } from './sip-outbound-registrations.js';

export interface SipServerOptions {
  readonly store: Store;
  readonly engine: CallEngine;
  readonly builder: CallParamsBuilder;
  /** Address SIP and RTP bind to. */
  readonly host: string;
  /** SIP port (UDP and TCP); 0 picks a free one. */
  readonly sipPort: number;
  /** Address peers are told to reach us at (Via, Contact, SDP); default `host`. */
  readonly advertisedHost?: string;
  readonly rtpPortMin: number;
  readonly rtpPortMax: number;
  readonly rtpInactivityTimeoutMs?: number;
  /** Codecs of SIP calls, most preferred first (PARLA_SIP_CODECS); default SipCodecs.parse(). */
  readonly codecs?: SipCodecs;
  readonly timers?: SipTimerConfig;
  /** Also listen on TCP. Default true. */
  readonly tcp?: boolean;
  /** How long an outbound call may ring before we CANCEL it. Default 25 s. */
  readonly ringTimeoutMs?: number;
  /** Trunk registrations: how often credentials are read again, and binding terms. */
  readonly registrations?: {
    readonly reloadIntervalMs?: number;
    readonly expiresSeconds?: number;
    readonly retryBaseMs?: number;
  };
  readonly log: (error: unknown, message: string) => void;
}

/**
 * The user agent has one call handler: new INVITEs and CANCELs are inbound; dialog events go to
 * the bridge that owns the dialog (a transfer Parla carries itself), else to the outbound calls
 * when the dialog is one of theirs, else to the inbound calls.
 */
class SipCallDispatcher implements SipCallHandler {
  constructor(
    private readonly inbound: SipInboundCalls,
    private readonly outbound: SipOutboundCalls,
    private readonly bridges: SipBridges,
  ) {}

  onInvite(invite: IncomingInvite): void {
    this.inbound.onInvite(invite);
  }

  onCancel(invite: IncomingInvite): void {
    this.inbound.onCancel(invite);
  }

  onDialogEnded(dialog: SipDialog, reason: DialogEndReason): void {
    if (this.bridges.owns(dialog)) {
      this.bridges.onDialogEnded(dialog);
    } else if (this.outbound.owns(dialog)) {
      this.outbound.onDialogEnded(dialog, reason);
    } else {
      this.inbound.onDialogEnded(dialog, reason);
    }
  }

  onInfoDtmf(dialog: SipDialog, digit: string): void {
    if (this.bridges.owns(dialog)) {
      this.bridges.onInfoDtmf(dialog, digit); // keyed on the bridge's other leg
      return;
    }
    if (this.outbound.owns(dialog)) {
      this.outbound.onInfoDtmf(dialog, digit);
    } else {
      this.inbound.onInfoDtmf(dialog, digit);
    }
  }

  onOffer(dialog: SipDialog, offer: Buffer | undefined): Buffer | undefined {
    if (this.bridges.owns(dialog)) {
      return this.bridges.onOffer(dialog, offer);
    }
    return this.outbound.owns(dialog)
      ? this.outbound.onOffer(dialog, offer)
      : this.inbound.onOffer(dialog, offer);
  }
}

/**
 * The SIP side of Parla: the user agent on the SIP port, the inbound calls it routes, the
 * outbound calls it places and the trunk registrations it keeps.
 */
export class SipServer {
  private constructor(
    readonly agent: SipUserAgent,
    readonly calls: SipInboundCalls,
    readonly outbound: SipOutboundCalls,
    readonly registrations: SipRegistrations,
    readonly bridges: SipBridges,
  ) {}

  static async start(options: SipServerOptions): Promise<SipServer> {
    const advertised =
      options.advertisedHost !== undefined && options.advertisedHost !== ''
        ? options.advertisedHost
        : options.host;
    if (advertised === '0.0.0.0' || advertised === '::') {
      // The SDP would tell callers to send their audio nowhere (or put the call on hold).
      throw Object.assign(
        new Error(
          `SIP binds ${options.host}: set PARLA_SIP_ADVERTISED_HOST to the address trunks reach this server at`,
        ),
        { code: 'ERR_CONFIG' },
      );
    }
    const allocator = new RtpPortAllocator({
      minPort: options.rtpPortMin,
      maxPort: options.rtpPortMax,
    });
    const media = {
      store: options.store,
      engine: options.engine,
      builder: options.builder,
      allocator,
      rtpBindAddress: options.host,
      mediaAddress: advertised,
      ...(options.rtpInactivityTimeoutMs !== undefined && {
        rtpInactivityTimeoutMs: options.rtpInactivityTimeoutMs,
      }),
      codecs: options.codecs ?? SipCodecs.parse(),
      log: options.log,
    };
    const bridges = new SipBridges(media);
    const calls = new SipInboundCalls({ ...media, bridges });
    const outbound = new SipOutboundCalls({
      ...media,
      bridges,
      ...(options.ringTimeoutMs !== undefined && { ringTimeoutMs: options.ringTimeoutMs }),
    });
    const agent = await SipUserAgent.start({
      host: options.host,
      port: options.sipPort,
      advertisedHost: advertised,
      handler: new SipCallDispatcher(calls, outbound, bridges),
      ...(options.tcp !== undefined && { tcp: options.tcp }),
      ...(options.timers !== undefined && { timers: options.timers }),
    });
    calls.attach(agent);
    outbound.attach(agent);
    bridges.attach(agent);
    const registrations = new SipRegistrations({
      store: options.store,
      transactions: agent.dialogs.transactions,
      transports: agent.transports,
      ...options.registrations,
      log: options.log,
    });
    await registrations.start();
    return new SipServer(agent, calls, outbound, registrations, bridges);
  }

  get port(): number {
    return this.agent.port;
  }

  /**
   * Unregisters from trunks, hangs up bridged transfers and spoken assistant-request errors,
   * then stops taking SIP traffic; live calls are ended by the call engine's close first.
   */
  async close(): Promise<void> {
    await this.registrations.close();
    this.bridges.close();
    await this.calls.close();
    await this.agent.close();
  }
}
