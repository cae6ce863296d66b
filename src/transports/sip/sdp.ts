/**
 * SDP (RFC 4566): a session description as ordered lines, with the fields offer/answer needs
 * parsed. Lines the model does not name (i, u, e, p, b, r, z, k) are kept in order and written
 * back unchanged.
 */
export interface SdpOrigin {
  readonly username: string;
  readonly sessionId: string;
  readonly sessionVersion: string;
  readonly netType: string;
  readonly addrType: string;
  readonly address: string;
}

export interface SdpConnection {
  readonly netType: string;
  /** IP4 or IP6. */
  readonly addrType: string;
  readonly address: string;
}

export interface SdpAttribute {
  readonly name: string;
  /** null for a property attribute such as `a=sendrecv`. */
  readonly value: string | null;
}

export interface SdpMedia {
  readonly type: string;
  readonly port: number;
  readonly portCount?: number;
  /** RTP/AVP, RTP/SAVP, … */
  readonly protocol: string;
  /** Payload type numbers for RTP profiles, as text. */
  readonly formats: readonly string[];
  readonly connection?: SdpConnection;
  readonly attributes: readonly SdpAttribute[];
  /** Other lines of the section (i=, b=, k=) as `x=value`. */
  readonly otherLines: readonly string[];
}

export interface SdpSession {
  readonly origin: SdpOrigin;
  readonly sessionName: string;
  readonly connection?: SdpConnection;
  /** t= lines as written, usually `0 0`. */
  readonly timing: readonly string[];
  readonly attributes: readonly SdpAttribute[];
  readonly otherLines: readonly string[];
  readonly media: readonly SdpMedia[];
}

export type SdpErrorCode = 'SDP_TOO_LARGE' | 'SDP_BAD_LINE' | 'SDP_MISSING_FIELD' | 'SDP_BAD_FIELD';

export type SdpParseResult =
  | { readonly ok: true; readonly session: SdpSession }
  | { readonly ok: false; readonly code: SdpErrorCode; readonly reason: string };

export const SDP_LIMITS = { maxBytes: 16_384, maxLines: 512, maxMedia: 16 } as const;

class SdpError extends Error {
  constructor(
    readonly code: SdpErrorCode,
    readonly reason: string,
  ) {
    super(reason);
  }
}

const NUMBER_RE = /^[0-9]{1,10}$/;

/** Parses an SDP body; never throws. CRLF line ends, bare LF tolerated (RFC 4566 §5). */
export function parseSdp(text: string): SdpParseResult {
  if (text.length > SDP_LIMITS.maxBytes) {
    return { ok: false, code: 'SDP_TOO_LARGE', reason: `over ${SDP_LIMITS.maxBytes} bytes` };
  }
  const lines = text.split(/\r?\n/).filter((line) => line !== '');
  if (lines.length > SDP_LIMITS.maxLines) {
    return { ok: false, code: 'SDP_TOO_LARGE', reason: `over ${SDP_LIMITS.maxLines} lines` };
  }
  try {
    return { ok: true, session: parseLines(lines) };
  } catch (error) {
    if (error instanceof SdpError) {
      return { ok: false, code: error.code, reason: error.reason };
    }
    return { ok: false, code: 'SDP_BAD_LINE', reason: 'unparseable SDP' };
  }
}

interface MutableMedia {
  type: string;
  port: number;
  portCount?: number;
  protocol: string;
  formats: string[];
  connection?: SdpConnection;
  attributes: SdpAttribute[];
  otherLines: string[];
}

function parseLines(lines: string[]): SdpSession {
  if (lines[0] !== 'v=0') {
    throw new SdpError('SDP_MISSING_FIELD', 'an SDP starts with v=0');
  }
  let origin: SdpOrigin | undefined;
  let sessionName: string | undefined;
  let connection: SdpConnection | undefined;
  const timing: string[] = [];
  const attributes: SdpAttribute[] = [];
  const otherLines: string[] = [];
  const media: MutableMedia[] = [];
  for (const line of lines.slice(1)) {
    if (!/^[a-z]=/.test(line)) {
      throw new SdpError('SDP_BAD_LINE', `malformed line ${JSON.stringify(line.slice(0, 40))}`);
    }
    const type = line[0]!;
    const value = line.slice(2);
    const current = media[media.length - 1];
    if (type === 'm') {
      if (media.length >= SDP_LIMITS.maxMedia) {
        throw new SdpError('SDP_TOO_LARGE', `over ${SDP_LIMITS.maxMedia} media sections`);
      }
      media.push(parseMediaLine(value));
    } else if (type === 'a') {
      (current?.attributes ?? attributes).push(parseAttribute(value));
    } else if (type === 'c') {
      const parsed = parseConnection(value);
      if (current === undefined) {
        connection = parsed;
      } else {
        current.connection = parsed;
      }
    } else if (current !== undefined) {
      current.otherLines.push(line);
    } else if (type === 'o') {
      origin = parseOrigin(value);
    } else if (type === 's') {
      sessionName = value;
    } else if (type === 't') {
      timing.push(value);
    } else {
      otherLines.push(line);
    }
  }
  if (origin === undefined || sessionName === undefined) {
    throw new SdpError('SDP_MISSING_FIELD', 'o= and s= are required');
  }
  for (const section of media) {
    if (section.connection === undefined && connection === undefined && section.port !== 0) {
      throw new SdpError('SDP_MISSING_FIELD', 'a media section has no connection address');
    }
  }
  return {
    origin,
    sessionName,
    ...(connection !== undefined && { connection }),
    timing,
    attributes,
    otherLines,
    media,
  };
}

function parseOrigin(value: string): SdpOrigin {
  const parts = value.split(' ');
  if (parts.length !== 6 || parts.some((part) => part === '')) {
    throw new SdpError('SDP_BAD_FIELD', 'o= needs six fields');
  }
  const [username, sessionId, sessionVersion, netType, addrType, address] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  return { username, sessionId, sessionVersion, netType, addrType, address };
}

function parseConnection(value: string): SdpConnection {
  const parts = value.split(' ');
  if (parts.length !== 3 || parts[0] !== 'IN' || (parts[1] !== 'IP4' && parts[1] !== 'IP6')) {
    throw new SdpError('SDP_BAD_FIELD', `unsupported c=${value}`);
  }
  // Multicast "/ttl" suffixes are dropped: calls use unicast addresses.
  return { netType: 'IN', addrType: parts[1], address: parts[2]!.split('/')[0]! };
}

function parseMediaLine(value: string): MutableMedia {
  const parts = value.split(' ');
  if (parts.length < 4 || parts.slice(3).some((format) => format === '')) {
    throw new SdpError('SDP_BAD_FIELD', `malformed m=${value.slice(0, 40)}`);
  }
  const [type, portText, protocol] = parts as [string, string, string];
  const [port, count] = portText.split('/');
  if (
    !NUMBER_RE.test(port!) ||
    Number(port) > 65535 ||
    (count !== undefined && !NUMBER_RE.test(count))
  ) {
    throw new SdpError('SDP_BAD_FIELD', `bad media port ${portText}`);
  }
  const isRtp = protocol.startsWith('RTP/');
  const formats = parts.slice(3);
  if (isRtp && formats.some((format) => !/^[0-9]{1,3}$/.test(format) || Number(format) > 127)) {
    throw new SdpError('SDP_BAD_FIELD', 'RTP payload types are 0 to 127');
  }
  return {
    type,
    port: Number(port),
    ...(count !== undefined && { portCount: Number(count) }),
    protocol,
    formats,
    attributes: [],
    otherLines: [],
  };
}

function parseAttribute(value: string): SdpAttribute {
  const colon = value.indexOf(':');
  const name = colon < 0 ? value : value.slice(0, colon);
  if (!/^[A-Za-z0-9\-_.!%*+`'~]+$/.test(name)) {
    throw new SdpError('SDP_BAD_FIELD', `malformed attribute ${value.slice(0, 40)}`);
  }
  return { name, value: colon < 0 ? null : value.slice(colon + 1) };
}

export function serializeSdp(session: SdpSession): string {
  const o = session.origin;
  const lines = [
    'v=0',
    `o=${o.username} ${o.sessionId} ${o.sessionVersion} ${o.netType} ${o.addrType} ${o.address}`,
    `s=${session.sessionName}`,
  ];
  // RFC 4566 §5 order: i u e p, then c, b, t, then r z k (and unknown letters), then a.
  const other = (letters: string) =>
    session.otherLines.filter((line) => letters.includes(line[0]!));
  lines.push(...other('iuep'));
  if (session.connection !== undefined) {
    lines.push(formatConnection(session.connection));
  }
  lines.push(...other('b'));
  lines.push(...(session.timing.length === 0 ? ['0 0'] : session.timing).map((t) => `t=${t}`));
  lines.push(...session.otherLines.filter((line) => !'iuepb'.includes(line[0]!)));
  lines.push(...session.attributes.map(formatAttribute));
  for (const media of session.media) {
    const port =
      media.portCount === undefined ? `${media.port}` : `${media.port}/${media.portCount}`;
    lines.push(`m=${media.type} ${port} ${media.protocol} ${media.formats.join(' ')}`);
    lines.push(...media.otherLines.filter((line) => line.startsWith('i=')));
    if (media.connection !== undefined) {
      lines.push(formatConnection(media.connection));
    }
    lines.push(...media.otherLines.filter((line) => !line.startsWith('i=')));
    lines.push(...media.attributes.map(formatAttribute));
  }
  return `${lines.join('\r\n')}\r\n`;
}

function formatConnection(connection: SdpConnection): string {
  return `c=${connection.netType} ${connection.addrType} ${connection.address}`;
}

function formatAttribute(attribute: SdpAttribute): string {
  return attribute.value === null
    ? `a=${attribute.name}`
    : `a=${attribute.name}:${attribute.value}`;
}

export type SdpDirection = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';
const DIRECTIONS: readonly string[] = ['sendrecv', 'sendonly', 'recvonly', 'inactive'];

/** The media section's direction, falling back to the session's, then sendrecv (RFC 3264 §5.1). */
export function mediaDirection(session: SdpSession, media: SdpMedia): SdpDirection {
  const own = media.attributes.find((attribute) => DIRECTIONS.includes(attribute.name));
  const shared = session.attributes.find((attribute) => DIRECTIONS.includes(attribute.name));
  return ((own ?? shared)?.name as SdpDirection | undefined) ?? 'sendrecv';
}

export function attributeValue(media: SdpMedia, name: string): string | undefined {
  const found = media.attributes.find((attribute) => attribute.name === name);
  return found?.value ?? undefined;
}
