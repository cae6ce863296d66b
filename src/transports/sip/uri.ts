import { parseHostPort } from './syntax.js';

/**
 * A SIP or SIPS URI (RFC 3261 §19.1). Parts keep their escapes as written; `decodeUriPart`
 * resolves them for comparison or display. Parameter names are lower-cased.
 */
export interface SipUri {
  readonly scheme: 'sip' | 'sips';
  readonly user?: string;
  readonly password?: string;
  /** A hostname, an IPv4 address or a bracketed IPv6 reference. */
  readonly host: string;
  readonly port?: number;
  readonly params: ReadonlyMap<string, string | null>;
  /** The URI's `?` headers as written, without the `?`. */
  readonly headers?: string;
}

/** Any other absolute URI (tel:, urn:, …), kept as written. */
export interface OtherUri {
  readonly scheme: string;
  readonly opaque: string;
}

export type AnyUri = SipUri | OtherUri;

const SCHEME_RE = /^[A-Za-z][A-Za-z0-9+\-.]*$/;
/** user = 1*( unreserved / escaped / user-unreserved ) */
const USER_RE = /^([A-Za-z0-9\-_.!~*'()&=+$,;?/]|%[0-9A-Fa-f]{2})+$/;
/** password = *( unreserved / escaped / "&" / "=" / "+" / "$" / "," ) */
const PASSWORD_RE = /^([A-Za-z0-9\-_.!~*'()&=+$,]|%[0-9A-Fa-f]{2})*$/;
/** paramchar = param-unreserved / unreserved / escaped */
const PARAM_RE = /^([A-Za-z0-9\-_.!~*'()[\]/:&+$]|%[0-9A-Fa-f]{2})+$/;
/** hname "=" hvalue pairs joined by "&" */
const HEADERS_RE =
  /^([A-Za-z0-9\-_.!~*'()[\]/?:+$]|%[0-9A-Fa-f]{2})+=([A-Za-z0-9\-_.!~*'()[\]/?:+$]|%[0-9A-Fa-f]{2})*(&([A-Za-z0-9\-_.!~*'()[\]/?:+$]|%[0-9A-Fa-f]{2})+=([A-Za-z0-9\-_.!~*'()[\]/?:+$]|%[0-9A-Fa-f]{2})*)*$/;
/** Characters never allowed in an absolute URI. */
const OPAQUE_RE = /^[^\s<>"]+$/;

export function isSipUri(uri: AnyUri): uri is SipUri {
  return uri.scheme === 'sip' || uri.scheme === 'sips';
}

/** Parses an absolute URI; SIP and SIPS URIs are checked against the grammar. */
export function parseUri(text: string): AnyUri | null {
  const colon = text.indexOf(':');
  if (colon <= 0) {
    return null;
  }
  const scheme = text.slice(0, colon).toLowerCase();
  if (!SCHEME_RE.test(scheme)) {
    return null;
  }
  const rest = text.slice(colon + 1);
  if (scheme === 'sip' || scheme === 'sips') {
    return parseSipUri(scheme, rest);
  }
  return OPAQUE_RE.test(rest) ? { scheme, opaque: rest } : null;
}

function parseSipUri(scheme: 'sip' | 'sips', rest: string): SipUri | null {
  // The user part may hold ";", "?" and "/" (user-unreserved), so the first "@" splits it off.
  const at = rest.indexOf('@');
  let user: string | undefined;
  let password: string | undefined;
  if (at >= 0) {
    const userinfo = rest.slice(0, at);
    const colon = userinfo.indexOf(':');
    user = colon < 0 ? userinfo : userinfo.slice(0, colon);
    password = colon < 0 ? undefined : userinfo.slice(colon + 1);
    if (!USER_RE.test(user) || (password !== undefined && !PASSWORD_RE.test(password))) {
      return null;
    }
  }
  const hostPart = rest.slice(at + 1);
  const question = hostPart.indexOf('?');
  const beforeHeaders = question < 0 ? hostPart : hostPart.slice(0, question);
  const headers = question < 0 ? undefined : hostPart.slice(question + 1);
  if (headers !== undefined && !HEADERS_RE.test(headers)) {
    return null;
  }
  const pieces = beforeHeaders.split(';');
  const hostPort = parseHostPort(pieces[0]!);
  if (hostPort === null) {
    return null;
  }
  const params = new Map<string, string | null>();
  for (const piece of pieces.slice(1)) {
    const equals = piece.indexOf('=');
    const name = equals < 0 ? piece : piece.slice(0, equals);
    const value = equals < 0 ? null : piece.slice(equals + 1);
    if (!PARAM_RE.test(name) || (value !== null && !PARAM_RE.test(value))) {
      return null;
    }
    params.set(name.toLowerCase(), value);
  }
  return {
    scheme,
    ...(user !== undefined && { user }),
    ...(password !== undefined && { password }),
    host: hostPort.host,
    ...(hostPort.port !== undefined && { port: hostPort.port }),
    params,
    ...(headers !== undefined && { headers }),
  };
}

export function formatUri(uri: AnyUri): string {
  if (!isSipUri(uri)) {
    return `${uri.scheme}:${uri.opaque}`;
  }
  let text = `${uri.scheme}:`;
  if (uri.user !== undefined) {
    text += uri.password === undefined ? `${uri.user}@` : `${uri.user}:${uri.password}@`;
  }
  text += uri.host;
  if (uri.port !== undefined) {
    text += `:${uri.port}`;
  }
  for (const [name, value] of uri.params) {
    text += value === null ? `;${name}` : `;${name}=${value}`;
  }
  if (uri.headers !== undefined) {
    text += `?${uri.headers}`;
  }
  return text;
}

/** Resolves %HH escapes; malformed escapes are left as written. */
export function decodeUriPart(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/%([0-9A-Fa-f]{2})/g, (_match, hex: string) =>
      String.fromCharCode(parseInt(hex, 16)),
    );
  }
}
