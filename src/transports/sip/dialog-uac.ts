import { randomBytes } from 'node:crypto';
import { sendInDialog } from './dialog-messages.js';
import type { UacSessionTimerTerms } from './dialog-session-timers.js';
import { SipDialog, type SipDialogRequestOptions } from './dialog.js';
import { SipHeaders } from './headers.js';
import type { SipRequest, SipResponse } from './message.js';
import { newTag } from './name-addr.js';
import type { SipRequestTarget, SipTransactionLayer } from './transaction-layer.js';

export interface OutgoingInviteOptions extends SipDialogRequestOptions {
  /** The next hop: the trunk's gateway or outbound proxy (an IP literal for now). */
  readonly target: SipRequestTarget;
  readonly requestUri: string;
  /** Our identity, a name-addr without tag: `"Parla" <sip:+15550100@parla.example>`. */
  readonly from: string;
  /** The callee, a name-addr: `<sip:+15550123@trunk.example>`. */
  readonly to: string;
  /** Route header values for a preloaded route set, in order (after `outboundProxy`). */
  readonly routes?: readonly string[];
  /**
   * Our outbound proxy's Route value (`<sip:proxy.example.com;lr>`), sent first in Route; then
   * `target` is the proxy's address. The dialog keeps both for in-dialog requests when the
   * callee's 2xx carries no Record-Route (RFC 3261 §8.1.2).
   */
  readonly outboundProxy?: string;
  /**
   * Resending after a 401/407 (§22.2): the first INVITE's Call-ID and From tag, and a CSeq one
   * higher. Default: a new Call-ID and tag, CSeq 1.
   */
  readonly retryOf?: { readonly callId: string; readonly localTag: string; readonly seq: number };
  /**
   * Session-Expires and Min-SE to ask for (RFC 4028 §7.1), e.g. after a 422 the Min-SE it
   * named. Default: the dialog layer's policy (1800 s, Min-SE 90 s).
   */
  readonly sessionTimer?: UacSessionTimerTerms;
}

export type OutgoingInviteResult =
  | { ok: true; dialog: SipDialog; response: SipResponse }
  /** A final non-2xx (486, 487 after a cancel, 603…), 408 on timeout, 503 on transport error. */
  | { ok: false; status: number; response?: SipResponse };

/** An INVITE we sent: its request, its outcome, and a way to cancel it before the answer. */
export interface OutgoingInvite {
  readonly request: SipRequest;
  readonly result: Promise<OutgoingInviteResult>;
  cancel(): void;
}

/**
 * An initial INVITE (§8.1.1): new Call-ID and From tag, CSeq 1 (or those of `retryOf`), our
 * Contact, Max-Forwards.
 */
export function buildInvite(
  options: OutgoingInviteOptions,
  localTag: string,
  contact: string,
  callIdHost: string,
): SipRequest {
  const headers = new SipHeaders();
  const routes = options.outboundProxy === undefined ? [] : [options.outboundProxy];
  for (const route of [...routes, ...(options.routes ?? [])]) {
    headers.append('Route', route);
  }
  headers
    .append('Max-Forwards', '70')
    .append('From', `${options.from};tag=${localTag}`)
    .append('To', options.to)
    .append(
      'Call-ID',
      options.retryOf?.callId ?? `${randomBytes(12).toString('hex')}@${callIdHost}`,
    )
    .append('CSeq', `${options.retryOf?.seq ?? 1} INVITE`)
    .append('Contact', contact)
    .append('Supported', 'timer');
  if (options.sessionTimer !== undefined) {
    headers
      .append('Session-Expires', String(options.sessionTimer.expiresSeconds))
      .append('Min-SE', String(options.sessionTimer.minSeconds));
  }
  for (const [name, value] of options.headers ?? []) {
    headers.append(name, value);
  }
  const body = options.body ?? Buffer.alloc(0);
  if (body.length > 0) {
    headers.append('Content-Type', options.contentType ?? 'application/sdp');
  }
  return { kind: 'request', method: 'INVITE', uri: options.requestUri, headers, body };
}

/** What placeCall needs from the dialog layer. */
export interface PlaceCallContext {
  readonly transactions: SipTransactionLayer;
  readonly contact: string;
  readonly callIdHost: string;
  /** Keeps the new dialog so in-dialog requests from the callee match it. */
  readonly register: (dialog: SipDialog, response: SipResponse) => void;
}

/**
 * Sends an INVITE and resolves with the dialog its first 2xx creates (ACKed here, re-ACKed on
 * retransmissions), or the failure. A 2xx from another fork gets an ACK and a BYE (§13.2.2.4).
 */
export function placeCall(
  context: PlaceCallContext,
  options: OutgoingInviteOptions,
  onProgress?: (response: SipResponse) => void,
): OutgoingInvite {
  const { transactions, contact } = context;
  const transport = options.target.transport;
  const localTag = options.retryOf?.localTag ?? newTag();
  const request = buildInvite(options, localTag, contact, context.callIdHost);
  const seq = options.retryOf?.seq ?? 1;
  let resolveResult!: (result: OutgoingInviteResult) => void;
  const result = new Promise<OutgoingInviteResult>((resolve) => (resolveResult = resolve));
  let dialog: SipDialog | undefined;
  const ack = (to: SipDialog): void =>
    transactions.sendStateless(to.createAck(seq), to.nextHop() ?? options.target);
  const transaction = transactions.sendRequest(request, options.target, {
    onResponse: (response) => {
      if (response.status < 200) {
        onProgress?.(response);
        return;
      }
      if (response.status >= 300) {
        resolveResult({ ok: false, status: response.status, response });
        return;
      }
      const created = SipDialog.asUac(request, response, { localContact: contact, transport });
      if (created === undefined) {
        return; // a 2xx without Contact or To tag cannot be ACKed (§12.1.2)
      }
      if (options.outboundProxy !== undefined) {
        created.outboundProxy = { route: options.outboundProxy, target: options.target };
      }
      if (dialog === undefined) {
        dialog = created;
        context.register(dialog, response);
        ack(dialog);
        resolveResult({ ok: true, dialog, response });
      } else if (created.id === dialog.id) {
        ack(dialog); // a retransmitted 2xx: our ACK was lost
      } else {
        ack(created);
        void sendInDialog(transactions, created, 'BYE', {}, () => {});
      }
    },
    onTimeout: () => resolveResult({ ok: false, status: 408 }),
    onTransportError: () => resolveResult({ ok: false, status: 503 }),
  });
  return { request, result, cancel: () => transactions.cancel(transaction, options.target) };
}
