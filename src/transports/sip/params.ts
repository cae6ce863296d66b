import { endOfQuotedString, isToken } from './syntax.js';

/**
 * Header parameters (`;name[=value]`): names are case-insensitive and stored lower-cased,
 * values keep their case (quoted values keep their quotes). A parameter without a value maps
 * to null.
 */
export type SipParams = Map<string, string | null>;

/** gen-value = token / host / quoted-string; hosts add ":" and brackets for IPv6. */
const VALUE_RE = /^[A-Za-z0-9\-.!%*_+`'~:[\]]+$/;

/**
 * Parses `text`, the part of a header value after its first `;` (so "a=1 ; b"), into params.
 * White space around `;` and `=` is allowed (SEMI and EQUAL in RFC 3261 §25.1).
 */
export function parseParams(text: string): SipParams | null {
  const params: SipParams = new Map();
  let index = 0;
  while (index <= text.length) {
    const semicolon = nextSemicolon(text, index);
    if (semicolon === -2) {
      return null;
    }
    const end = semicolon < 0 ? text.length : semicolon;
    const piece = text.slice(index, end).trim();
    const equals = piece.indexOf('=');
    const name = (equals < 0 ? piece : piece.slice(0, equals)).trimEnd();
    if (!isToken(name)) {
      return null;
    }
    let value: string | null = null;
    if (equals >= 0) {
      value = piece.slice(equals + 1).trimStart();
      const valid = value.startsWith('"')
        ? endOfQuotedString(value, 0) === value.length
        : VALUE_RE.test(value);
      if (!valid) {
        return null;
      }
    }
    params.set(name.toLowerCase(), value);
    if (semicolon < 0) {
      break;
    }
    index = semicolon + 1;
  }
  return params;
}

/** Next `;` outside quotes from `from`; -1 when none, -2 for an unterminated quote. */
function nextSemicolon(text: string, from: number): number {
  for (let index = from; index < text.length; index++) {
    const char = text[index];
    if (char === '"') {
      const end = endOfQuotedString(text, index);
      if (end < 0) {
        return -2;
      }
      index = end - 1;
    } else if (char === ';') {
      return index;
    }
  }
  return -1;
}

export function formatParams(params: SipParams): string {
  let text = '';
  for (const [name, value] of params) {
    text += value === null ? `;${name}` : `;${name}=${value}`;
  }
  return text;
}
