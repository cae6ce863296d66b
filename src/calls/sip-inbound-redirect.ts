/**
 * Forwarding an inbound call before it is answered: a 302 Moved Temporarily whose Contact is
 * the transfer destination (RFC 3261 §21.3.3), which the trunk follows with a new INVITE. A
 * `number` destination is dialled through the trunk: `sip:<number>@<gateway>;user=phone`, with
 * its `extension` as RFC 3966 `;ext=` (digits only) or RFC 4715 `;postd=` (with pauses).
 */
import { isIPv6 } from 'node:net';
import type { Doc } from '../store/resource-store.js';
import { isSipUri, formatUri, parseUri } from '../transports/sip/uri.js';

const PHONE_USER_RE = /^\+?[0-9]+$/;
const LOOSE_USER_RE = /^\+?[A-Za-z0-9]+$/;
const EXTENSION_RE = /^[0-9wW#*]{1,10}$/;
const HEADER_NAME_RE = /^[A-Za-z0-9\-.!%*_+`'~]{1,64}$/;

function isObject(value: unknown): value is Doc {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The host:port of the trunk's first gateway that may carry outbound calls, if any. */
export function outboundGateway(trunk: Doc | null): string | undefined {
  const gateways = isObject(trunk) && Array.isArray(trunk.gateways) ? trunk.gateways : [];
  for (const gateway of gateways) {
    if (!isObject(gateway) || gateway.outboundEnabled === false) {
      continue;
    }
    if (typeof gateway.ip !== 'string' || gateway.ip === '') {
      continue;
    }
    const host = isIPv6(gateway.ip) ? `[${gateway.ip}]` : gateway.ip;
    return typeof gateway.port === 'number' ? `${host}:${gateway.port}` : host;
  }
  return undefined;
}

/** `sipHeaders` as URI headers, so the trunk copies them into the redirected INVITE. */
function uriHeaders(sipHeaders: unknown): string {
  if (!isObject(sipHeaders)) {
    return '';
  }
  const pairs: string[] = [];
  for (const [name, value] of Object.entries(sipHeaders)) {
    if (HEADER_NAME_RE.test(name) && (typeof value === 'string' || typeof value === 'number')) {
      pairs.push(`${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`);
    }
  }
  return pairs.join('&');
}

/**
 * The Contact URI a destination redirects to, or undefined when it cannot be one (no number
 * or SIP URI, a malformed URI). `fallbackHost` is used when the trunk names no outbound
 * gateway: the address the INVITE came from, which is the trunk itself.
 */
export function redirectTarget(
  destination: Doc,
  trunk: Doc | null,
  fallbackHost: string,
): string | undefined {
  if (destination.type === 'sip' && typeof destination.sipUri === 'string') {
    const uri = parseUri(destination.sipUri);
    if (uri === null || !isSipUri(uri)) {
      return undefined;
    }
    const extra = uriHeaders(destination.sipHeaders);
    if (extra === '') {
      return formatUri(uri);
    }
    const headers = uri.headers === undefined ? extra : `${uri.headers}&${extra}`;
    return formatUri({ ...uri, headers });
  }
  if (destination.type !== 'number' || typeof destination.number !== 'string') {
    return undefined;
  }
  const number = destination.number;
  if (!LOOSE_USER_RE.test(number)) {
    return undefined;
  }
  let user = number;
  const extension = destination.extension;
  if (typeof extension === 'string' && EXTENSION_RE.test(extension)) {
    // `#` is not allowed unescaped in a user part; `*` is.
    user += /^[0-9]+$/.test(extension)
      ? `;ext=${extension}`
      : `;postd=${extension.replace(/W/g, 'w').replace(/#/g, '%23')}`;
  }
  const host =
    outboundGateway(trunk) ?? (isIPv6(fallbackHost) ? `[${fallbackHost}]` : fallbackHost);
  return `sip:${user}@${host}${PHONE_USER_RE.test(number) ? ';user=phone' : ''}`;
}

/** A short, safe text for a header's quoted-string (no quotes, escapes or control characters). */
export function headerText(text: string, maxLength = 120): string {
  return text
    .replace(/[\u0000-\u001f\u007f"\\]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, maxLength);
}

/** What the call record says about where the caller went. */
export function describeDestination(destination: Doc): string {
  if (destination.type === 'sip') {
    return String(destination.sipUri);
  }
  const extension =
    typeof destination.extension === 'string' ? ` ext. ${destination.extension}` : '';
  return `${String(destination.number)}${extension}`;
}
