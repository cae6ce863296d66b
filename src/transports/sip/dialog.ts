import { SipHeaders } from './headers.js';
import { MAX_CSEQ, getCSeq, getCallId, type SipRequest, type SipResponse } from './message.js';
import { parseNameAddr, tagOf } from './name-addr.js';
import type { SipRequestTarget } from './transaction-layer.js';
import type { SipTransportName } from './transport.js';
import { isSipUri, parseUri } from './uri.js';

export type SipDialogState = 'early' | 'confirmed' | 'terminated';

/** Methods that refresh the remote target (§12.2: re-INVITE; RFC 3311 UPDATE). */
const TARGET_REFRESH = new Set(['INVITE', 'UPDATE']);
/** Methods whose requests carry our Contact (target refresh, and REFER per RFC 3515). */
const NEEDS_CONTACT = new Set(['INVITE', 'UPDATE', 'REFER', 'SUBSCRIBE', 'NOTIFY']);

/** An outbound proxy (RFC 3261 §8.1.2): its Route value and its resolved address. */
export interface OutboundProxyHop {
  /** `<sip:proxy.example.com;lr>` */
  readonly route: string;
  readonly target: SipRequestTarget;
}

export interface SipDialogRequestOptions {
  readonly body?: Buffer;
  readonly contentType?: string;
  /** Extra header fields, appended in order. */
  readonly headers?: readonly (readonly [string, string])[];
}

/**
 * One dialog (RFC 3261 §12): identity (Call-ID, local and remote tags), the route set, the
 * remote target, and both CSeq spaces. It builds in-dialog requests (§12.2.1.1, loose and
 * strict routing) and checks incoming ones (§12.2.2). It does no I/O: SipDialogLayer sends.
 */
export class SipDialog {
  state: SipDialogState;
  remoteTarget: string;
  /** Our next CSeq is localSeq + 1. */
  localSeq: number;
  /** The highest CSeq seen from the peer, or undefined before its first request. */
  remoteSeq: number | undefined;
  /** The transport in-dialog requests go over, from the dialog-creating request. */
  readonly transport: SipTransportName;
  /**
   * Our outbound proxy: with an empty route set (no Record-Route), in-dialog requests still
   * go through it, with it as their Route.
   */
  outboundProxy: OutboundProxyHop | undefined = undefined;

  private constructor(
    readonly role: 'uas' | 'uac',
    readonly callId: string,
    readonly localTag: string,
    readonly remoteTag: string,
    /** Our From (as UAC) or To (as UAS) header value, tag included. */
    readonly localParty: string,
    /** The peer's, tag included. */
    readonly remoteParty: string,
    readonly routeSet: readonly string[],
    readonly localContact: string,
    init: {
      remoteTarget: string;
      localSeq: number;
      remoteSeq: number | undefined;
      transport: SipTransportName;
      state: SipDialogState;
    },
  ) {
    this.remoteTarget = init.remoteTarget;
    this.localSeq = init.localSeq;
    this.remoteSeq = init.remoteSeq;
    this.transport = init.transport;
    this.state = init.state;
  }

  /** `callId|localTag|remoteTag`: the key dialogs are matched by. */
  get id(): string {
    return dialogKey(this.callId, this.localTag, this.remoteTag);
  }

  /**
   * The UAS side of a dialog created by a 2xx (or 101–199 with a To tag: early) to `invite`
   * (§12.1.1): the route set is the INVITE's Record-Route in order, the remote target its
   * Contact. Returns undefined when the INVITE has no usable Contact or From tag.
   */
  static asUas(
    invite: SipRequest,
    options: {
      localTag: string;
      localContact: string;
      transport: SipTransportName;
      early?: boolean;
    },
  ): SipDialog | undefined {
    const from = parseNameAddr(invite.headers.get('From') ?? '');
    const to = invite.headers.get('To');
    const contact = firstContactUri(invite);
    const cseq = getCSeq(invite);
    const callId = getCallId(invite);
    const remoteTag = from === null ? undefined : tagOf(from);
    if (remoteTag === undefined || to === undefined || contact === undefined) {
      return undefined;
    }
    if (cseq === undefined || callId === undefined) {
      return undefined;
    }
    return new SipDialog(
      'uas',
      callId,
      options.localTag,
      remoteTag,
      /;\s*tag\s*=/i.test(to) ? to : `${to};tag=${options.localTag}`,
      invite.headers.get('From')!,
      invite.headers.getAll('Record-Route'),
      options.localContact,
      {
        remoteTarget: contact,
        // §12.1.1: the UAS's local sequence starts empty; any value works for its first request.
        localSeq: Math.floor(Math.random() * 10_000),
        remoteSeq: cseq.seq,
        transport: options.transport,
        state: options.early === true ? 'early' : 'confirmed',
      },
    );
  }

  /**
   * The UAC side, from our `request` and the peer's 2xx (or tagged 1xx) `response` (§12.1.2):
   * route set is the response's Record-Route reversed, remote target its Contact.
   */
  static asUac(
    request: SipRequest,
    response: SipResponse,
    options: { localContact: string; transport: SipTransportName },
  ): SipDialog | undefined {
    const from = parseNameAddr(request.headers.get('From') ?? '');
    const to = parseNameAddr(response.headers.get('To') ?? '');
    const localTag = from === null ? undefined : tagOf(from);
    const remoteTag = to === null ? undefined : tagOf(to);
    const contact = firstContactUri(response);
    const cseq = getCSeq(request);
    const callId = getCallId(request);
    if (localTag === undefined || remoteTag === undefined || contact === undefined) {
      return undefined;
    }
    if (cseq === undefined || callId === undefined) {
      return undefined;
    }
    return new SipDialog(
      'uac',
      callId,
      localTag,
      remoteTag,
      request.headers.get('From')!,
      response.headers.get('To')!,
      response.headers.getAll('Record-Route').reverse(),
      options.localContact,
      {
        remoteTarget: contact,
        localSeq: cseq.seq,
        remoteSeq: undefined,
        transport: options.transport,
        state: response.status >= 200 ? 'confirmed' : 'early',
      },
    );
  }

  /**
   * A request within the dialog (§12.2.1.1) with the next CSeq. With a loose-routing first
   * route (`;lr`) the Request-URI is the remote target and Route the route set; with a strict
   * router the Request-URI is that route's URI and the remote target goes last in Route.
   */
  createRequest(method: string, options: SipDialogRequestOptions = {}): SipRequest {
    if (method === 'ACK' || method === 'CANCEL') {
      throw new Error(`${method} takes the CSeq of its INVITE: use createAck`);
    }
    if (this.localSeq >= MAX_CSEQ) {
      throw new RangeError('the dialog has used up its CSeq space');
    }
    this.localSeq++;
    return this.buildRequest(method, this.localSeq, options);
  }

  /** The ACK for a 2xx to our INVITE with CSeq `inviteSeq` (§13.2.2.4). */
  createAck(inviteSeq: number, options: SipDialogRequestOptions = {}): SipRequest {
    return this.buildRequest('ACK', inviteSeq, options);
  }

  private buildRequest(method: string, seq: number, options: SipDialogRequestOptions): SipRequest {
    const headers = new SipHeaders();
    let uri = this.remoteTarget;
    const routes =
      this.routeSet.length === 0 && this.outboundProxy !== undefined
        ? [this.outboundProxy.route]
        : [...this.routeSet];
    const first = routes[0] === undefined ? null : parseNameAddr(routes[0]);
    if (first !== null && !isLooseRoute(first.uri)) {
      uri = routeUri(routes[0]!);
      routes.shift();
      routes.push(`<${this.remoteTarget}>`);
    }
    for (const route of routes) {
      headers.append('Route', route);
    }
    headers
      .append('Max-Forwards', '70')
      .append('From', this.localParty)
      .append('To', this.remoteParty)
      .append('Call-ID', this.callId)
      .append('CSeq', `${seq} ${method}`);
    if (NEEDS_CONTACT.has(method)) {
      headers.append('Contact', this.localContact);
    }
    for (const [name, value] of options.headers ?? []) {
      headers.append(name, value);
    }
    const body = options.body ?? Buffer.alloc(0);
    if (body.length > 0) {
      headers.append('Content-Type', options.contentType ?? 'application/sdp');
    }
    return { kind: 'request', method, uri, headers, body };
  }

  /**
   * Checks an incoming in-dialog request (§12.2.2): a CSeq lower than the last one is out of
   * order (answer 500); a target refresh updates the remote target. ACK and CANCEL are exempt.
   */
  receiveRequest(request: SipRequest): 'ok' | 'out-of-order' {
    if (request.method === 'ACK' || request.method === 'CANCEL') {
      return 'ok';
    }
    const seq = getCSeq(request)?.seq;
    if (seq === undefined) {
      return 'out-of-order';
    }
    if (this.remoteSeq !== undefined && seq <= this.remoteSeq) {
      // Equal is a retransmission the transaction layer would have absorbed: a new request
      // reusing the number is out of order too.
      return 'out-of-order';
    }
    this.remoteSeq = seq;
    if (TARGET_REFRESH.has(request.method)) {
      this.refreshTarget(request);
    }
    return 'ok';
  }

  /** Takes the Contact of a target refresh request or its 2xx response. */
  refreshTarget(message: SipRequest | SipResponse): void {
    const contact = firstContactUri(message);
    if (contact !== undefined) {
      this.remoteTarget = contact;
    }
  }

  /**
   * Where in-dialog requests go: the first route's URI, our outbound proxy when there is no
   * route set, or the remote target. Only IP-literal hosts are resolved (no DNS yet);
   * undefined otherwise.
   */
  nextHop(): SipRequestTarget | undefined {
    const route = this.routeSet[0];
    if (route === undefined && this.outboundProxy !== undefined) {
      return this.outboundProxy.target;
    }
    const uri = parseUri(route === undefined ? this.remoteTarget : routeUri(route));
    if (uri === null || !isSipUri(uri)) {
      return undefined;
    }
    const host = uri.host.startsWith('[') ? uri.host.slice(1, -1) : uri.host;
    if (!/^[0-9.]+$/.test(host) && !host.includes(':')) {
      return undefined;
    }
    const transportParam = uri.params.get('transport')?.toUpperCase();
    const transport: SipTransportName =
      transportParam === 'TCP' ? 'TCP' : transportParam === 'UDP' ? 'UDP' : this.transport;
    return {
      transport,
      address: host,
      port: uri.port ?? (uri.scheme === 'sips' ? 5061 : 5060),
    };
  }
}

export function dialogKey(callId: string, localTag: string, remoteTag: string): string {
  return `${callId}|${localTag}|${remoteTag}`;
}

function firstContactUri(message: SipRequest | SipResponse): string | undefined {
  const value = message.headers.getAll('Contact')[0];
  if (value === undefined || value.trim() === '*') {
    return undefined;
  }
  const contact = parseNameAddr(value);
  return contact === null ? undefined : routeUri(value);
}

/** The URI inside a Route/Record-Route/Contact value, as written. */
function routeUri(value: string): string {
  const open = value.indexOf('<');
  const close = value.indexOf('>', open + 1);
  if (open >= 0 && close > open) {
    return value.slice(open + 1, close);
  }
  return value.split(';')[0]!.trim();
}

function isLooseRoute(uri: ReturnType<typeof parseUri>): boolean {
  return uri !== null && isSipUri(uri) && uri.params.has('lr');
}
