import { SipHeaders } from './headers.js';
import { parseNameAddr, tagOf, type NameAddr } from './name-addr.js';
import { parseDigits } from './syntax.js';
import { parseVia, type Via } from './via.js';

/**
 * The SIP message model: a start line, header fields and a body. The header fields are the
 * source of truth; the accessors below parse the ones the transaction layer needs. The parser
 * checks all of them, so on a parsed message they never return undefined for a required field.
 */
export interface SipRequest {
  readonly kind: 'request';
  readonly method: string;
  /** The Request-URI as written. */
  readonly uri: string;
  readonly headers: SipHeaders;
  readonly body: Buffer;
}

export interface SipResponse {
  readonly kind: 'response';
  readonly status: number;
  readonly reason: string;
  readonly headers: SipHeaders;
  readonly body: Buffer;
}

export type SipMessage = SipRequest | SipResponse;

export interface CSeq {
  readonly seq: number;
  readonly method: string;
}

/** CSeq numbers are below 2^31 (§8.1.1.5). */
export const MAX_CSEQ = 2 ** 31 - 1;

export function parseCSeq(text: string): CSeq | null {
  const match = /^([0-9]+)[ \t]+([A-Za-z0-9\-.!%*_+`'~]+)$/.exec(text.trim());
  if (match === null) {
    return null;
  }
  const seq = parseDigits(match[1]!, MAX_CSEQ);
  return seq === null ? null : { seq, method: match[2]! };
}

export function getCSeq(message: SipMessage): CSeq | undefined {
  const value = message.headers.get('CSeq');
  return value === undefined ? undefined : (parseCSeq(value) ?? undefined);
}

export function getTopVia(message: SipMessage): Via | undefined {
  const value = message.headers.getAll('Via')[0];
  return value === undefined ? undefined : (parseVia(value) ?? undefined);
}

export function getCallId(message: SipMessage): string | undefined {
  return message.headers.get('Call-ID');
}

export function getFrom(message: SipMessage): NameAddr | undefined {
  const value = message.headers.get('From');
  return value === undefined ? undefined : (parseNameAddr(value) ?? undefined);
}

export function getTo(message: SipMessage): NameAddr | undefined {
  const value = message.headers.get('To');
  return value === undefined ? undefined : (parseNameAddr(value) ?? undefined);
}

export function getToTag(message: SipMessage): string | undefined {
  const to = getTo(message);
  return to === undefined ? undefined : tagOf(to);
}

export function getFromTag(message: SipMessage): string | undefined {
  const from = getFrom(message);
  return from === undefined ? undefined : tagOf(from);
}

const REASON_PHRASES: Record<number, string> = {
  100: 'Trying',
  180: 'Ringing',
  181: 'Call Is Being Forwarded',
  182: 'Queued',
  183: 'Session Progress',
  200: 'OK',
  202: 'Accepted',
  300: 'Multiple Choices',
  301: 'Moved Permanently',
  302: 'Moved Temporarily',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  407: 'Proxy Authentication Required',
  408: 'Request Timeout',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  416: 'Unsupported URI Scheme',
  420: 'Bad Extension',
  422: 'Session Interval Too Small',
  480: 'Temporarily Unavailable',
  481: 'Call/Transaction Does Not Exist',
  482: 'Loop Detected',
  483: 'Too Many Hops',
  484: 'Address Incomplete',
  486: 'Busy Here',
  487: 'Request Terminated',
  488: 'Not Acceptable Here',
  491: 'Request Pending',
  500: 'Server Internal Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  504: 'Server Time-out',
  505: 'Version Not Supported',
  513: 'Message Too Large',
  600: 'Busy Everywhere',
  603: 'Decline',
};

export function reasonPhrase(status: number): string {
  return REASON_PHRASES[status] ?? (status < 200 ? 'Progress' : 'Unknown');
}

/** The header fields a response copies from its request (§8.2.6.2). */
const COPIED = ['Via', 'From', 'To', 'Call-ID', 'CSeq'];

/**
 * A response to `request` (§8.2.6): Via, From, To, Call-ID and CSeq copied, a To tag added
 * when `toTag` is given and the To has none (never on 100 Trying), and an empty body.
 */
export function createResponse(
  request: Pick<SipRequest, 'headers'>,
  status: number,
  options: { reason?: string; toTag?: string } = {},
): SipResponse {
  const headers = new SipHeaders();
  for (const name of COPIED) {
    for (const field of request.headers.entries()) {
      if (field.name === name) {
        headers.append(field.name, field.value);
      }
    }
  }
  const to = headers.get('To');
  if (
    options.toTag !== undefined &&
    status !== 100 &&
    to !== undefined &&
    !/;\s*tag\s*=/i.test(to)
  ) {
    headers.set('To', `${to};tag=${options.toTag}`);
  }
  return {
    kind: 'response',
    status,
    reason: options.reason ?? reasonPhrase(status),
    headers,
    body: Buffer.alloc(0),
  };
}
