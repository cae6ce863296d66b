/**
 * Character-level helpers for the RFC 3261 §25 grammar. Header values reach these after the
 * parser has unfolded them, so linear white space is only SP or HTAB here.
 */

/** token = 1*(alphanum / "-" / "." / "!" / "%" / "*" / "_" / "+" / "`" / "'" / "~") */
const TOKEN_RE = /^[A-Za-z0-9\-.!%*_+`'~]+$/;

/** word = 1*(alphanum / token marks / separators that may appear in Call-IDs) */
const WORD_RE =
  /^[A-Za-z0-9\-.!%*_+`'~()<>:\\"/[\]?{}]+(@[A-Za-z0-9\-.!%*_+`'~()<>:\\"/[\]?{}]+)?$/;

export function isToken(text: string): boolean {
  return TOKEN_RE.test(text);
}

/** callid = word [ "@" word ] */
export function isCallId(text: string): boolean {
  return WORD_RE.test(text);
}

export function isWhitespace(char: string | undefined): boolean {
  return char === ' ' || char === '\t';
}

/** Index of the first non-SP/HTAB character at or after `from`. */
export function skipWhitespace(text: string, from: number): number {
  let index = from;
  while (index < text.length && isWhitespace(text[index])) {
    index++;
  }
  return index;
}

/**
 * Index just past the closing quote of the quoted-string that opens at `start` (which must be
 * a DQUOTE), honouring quoted-pairs; -1 when the string is not terminated.
 */
export function endOfQuotedString(text: string, start: number): number {
  for (let index = start + 1; index < text.length; index++) {
    const char = text[index];
    if (char === '\\') {
      index++;
    } else if (char === '"') {
      return index + 1;
    } else if (char === '\r' || char === '\n') {
      return -1;
    }
  }
  return -1;
}

/** The content of a quoted-string (with its quotes) with quoted-pairs resolved. */
export function unquote(quoted: string): string {
  if (quoted.length < 2 || !quoted.startsWith('"') || !quoted.endsWith('"')) {
    return quoted;
  }
  return quoted.slice(1, -1).replace(/\\(.)/gs, '$1');
}

/** A quoted-string for `text`, escaping `"` and `\`. */
export function quote(text: string): string {
  return `"${text.replace(/["\\]/g, (char) => `\\${char}`)}"`;
}

/**
 * Splits `text` at each top-level `separator`, outside quoted strings and angle brackets.
 * Returns null when a quoted string or an angle bracket is left open.
 */
export function splitTopLevel(text: string, separator: string): string[] | null {
  const parts: string[] = [];
  let start = 0;
  let inAngle = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === '"') {
      const end = endOfQuotedString(text, index);
      if (end < 0) {
        return null;
      }
      index = end - 1;
    } else if (char === '<') {
      if (inAngle) {
        return null;
      }
      inAngle = true;
    } else if (char === '>') {
      inAngle = false;
    } else if (char === separator && !inAngle) {
      parts.push(text.slice(start, index));
      start = index + 1;
    }
  }
  if (inAngle) {
    return null;
  }
  parts.push(text.slice(start));
  return parts;
}

/** Parses a decimal number of 1*DIGIT no larger than `max`; null otherwise. */
export function parseDigits(text: string, max: number): number | null {
  if (!/^[0-9]+$/.test(text)) {
    return null;
  }
  const trimmed = text.replace(/^0+(?=.)/, '');
  if (trimmed.length > 16) {
    return null;
  }
  const value = Number(trimmed);
  return value <= max ? value : null;
}

const IPV4_RE =
  /^(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}$/;
const HOSTNAME_RE =
  /^([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.?$/;

export function isIPv4(text: string): boolean {
  return IPV4_RE.test(text);
}

/** host = hostname / IPv4address / IPv6reference ("[" IPv6address "]"). */
export function isHost(text: string): boolean {
  if (text.startsWith('[')) {
    return /^\[[0-9A-Fa-f:.]+\]$/.test(text) && text.includes(':');
  }
  return isIPv4(text) || HOSTNAME_RE.test(text);
}

/** Host and optional port of `host[:port]`, with IPv6 references kept in brackets. */
export function parseHostPort(text: string): { host: string; port?: number } | null {
  let host: string;
  let rest: string;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) {
      return null;
    }
    host = text.slice(0, close + 1);
    rest = text.slice(close + 1);
  } else {
    const colon = text.indexOf(':');
    host = colon < 0 ? text : text.slice(0, colon);
    rest = colon < 0 ? '' : text.slice(colon);
  }
  if (!isHost(host)) {
    return null;
  }
  if (rest === '') {
    return { host };
  }
  if (!rest.startsWith(':')) {
    return null;
  }
  const port = parseDigits(rest.slice(1), 65535);
  return port === null ? null : { host, port };
}

/** `host` without IPv6 brackets, for socket APIs. */
export function socketAddress(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** `address` as a SIP host: IPv6 addresses get their brackets. */
export function sipHost(address: string): string {
  return address.includes(':') && !address.startsWith('[') ? `[${address}]` : address;
}
