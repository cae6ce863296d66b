import { SipHeaders } from './headers.js';
import { MAX_CSEQ, parseCSeq, type SipMessage } from './message.js';
import { parseNameAddr } from './name-addr.js';
import { isCallId, isToken, parseDigits } from './syntax.js';
import { parseUri, isSipUri } from './uri.js';
import { parseVia } from './via.js';

export interface SipParseLimits {
  /** Start line, headers and body together. */
  readonly maxMessageBytes: number;
  readonly maxHeaderCount: number;
  /** One header field after unfolding, or the start line. */
  readonly maxLineChars: number;
}

export const DEFAULT_SIP_LIMITS: SipParseLimits = {
  maxMessageBytes: 65_535,
  maxHeaderCount: 256,
  maxLineChars: 8_192,
};

export type SipParseErrorCode =
  | 'SIP_EMPTY'
  | 'SIP_MESSAGE_TOO_LARGE'
  | 'SIP_LINE_TOO_LONG'
  | 'SIP_TOO_MANY_HEADERS'
  | 'SIP_NO_HEADER_END'
  | 'SIP_BAD_START_LINE'
  | 'SIP_BAD_VERSION'
  | 'SIP_BAD_HEADER'
  | 'SIP_MISSING_HEADER'
  | 'SIP_BAD_CONTENT_LENGTH'
  | 'SIP_BODY_TRUNCATED'
  | 'SIP_CSEQ_MISMATCH';

/** What a server needs to answer a request it could not accept (§8.2.6, §18.3). */
export interface SipReplyBasis {
  /** 400, 505 (a SIP version other than 2.0) or 513 (too large). */
  readonly status: 400 | 505 | 513;
  /** The request's header fields as far as they parsed; the top Via is known to be valid. */
  readonly headers: SipHeaders;
}

export interface SipParseFailure {
  readonly ok: false;
  readonly code: SipParseErrorCode;
  readonly reason: string;
  readonly reply?: SipReplyBasis;
}

export type SipParseResult = { readonly ok: true; readonly message: SipMessage } | SipParseFailure;

export interface SipParseOptions {
  /**
   * True for stream transports (TCP), where Content-Length is required; over datagrams a
   * missing Content-Length means the rest of the datagram (§18.3).
   */
  readonly stream?: boolean;
  readonly limits?: SipParseLimits;
}

const HEADER_END = Buffer.from('\r\n\r\n');
const METHOD_RE = /^[A-Za-z0-9\-.!%*_+`'~]+$/;
const VERSION_RE = /^SIP\/([0-9]+)\.([0-9]+)$/i;
/** Header fields that may appear once (§7.3.1, §20). */
const SINGLE = ['From', 'To', 'Call-ID', 'CSeq', 'Max-Forwards', 'Content-Type'];

class ParseError extends Error {
  constructor(
    readonly code: SipParseErrorCode,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/**
 * Parses one SIP message. It never throws: every problem comes back as a stable code, with the
 * basis of a 400 (or 505) response when the message is a request whose top Via parsed.
 */
export function parseSipMessage(data: Buffer, options: SipParseOptions = {}): SipParseResult {
  const limits = options.limits ?? DEFAULT_SIP_LIMITS;
  let start = 0;
  while (data.length >= start + 2 && data[start] === 0x0d && data[start + 1] === 0x0a) {
    start += 2;
  }
  if (start >= data.length) {
    return failure(new ParseError('SIP_EMPTY', 'no message, only line breaks'));
  }
  if (data.length > limits.maxMessageBytes) {
    return tooLarge(data, start, limits);
  }
  const headerEnd = data.indexOf(HEADER_END, start);
  if (headerEnd < 0) {
    return failure(new ParseError('SIP_NO_HEADER_END', 'the header section does not end'));
  }
  const lines = data.toString('utf8', start, headerEnd).split('\r\n');
  let replyHeaders: SipHeaders | undefined;
  try {
    const startLine = lines[0]!;
    const headers = parseHeaderLines(lines, limits);
    if (!startLine.startsWith('SIP/') && hasValidTopVia(headers)) {
      replyHeaders = headers;
    }
    const head = parseStartLine(startLine, limits);
    checkHeaders(headers, head.kind === 'request' ? head.method : undefined, limits);
    const body = readBody(data, headerEnd + HEADER_END.length, headers, options.stream === true);
    const message: SipMessage =
      head.kind === 'request'
        ? { kind: 'request', method: head.method, uri: head.uri, headers, body }
        : { kind: 'response', status: head.status, reason: head.reason, headers, body };
    return { ok: true, message };
  } catch (error) {
    if (!(error instanceof ParseError)) {
      return failure(new ParseError('SIP_BAD_HEADER', 'unparseable message'));
    }
    if (replyHeaders === undefined && !lines[0]!.startsWith('SIP/')) {
      // A broken header line: salvage the others to answer with (§8.2.6 needs only a few).
      const salvaged = parseHeaderLines(lines, limits, true);
      replyHeaders = hasValidTopVia(salvaged) ? salvaged : undefined;
    }
    return failure(error, replyHeaders);
  }
}

/** A 513 when the header section alone fits the limit and names a valid top Via. */
function tooLarge(data: Buffer, start: number, limits: SipParseLimits): SipParseFailure {
  const error = new ParseError('SIP_MESSAGE_TOO_LARGE', `over ${limits.maxMessageBytes} bytes`);
  const headerEnd = data.subarray(0, limits.maxMessageBytes).indexOf(HEADER_END, start);
  if (headerEnd < 0) {
    return failure(error);
  }
  const lines = data.toString('utf8', start, headerEnd).split('\r\n');
  const headers = parseHeaderLines(lines, limits, true);
  const answerable = !lines[0]!.startsWith('SIP/') && hasValidTopVia(headers);
  return failure(error, answerable ? headers : undefined);
}

function failure(error: ParseError, headers?: SipHeaders): SipParseFailure {
  if (headers === undefined) {
    return { ok: false, code: error.code, reason: error.reason };
  }
  const status =
    error.code === 'SIP_BAD_VERSION' ? 505 : error.code === 'SIP_MESSAGE_TOO_LARGE' ? 513 : 400;
  return { ok: false, code: error.code, reason: error.reason, reply: { status, headers } };
}

type StartLine =
  | { kind: 'request'; method: string; uri: string }
  | { kind: 'response'; status: number; reason: string };

function parseStartLine(line: string, limits: SipParseLimits): StartLine {
  if (line.length > limits.maxLineChars) {
    throw new ParseError('SIP_LINE_TOO_LONG', 'start line too long');
  }
  if (line.startsWith('SIP/')) {
    const match = /^(SIP\/[0-9]+\.[0-9]+) ([0-9]{3})(?: (.*))?$/.exec(line);
    if (match === null) {
      throw new ParseError('SIP_BAD_START_LINE', 'malformed status line');
    }
    checkVersion(match[1]!);
    const status = Number(match[2]);
    if (status < 100 || status > 699) {
      throw new ParseError('SIP_BAD_START_LINE', `status code ${status} out of range`);
    }
    return { kind: 'response', status, reason: match[3] ?? '' };
  }
  // Request-Line = Method SP Request-URI SP SIP-Version, single spaces only (RFC 4475 §3.1.2.9).
  const parts = line.split(' ');
  if (parts.length !== 3 || !METHOD_RE.test(parts[0]!)) {
    throw new ParseError('SIP_BAD_START_LINE', 'malformed request line');
  }
  const [method, uriText, version] = parts as [string, string, string];
  checkVersion(version);
  const uri = parseUri(uriText);
  if (uri === null) {
    throw new ParseError('SIP_BAD_START_LINE', 'malformed Request-URI');
  }
  if (isSipUri(uri) && uri.headers !== undefined) {
    throw new ParseError('SIP_BAD_START_LINE', 'headers are not allowed in a Request-URI');
  }
  return { kind: 'request', method, uri: uriText };
}

function checkVersion(version: string): void {
  const match = VERSION_RE.exec(version);
  if (match === null) {
    throw new ParseError('SIP_BAD_START_LINE', 'malformed SIP version');
  }
  if (Number(match[1]) !== 2 || Number(match[2]) !== 0) {
    throw new ParseError('SIP_BAD_VERSION', `unsupported version ${version}`);
  }
}

/** Unfolds continuation lines (LWS at a line's start) and splits each field at its colon. */
/**
 * Unfolds continuation lines (LWS at a line's start) and splits each field at its colon. A
 * lenient pass skips broken lines instead of failing, to salvage what a 400 needs.
 */
function parseHeaderLines(lines: string[], limits: SipParseLimits, lenient = false): SipHeaders {
  const fields: [string, string][] = [];
  let skipping = false;
  const fail = (error: ParseError) => {
    if (!lenient) {
      throw error;
    }
    skipping = true;
  };
  for (let index = 1; index < lines.length && fields.length <= limits.maxHeaderCount; index++) {
    const line = lines[index]!;
    if (line.length > limits.maxLineChars) {
      fail(new ParseError('SIP_LINE_TOO_LONG', `header line ${index} too long`));
      continue;
    }
    if (/[\r\n]/.test(line)) {
      fail(new ParseError('SIP_BAD_HEADER', `bare CR or LF in header line ${index}`));
      continue;
    }
    const last = fields[fields.length - 1];
    if (line.startsWith(' ') || line.startsWith('\t')) {
      if (last === undefined) {
        fail(new ParseError('SIP_BAD_HEADER', 'continuation line before any header'));
      } else if (!skipping) {
        last[1] = `${last[1]} ${line.trim()}`;
        if (last[1].length > limits.maxLineChars) {
          fail(new ParseError('SIP_LINE_TOO_LONG', `header ${last[0]} too long`));
        }
      }
      continue;
    }
    skipping = false;
    const colon = line.indexOf(':');
    const name = colon < 0 ? '' : line.slice(0, colon).trimEnd();
    if (!isToken(name)) {
      fail(new ParseError('SIP_BAD_HEADER', `malformed header line ${index}`));
      continue;
    }
    if (fields.length >= limits.maxHeaderCount) {
      fail(new ParseError('SIP_TOO_MANY_HEADERS', `more than ${limits.maxHeaderCount} headers`));
      break;
    }
    fields.push([name, line.slice(colon + 1)]);
  }
  return new SipHeaders(fields);
}

function hasValidTopVia(headers: SipHeaders): boolean {
  const top = headers.getAll('Via')[0];
  return top !== undefined && parseVia(top) !== null;
}

function checkHeaders(headers: SipHeaders, method: string | undefined, limits: SipParseLimits) {
  for (const name of ['Via', 'From', 'To', 'Call-ID', 'CSeq']) {
    if (!headers.has(name)) {
      throw new ParseError('SIP_MISSING_HEADER', `no ${name} header`);
    }
  }
  for (const name of SINGLE) {
    if (headers.getAll(name).length > 1) {
      throw new ParseError('SIP_BAD_HEADER', `more than one ${name} header`);
    }
  }
  for (const value of headers.getAll('Via')) {
    if (parseVia(value) === null) {
      throw new ParseError('SIP_BAD_HEADER', 'malformed Via');
    }
  }
  for (const name of ['From', 'To']) {
    if (parseNameAddr(headers.get(name)!) === null) {
      throw new ParseError('SIP_BAD_HEADER', `malformed ${name}`);
    }
  }
  for (const name of ['Contact', 'Route', 'Record-Route']) {
    for (const value of headers.getAll(name)) {
      if (!(name === 'Contact' && value === '*') && parseNameAddr(value) === null) {
        throw new ParseError('SIP_BAD_HEADER', `malformed ${name}`);
      }
    }
  }
  if (!isCallId(headers.get('Call-ID')!)) {
    throw new ParseError('SIP_BAD_HEADER', 'malformed Call-ID');
  }
  const cseq = parseCSeq(headers.get('CSeq')!);
  if (cseq === null) {
    throw new ParseError('SIP_BAD_HEADER', `malformed CSeq (numbers stop at ${MAX_CSEQ})`);
  }
  if (method !== undefined && cseq.method !== method) {
    throw new ParseError('SIP_CSEQ_MISMATCH', 'the CSeq method differs from the request method');
  }
  const maxForwards = headers.get('Max-Forwards');
  if (maxForwards !== undefined && parseDigits(maxForwards, 255) === null) {
    throw new ParseError('SIP_BAD_HEADER', 'Max-Forwards must be 0 to 255');
  }
  const lengths = new Set(headers.getAll('Content-Length'));
  if (lengths.size > 1) {
    throw new ParseError('SIP_BAD_CONTENT_LENGTH', 'conflicting Content-Length headers');
  }
  const length = headers.get('Content-Length');
  if (length !== undefined && parseDigits(length, limits.maxMessageBytes) === null) {
    throw new ParseError('SIP_BAD_CONTENT_LENGTH', `malformed Content-Length ${length}`);
  }
}

function readBody(data: Buffer, offset: number, headers: SipHeaders, stream: boolean): Buffer {
  const available = data.length - offset;
  const length = headers.get('Content-Length');
  if (length === undefined) {
    if (stream) {
      throw new ParseError('SIP_BAD_CONTENT_LENGTH', 'Content-Length is required over TCP');
    }
    return Buffer.from(data.subarray(offset));
  }
  const bodyBytes = Number(length);
  if (bodyBytes > available) {
    throw new ParseError('SIP_BODY_TRUNCATED', `body of ${available} bytes, ${bodyBytes} declared`);
  }
  // Extra bytes after the declared body in a datagram are discarded (RFC 4475 §3.1.1.8).
  return Buffer.from(data.subarray(offset, offset + bodyBytes));
}
