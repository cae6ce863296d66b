import {
  SipDialogLayer,
  type DialogEndReason,
  type IncomingInvite,
  type SipDialogLayerOptions,
} from './dialog-layer.js';
import type { SipDialog } from './dialog.js';
import { readInfoDtmf } from './dialog-info-dtmf.js';
import { createResponse, type SipMessage, type SipRequest } from './message.js';
import type { SipParseLimits } from './parser.js';
import type { ServerTransaction } from './server-transactions.js';
import type { SipTimerConfig } from './timers.js';
import { SipTcpTransport } from './transport-tcp.js';
import { SipUdpTransport } from './transport-udp.js';
import type { SipSource, SipTransport } from './transport.js';

export type { IncomingInvite } from './dialog-layer.js';

/**
 * What the call layer does with calls: the user agent answers everything else itself
 * (OPTIONS 200, unknown methods 405, in-dialog requests it has no use for 200 or 488).
 */
export interface SipCallHandler {
  /** A new INVITE outside any dialog; answer it through the user agent (provisional/accept/reject). */
  onInvite(invite: IncomingInvite): void;
  /** The caller cancelled an INVITE not yet answered (already answered 487). */
  onCancel(invite: IncomingInvite): void;
  /** A dialog ended: the peer's BYE, our BYE, no ACK, or the session timer ran out. */
  onDialogEnded(dialog: SipDialog, reason: DialogEndReason): void;
  /** A DTMF digit sent with SIP INFO (application/dtmf-relay or application/dtmf). */
  onInfoDtmf?(dialog: SipDialog, digit: string): void;
  /**
   * An in-dialog re-INVITE or UPDATE: `offer` is its SDP (undefined for a re-INVITE without
   * one, which our 200 must answer with an offer of our own). Returns our SDP, or undefined to
   * refuse the change (488).
   */
  onOffer?(dialog: SipDialog, offer: Buffer | undefined): Buffer | undefined;
}

export interface SipUserAgentOptions {
  /** Address to bind both transports to. */
  readonly host: string;
  /** UDP and TCP port; 0 picks a free one (the same number is not guaranteed for both). */
  readonly port: number;
  /** Host for Via and Contact when it differs from the bound address. */
  readonly advertisedHost?: string;
  /** Also listen on TCP. Default true. */
  readonly tcp?: boolean;
  readonly limits?: SipParseLimits;
  readonly timers?: SipTimerConfig;
  readonly handler: SipCallHandler;
}

type ListenOptions = Omit<Parameters<typeof SipUdpTransport.listen>[0], 'port'>;
/** With port 0, tries this many free UDP ports for one that is free on TCP too. */
const PORT_ATTEMPTS = 5;

/** UDP and, when asked, TCP on the same port. */
async function listenBoth(
  common: ListenOptions,
  port: number,
  tcp: boolean,
): Promise<SipTransport[]> {
  for (let attempt = 1; ; attempt++) {
    const udp = await SipUdpTransport.listen({ ...common, port });
    if (!tcp) {
      return [udp];
    }
    try {
      return [udp, await SipTcpTransport.listen({ ...common, port: udp.port })];
    } catch (error) {
      await udp.close();
      if (port !== 0 || attempt >= PORT_ATTEMPTS) {
        throw error;
      }
    }
  }
}

/**
 * The SIP user agent core: UDP (and TCP) transports, the transaction and dialog layers, and the
 * routing of what arrives to the call layer's handler (new INVITEs, CANCELs, dialog ends,
 * re-INVITE and UPDATE offers, INFO DTMF).
 */
export class SipUserAgent {
  readonly dialogs: SipDialogLayer;
  private closed = false;
  /** NOTIFY watchers by dialog id (a REFER's progress reports, RFC 3515 §2.4.4). */
  private readonly notifyWatchers = new Map<string, (request: SipRequest) => void>();

  private constructor(
    readonly transports: readonly SipTransport[],
    private readonly handler: SipCallHandler,
    timers: SipTimerConfig | undefined,
  ) {
    const options: SipDialogLayerOptions = {
      transports,
      ...(timers !== undefined && { timers }),
      onInvite: (invite) => this.safely(() => handler.onInvite(invite)),
      onCancel: (invite) => this.safely(() => handler.onCancel(invite)),
      onDialogEnded: (dialog, reason) => {
        this.notifyWatchers.delete(dialog.id);
        this.safely(() => handler.onDialogEnded(dialog, reason));
      },
      onDialogRequest: (dialog, request, transaction) =>
        this.onDialogRequest(dialog, request, transaction),
    };
    this.dialogs = new SipDialogLayer(options);
  }

  static async start(options: SipUserAgentOptions): Promise<SipUserAgent> {
    // The transports deliver into the user agent, which exists only once they are bound.
    let deliver: (message: SipMessage, source: SipSource) => void = () => {};
    const onMessage = (message: SipMessage, source: SipSource): void => deliver(message, source);
    const common = {
      host: options.host,
      ...(options.advertisedHost !== undefined && { advertisedHost: options.advertisedHost }),
      ...(options.limits !== undefined && { limits: options.limits }),
      onMessage,
    };
    const transports = await listenBoth(common, options.port, options.tcp !== false);
    const agent = new SipUserAgent(transports, options.handler, options.timers);
    deliver = (message, source) => agent.dialogs.receive(message, source);
    return agent;
  }

  /** The UDP port (tests bind port 0). */
  get port(): number {
    return (this.transports[0] as SipUdpTransport).port;
  }

  /**
   * Passes the dialog's NOTIFY requests (already answered 200) to `listener` until the returned
   * function is called or the dialog ends. One watcher per dialog; a new one replaces the old.
   */
  watchNotify(dialog: SipDialog, listener: (request: SipRequest) => void): () => void {
    this.notifyWatchers.set(dialog.id, listener);
    return () => {
      if (this.notifyWatchers.get(dialog.id) === listener) {
        this.notifyWatchers.delete(dialog.id);
      }
    };
  }

  /** Sends a BYE (idempotent). */
  async hangUp(dialog: SipDialog): Promise<void> {
    await this.dialogs.bye(dialog);
  }

  async close(): Promise<void> {
    if (this.closed) {
      return;
    }
    this.closed = true;
    this.dialogs.close();
    await Promise.all(this.transports.map((transport) => transport.close()));
  }

  private onDialogRequest(
    dialog: SipDialog,
    request: SipRequest,
    transaction: ServerTransaction,
  ): void {
    if (request.method === 'INFO') {
      const dtmf = readInfoDtmf(request);
      this.dialogs.respond(dialog, request, transaction, 200);
      if (dtmf !== undefined) {
        this.safely(() => this.handler.onInfoDtmf?.(dialog, dtmf.digit));
      }
      return;
    }
    if (request.method === 'OPTIONS') {
      this.dialogs.respond(dialog, request, transaction, 200);
      return;
    }
    if (request.method === 'NOTIFY') {
      const watcher = this.notifyWatchers.get(dialog.id);
      // No subscription of ours: 481 (RFC 6665 §4.1.3), else 200 and the watcher reads it.
      this.dialogs.respond(dialog, request, transaction, watcher === undefined ? 481 : 200);
      if (watcher !== undefined) {
        this.safely(() => watcher(request));
      }
      return;
    }
    if (request.method === 'UPDATE' && request.body.length === 0) {
      // A session refresh (RFC 4028) that leaves the media as it is.
      this.dialogs.respond(dialog, request, transaction, 200);
      return;
    }
    if (request.method === 'INVITE' || request.method === 'UPDATE') {
      let sdp: Buffer | undefined;
      try {
        sdp = this.handler.onOffer?.(dialog, request.body.length === 0 ? undefined : request.body);
      } catch (error) {
        process.emitWarning(`SIP offer handler failed: ${String(error)}`);
      }
      if (sdp === undefined) {
        this.dialogs.respond(dialog, request, transaction, 488);
        return;
      }
      this.dialogs.respond(dialog, request, transaction, 200, {
        body: sdp,
        contentType: 'application/sdp',
      });
      return;
    }
    transaction.respond(createResponse(request, 405));
  }

  /** A handler bug must not take the SIP server down. */
  private safely(run: () => void): void {
    try {
      run();
    } catch (error) {
      process.emitWarning(`SIP call handler failed: ${String(error)}`);
    }
  }
}
