import { createResponse, type SipMessage, type SipRequest } from './message.js';
import { parseSipMessage, type SipParseLimits, type SipParseFailure } from './parser.js';
import { quote, sipHost, socketAddress } from './syntax.js';
import { defaultPort, formatVia, parseVia, type Via } from './via.js';

export type SipTransportName = 'UDP' | 'TCP';

/** Where a message goes: an address and port, and for TCP the connection it arrived on. */
export interface SipTarget {
  readonly address: string;
  readonly port: number;
  readonly connectionId?: number;
}

/** Where a message came from. */
export interface SipSource extends SipTarget {
  readonly transport: SipTransportName;
}

export interface SipTransport {
  readonly name: SipTransportName;
  /** True for TCP: no retransmissions, no timer waits for stray copies. */
  readonly reliable: boolean;
  /** The host and port this transport puts in Via sent-by and Contact. */
  readonly sentBy: { readonly host: string; readonly port: number };
  send(message: SipMessage, target: SipTarget, onError?: (error: Error) => void): void;
  close(): Promise<void>;
}

export type SipMessageHandler = (message: SipMessage, source: SipSource) => void;

/** Counters a transport keeps; read them for metrics and tests. */
export interface SipTransportStats {
  messagesIn: number;
  messagesOut: number;
  /** Messages the parser refused. */
  parseErrors: number;
  /** Of those, the ones answered with 400/505/513. */
  rejectionsAnswered: number;
  /** Keep-alive CRLFs received. */
  keepAlives: number;
}

export function newTransportStats(): SipTransportStats {
  return { messagesIn: 0, messagesOut: 0, parseErrors: 0, rejectionsAnswered: 0, keepAlives: 0 };
}

export interface InboundOptions {
  readonly limits?: SipParseLimits;
  readonly stream: boolean;
  readonly handler: SipMessageHandler;
  readonly transport: SipTransport;
  readonly stats: SipTransportStats;
  /** Sends a rejection straight back (on the same connection for TCP). */
  readonly reply: (message: SipMessage, target: SipTarget) => void;
}

/**
 * Parses one message's bytes and hands it on: requests get received/rport stamped on their
 * top Via; a request that cannot be accepted but can be answered gets its 400 (or 505/513);
 * anything else is dropped. Returns the failure, if any, for the caller's accounting.
 */
export function handleInbound(
  data: Buffer,
  source: SipSource,
  options: InboundOptions,
): SipParseFailure | undefined {
  const result = parseSipMessage(data, {
    stream: options.stream,
    ...(options.limits !== undefined && { limits: options.limits }),
  });
  if (!result.ok) {
    if (result.code === 'SIP_EMPTY') {
      options.stats.keepAlives++;
      return undefined;
    }
    options.stats.parseErrors++;
    if (result.reply !== undefined) {
      const request = { headers: result.reply.headers.clone() };
      stampReceived(request, source);
      const response = createResponse(request, result.reply.status);
      const host = options.transport.sentBy.host;
      response.headers.append('Warning', `399 ${host} ${quote(result.reason)}`);
      options.stats.rejectionsAnswered++;
      options.reply(response, responseTarget(request, source));
    }
    return result;
  }
  options.stats.messagesIn++;
  const message = result.message;
  if (message.kind === 'request') {
    stampReceived(message, source);
  }
  options.handler(message, source);
  return undefined;
}

/**
 * §18.2.1 and RFC 3581: a request whose top Via names a host other than the packet's source
 * address gets `received=<source address>`; a Via asking for `rport` gets the source port
 * (and `received` always).
 */
export function stampReceived(request: Pick<SipRequest, 'headers'>, source: SipTarget): void {
  const top = request.headers.getAll('Via')[0];
  const via = top === undefined ? null : parseVia(top);
  if (via === null) {
    return;
  }
  const params = new Map(via.params);
  const sourceHost = sipHost(source.address);
  const wantsRport = params.has('rport');
  if (wantsRport || socketAddress(via.host).toLowerCase() !== source.address.toLowerCase()) {
    params.set('received', sourceHost);
  }
  if (wantsRport) {
    params.set('rport', String(source.port));
  }
  request.headers.replaceFirst('Via', formatVia({ ...via, params }));
}

/**
 * §18.2.2 and RFC 3581: where to send a response. Over TCP the connection the request came
 * on; otherwise the `received` address (or the sent-by host when absent) and the `rport`
 * (or the sent-by port, or the transport's default).
 */
export function responseTarget(
  request: Pick<SipRequest, 'headers'>,
  source?: SipSource,
): SipTarget {
  const top = request.headers.getAll('Via')[0];
  const via: Via | null = top === undefined ? null : parseVia(top);
  if (via === null) {
    if (source === undefined) {
      throw new Error('a response needs a top Via or a source to go to');
    }
    return source;
  }
  const received = via.params.get('received');
  const rport = via.params.get('rport');
  const address = socketAddress(received ?? via.host);
  const port =
    rport !== undefined && rport !== null
      ? Number(rport)
      : (via.port ?? defaultPort(via.transport));
  const target = { address, port };
  if (source?.connectionId !== undefined) {
    return { ...target, connectionId: source.connectionId };
  }
  return target;
}
