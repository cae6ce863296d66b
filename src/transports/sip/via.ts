import { formatParams, parseParams, type SipParams } from './params.js';
import { isIPv4, isToken, parseDigits, parseHostPort } from './syntax.js';

/** The branch prefix of RFC 3261 transactions (§8.1.1.7). */
export const MAGIC_COOKIE = 'z9hG4bK';

/** One Via value: `SIP/2.0/UDP host:port;branch=…;received=…;rport=…`. */
export interface Via {
  /** Upper-cased transport token: UDP, TCP, TLS, SCTP, WS or any extension. */
  readonly transport: string;
  readonly host: string;
  readonly port?: number;
  readonly params: SipParams;
}

/** sent-protocol = protocol-name SLASH protocol-version SLASH transport, each a token. */
const SENT_PROTOCOL_RE =
  /^[A-Za-z0-9\-.!%*_+`'~]+\s*\/\s*[A-Za-z0-9\-.!%*_+`'~]+\s*\/\s*([A-Za-z0-9\-.!%*_+`'~]+)\s*/;

export function parseVia(text: string): Via | null {
  const trimmed = text.trim();
  const protocol = SENT_PROTOCOL_RE.exec(trimmed);
  if (protocol === null || protocol[0] === trimmed || !/\s$/.test(protocol[0])) {
    return null;
  }
  const rest = trimmed.slice(protocol[0].length);
  const semicolon = rest.indexOf(';');
  const sentBy = (semicolon < 0 ? rest : rest.slice(0, semicolon)).trim().replace(/\s*:\s*/, ':');
  const hostPort = parseHostPort(sentBy);
  if (hostPort === null) {
    return null;
  }
  const params =
    semicolon < 0 ? new Map<string, string | null>() : parseParams(rest.slice(semicolon + 1));
  if (params === null || !validViaParams(params)) {
    return null;
  }
  return {
    transport: protocol[1]!.toUpperCase(),
    host: hostPort.host,
    ...(hostPort.port !== undefined && { port: hostPort.port }),
    params,
  };
}

function validViaParams(params: SipParams): boolean {
  const branch = params.get('branch');
  if (branch !== undefined && (branch === null || !isToken(branch))) {
    return false;
  }
  const received = params.get('received');
  if (received !== undefined && (received === null || !isAddress(received))) {
    return false;
  }
  const rport = params.get('rport');
  if (rport !== undefined && rport !== null && parseDigits(rport, 65535) === null) {
    return false;
  }
  const ttl = params.get('ttl');
  return ttl === undefined || (ttl !== null && parseDigits(ttl, 255) !== null);
}

function isAddress(text: string): boolean {
  return isIPv4(text) || /^\[?[0-9A-Fa-f:.]+\]?$/.test(text);
}

export function formatVia(via: Via): string {
  const port = via.port === undefined ? '' : `:${via.port}`;
  return `SIP/2.0/${via.transport} ${via.host}${port}${formatParams(via.params)}`;
}

export function viaBranch(via: Via): string | undefined {
  return via.params.get('branch') ?? undefined;
}

/** `host:port` as written in the Via, with the transport's default port when it is absent. */
export function viaSentBy(via: Via): string {
  return `${via.host.toLowerCase()}:${via.port ?? defaultPort(via.transport)}`;
}

export function defaultPort(transport: string): number {
  return transport === 'TLS' ? 5061 : 5060;
}

/** A fresh RFC 3261 branch: the magic cookie and 96 random bits. */
export function newBranch(): string {
  const random = new Uint8Array(12);
  crypto.getRandomValues(random);
  return MAGIC_COOKIE + Buffer.from(random).toString('base64url');
}
