import { formatParams, parseParams, type SipParams } from './params.js';
import { endOfQuotedString, isToken, quote, skipWhitespace, unquote } from './syntax.js';
import { formatUri, parseUri, type AnyUri } from './uri.js';

/**
 * A From, To, Contact, Route or Record-Route value: `"Display" <uri>;param=value` or a bare
 * addr-spec `uri;param=value` (where every `;` after the URI starts a header parameter).
 */
export interface NameAddr {
  /** The display name, unquoted. */
  readonly displayName?: string;
  readonly uri: AnyUri;
  readonly params: SipParams;
}

/** Display names of tokens separated by LWS (an unquoted display name). */
const TOKENS_RE = /^[A-Za-z0-9\-.!%*_+`'~]+([ \t]+[A-Za-z0-9\-.!%*_+`'~]+)*$/;

export function parseNameAddr(text: string): NameAddr | null {
  const value = text.trim();
  let displayName: string | undefined;
  let uriText: string;
  let rest: string;
  const open = findOpenAngle(value);
  if (open === -2) {
    return null;
  }
  if (open >= 0) {
    const display = value.slice(0, open).trim();
    if (display.startsWith('"')) {
      if (endOfQuotedString(display, 0) !== display.length) {
        return null;
      }
      displayName = unquote(display);
    } else if (display !== '') {
      if (!TOKENS_RE.test(display)) {
        return null;
      }
      displayName = display;
    }
    const close = value.indexOf('>', open);
    if (close < 0) {
      return null;
    }
    uriText = value.slice(open + 1, close);
    rest = value.slice(close + 1).trim();
    // LAQUOT and RAQUOT allow no white space inside the brackets.
    if (/\s/.test(uriText)) {
      return null;
    }
  } else {
    const semicolon = value.indexOf(';');
    uriText = semicolon < 0 ? value : value.slice(0, semicolon).trim();
    rest = semicolon < 0 ? '' : value.slice(semicolon);
    // A URI holding ",", "?" or ";" must be enclosed in angle brackets (§20).
    if (/[\s,?]/.test(uriText)) {
      return null;
    }
  }
  const uri = parseUri(uriText);
  if (uri === null) {
    return null;
  }
  let params: SipParams = new Map();
  if (rest !== '') {
    if (!rest.startsWith(';')) {
      return null;
    }
    const parsed = parseParams(rest.slice(1));
    if (parsed === null) {
      return null;
    }
    params = parsed;
  }
  return { ...(displayName !== undefined && { displayName }), uri, params };
}

/** Index of the `<` that opens the addr-spec, -1 when there is none, -2 for a broken quote. */
function findOpenAngle(value: string): number {
  let index = skipWhitespace(value, 0);
  if (value[index] === '"') {
    const end = endOfQuotedString(value, index);
    if (end < 0) {
      return -2;
    }
    index = skipWhitespace(value, end);
    return value[index] === '<' ? index : -2;
  }
  const angle = value.indexOf('<');
  const semicolon = value.indexOf(';');
  if (angle < 0 || (semicolon >= 0 && semicolon < angle)) {
    return -1;
  }
  return angle;
}

export function formatNameAddr(nameAddr: NameAddr): string {
  const uri = formatUri(nameAddr.uri);
  const display = nameAddr.displayName;
  const name = display === undefined ? '' : isToken(display) ? `${display} ` : `${quote(display)} `;
  return `${name}<${uri}>${formatParams(nameAddr.params)}`;
}

export function tagOf(nameAddr: NameAddr): string | undefined {
  return nameAddr.params.get('tag') ?? undefined;
}

/** A fresh tag for From or To (§19.3): 64 random bits. */
export function newTag(): string {
  const random = new Uint8Array(8);
  crypto.getRandomValues(random);
  return Buffer.from(random).toString('hex');
}
