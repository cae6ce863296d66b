import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

import { isToken, quote, splitTopLevel, unquote } from './syntax.js';

/**
 * HTTP Digest authentication as SIP uses it (RFC 3261 §22.4, RFC 2617, RFC 7616): challenges
 * in WWW-Authenticate / Proxy-Authenticate, credentials in Authorization /
 * Proxy-Authorization. Only `qop=auth` (or no qop, RFC 2069 style) is supported; `auth-int`
 * is refused since nothing in SIP needs it in practice.
 */
export type DigestAlgorithm = 'MD5' | 'MD5-sess' | 'SHA-256' | 'SHA-256-sess';

const ALGORITHMS: readonly DigestAlgorithm[] = ['MD5', 'MD5-sess', 'SHA-256', 'SHA-256-sess'];

export interface DigestChallenge {
  readonly realm: string;
  readonly nonce: string;
  readonly opaque?: string;
  readonly algorithm: DigestAlgorithm;
  /** True when the server offered qop=auth; the answer then carries qop, nc and cnonce. */
  readonly qopAuth: boolean;
  /** The previous nonce was stale: retry with the same credentials. */
  readonly stale: boolean;
}

export interface DigestCredentials {
  readonly username: string;
  readonly realm: string;
  readonly nonce: string;
  readonly uri: string;
  readonly response: string;
  readonly algorithm: DigestAlgorithm;
  readonly opaque?: string;
  readonly qop?: 'auth';
  readonly nc?: string;
  readonly cnonce?: string;
}

export interface DigestAnswerInput {
  readonly method: string;
  readonly uri: string;
  readonly username: string;
  readonly password: string;
  /** Nonce count, 1 for the first use of a nonce. */
  readonly nonceCount?: number;
  /** Client nonce; random when omitted. */
  readonly cnonce?: string;
}

/** Parses `Digest k=v, ...`; null for another scheme or a malformed / unusable challenge. */
export function parseDigestChallenge(value: string): DigestChallenge | null {
  const fields = parseDigestFields(value);
  if (fields === null) {
    return null;
  }
  const realm = fields.get('realm');
  const nonce = fields.get('nonce');
  const algorithm = parseAlgorithm(fields.get('algorithm'));
  if (realm === undefined || nonce === undefined || algorithm === null) {
    return null;
  }
  const qopOptions = fields.get('qop');
  let qopAuth = false;
  if (qopOptions !== undefined) {
    const options = qopOptions.split(',').map((option) => option.trim().toLowerCase());
    qopAuth = options.includes('auth');
    if (!qopAuth) {
      return null; // auth-int only: we cannot answer it.
    }
  }
  const opaque = fields.get('opaque');
  return {
    realm,
    nonce,
    algorithm,
    qopAuth,
    stale: fields.get('stale')?.toLowerCase() === 'true',
    ...(opaque === undefined ? {} : { opaque }),
  };
}

/**
 * The first challenge among header values that we can answer (RFC 7616 §3.7: prefer the
 * strongest algorithm offered, so SHA-256 before MD5).
 */
export function pickDigestChallenge(values: readonly string[]): DigestChallenge | null {
  const challenges = values
    .map((value) => parseDigestChallenge(value))
    .filter((challenge): challenge is DigestChallenge => challenge !== null);
  challenges.sort((a, b) => strength(b.algorithm) - strength(a.algorithm));
  return challenges[0] ?? null;
}

/** The credentials answering `challenge`, as a structure (see formatDigestCredentials). */
export function answerDigestChallenge(
  challenge: DigestChallenge,
  input: DigestAnswerInput,
): DigestCredentials {
  const cnonce = input.cnonce ?? randomBytes(12).toString('hex');
  const nc = (input.nonceCount ?? 1).toString(16).padStart(8, '0');
  const base = {
    username: input.username,
    realm: challenge.realm,
    nonce: challenge.nonce,
    uri: input.uri,
    algorithm: challenge.algorithm,
    ...(challenge.opaque === undefined ? {} : { opaque: challenge.opaque }),
  };
  const qopFields = challenge.qopAuth ? { qop: 'auth' as const, nc, cnonce } : {};
  // -sess folds the cnonce into HA1, so it is sent even without qop.
  const cnonceField = challenge.algorithm.endsWith('-sess') ? { cnonce } : {};
  const response = digestResponse({
    ...base,
    ...cnonceField,
    ...qopFields,
    method: input.method,
    password: input.password,
  });
  return { ...base, ...cnonceField, ...qopFields, response };
}

/** The header value for an Authorization / Proxy-Authorization field. */
export function formatDigestCredentials(credentials: DigestCredentials): string {
  const parts = [
    `username=${quote(credentials.username)}`,
    `realm=${quote(credentials.realm)}`,
    `nonce=${quote(credentials.nonce)}`,
    `uri=${quote(credentials.uri)}`,
    `response=${quote(credentials.response)}`,
    `algorithm=${credentials.algorithm}`,
  ];
  if (credentials.cnonce !== undefined) {
    parts.push(`cnonce=${quote(credentials.cnonce)}`);
  }
  if (credentials.opaque !== undefined) {
    parts.push(`opaque=${quote(credentials.opaque)}`);
  }
  if (credentials.qop !== undefined) {
    parts.push(`qop=${credentials.qop}`, `nc=${credentials.nc ?? '00000001'}`);
  }
  return `Digest ${parts.join(', ')}`;
}

/** Shorthand: answer a challenge and format the header value in one go. */
export function buildDigestAuthorization(
  challenge: DigestChallenge,
  input: DigestAnswerInput,
): string {
  return formatDigestCredentials(answerDigestChallenge(challenge, input));
}

/** Parses an Authorization / Proxy-Authorization value; null when malformed or incomplete. */
export function parseDigestCredentials(value: string): DigestCredentials | null {
  const fields = parseDigestFields(value);
  if (fields === null) {
    return null;
  }
  const username = fields.get('username');
  const realm = fields.get('realm');
  const nonce = fields.get('nonce');
  const uri = fields.get('uri');
  const response = fields.get('response');
  const algorithm = parseAlgorithm(fields.get('algorithm'));
  if (
    username === undefined ||
    realm === undefined ||
    nonce === undefined ||
    uri === undefined ||
    response === undefined ||
    algorithm === null
  ) {
    return null;
  }
  const qop = fields.get('qop')?.toLowerCase();
  const nc = fields.get('nc');
  const cnonce = fields.get('cnonce');
  const opaque = fields.get('opaque');
  if (qop !== undefined && (qop !== 'auth' || nc === undefined || cnonce === undefined)) {
    return null;
  }
  if (nc !== undefined && !/^[0-9a-fA-F]{8}$/.test(nc)) {
    return null;
  }
  return {
    username,
    realm,
    nonce,
    uri,
    response: response.toLowerCase(),
    algorithm,
    ...(opaque === undefined ? {} : { opaque }),
    ...(qop === undefined ? {} : { qop: 'auth' as const }),
    ...(nc === undefined ? {} : { nc }),
    ...(cnonce === undefined ? {} : { cnonce }),
  };
}

/**
 * True when `credentials` carry the right response for `method` and `password`. Callers check
 * separately that the realm, nonce (fresh, issued by them) and username are what they expect.
 */
export function verifyDigestCredentials(
  credentials: DigestCredentials,
  method: string,
  password: string,
): boolean {
  const expected = digestResponse({
    ...credentials,
    method,
    password,
  });
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(credentials.response, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface DigestChallengeOptions {
  readonly realm: string;
  /** A fresh nonce; random when omitted (callers that check freshness pass their own). */
  readonly nonce?: string;
  readonly opaque?: string;
  readonly algorithm?: DigestAlgorithm;
  readonly stale?: boolean;
}

/** A WWW-Authenticate / Proxy-Authenticate value for a UAS (qop=auth always offered). */
export function buildDigestChallenge(options: DigestChallengeOptions): string {
  const parts = [
    `realm=${quote(options.realm)}`,
    `nonce=${quote(options.nonce ?? createDigestNonce())}`,
    `algorithm=${options.algorithm ?? 'MD5'}`,
    'qop="auth"',
  ];
  if (options.opaque !== undefined) {
    parts.push(`opaque=${quote(options.opaque)}`);
  }
  if (options.stale === true) {
    parts.push('stale=TRUE');
  }
  return `Digest ${parts.join(', ')}`;
}

export function createDigestNonce(): string {
  return randomBytes(16).toString('hex');
}

interface ResponseInput {
  readonly username: string;
  readonly realm: string;
  readonly nonce: string;
  readonly uri: string;
  readonly algorithm: DigestAlgorithm;
  readonly method: string;
  readonly password: string;
  readonly qop?: 'auth';
  readonly nc?: string;
  readonly cnonce?: string;
}

function digestResponse(input: ResponseInput): string {
  const hash = input.algorithm.startsWith('SHA-256') ? 'sha256' : 'md5';
  const h = (data: string): string => createHash(hash).update(data, 'utf8').digest('hex');
  let ha1 = h(`${input.username}:${input.realm}:${input.password}`);
  if (input.algorithm.endsWith('-sess')) {
    ha1 = h(`${ha1}:${input.nonce}:${input.cnonce ?? ''}`);
  }
  const ha2 = h(`${input.method}:${input.uri}`);
  if (input.qop === 'auth') {
    return h(`${ha1}:${input.nonce}:${input.nc ?? ''}:${input.cnonce ?? ''}:auth:${ha2}`);
  }
  return h(`${ha1}:${input.nonce}:${ha2}`);
}

function parseAlgorithm(value: string | undefined): DigestAlgorithm | null {
  if (value === undefined) {
    return 'MD5';
  }
  return ALGORITHMS.find((algorithm) => algorithm.toLowerCase() === value.toLowerCase()) ?? null;
}

function strength(algorithm: DigestAlgorithm): number {
  return algorithm.startsWith('SHA-256') ? 1 : 0;
}

/**
 * `Digest name=value, name="quoted", ...` to a map with lower-cased names and unquoted
 * values; null when the scheme is not Digest or a parameter is malformed or repeated.
 */
function parseDigestFields(value: string): Map<string, string> | null {
  const match = /^\s*digest\s+(.*)$/is.exec(value);
  if (match === null) {
    return null;
  }
  const parts = splitTopLevel(match[1]!, ',');
  if (parts === null) {
    return null;
  }
  const fields = new Map<string, string>();
  for (const part of parts) {
    const piece = part.trim();
    if (piece === '') {
      continue;
    }
    const equals = piece.indexOf('=');
    if (equals <= 0) {
      return null;
    }
    const name = piece.slice(0, equals).trim().toLowerCase();
    const raw = piece.slice(equals + 1).trim();
    if (!isToken(name) || fields.has(name) || raw === '') {
      return null;
    }
    if (raw.startsWith('"')) {
      if (!raw.endsWith('"') || raw.length < 2) {
        return null;
      }
      fields.set(name, unquote(raw));
    } else {
      if (/[\s"]/.test(raw)) {
        return null;
      }
      fields.set(name, raw);
    }
  }
  return fields;
}
