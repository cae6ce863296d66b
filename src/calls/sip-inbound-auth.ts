/**
 * Digest authentication of inbound INVITEs (RFC 3261 §22.4) for trunks that cannot be told
 * apart by address: an INVITE from outside every allowlist is challenged with 401, whatever
 * number it dials (so the answer reveals nothing), and its retry is accepted when the response
 * matches the `outboundAuthenticationPlan` username and password of the dialled number's
 * `byo-sip-trunk` credential. Nonces are a timestamp signed with a key of this process, fresh
 * for NONCE_LIFETIME_MS; the nonce count of each verified answer is kept while its nonce lives,
 * so a replayed answer (same nonce, `nc` not higher) is challenged again.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Doc } from '../store/resource-store.js';
import {
  buildDigestChallenge,
  parseDigestCredentials,
  verifyDigestCredentials,
  type DigestCredentials,
} from '../transports/sip/digest.js';
import type { SipRequest } from '../transports/sip/message.js';
import { isSipUri, parseUri } from '../transports/sip/uri.js';
import { NonceCounts, nonceCountOf } from './sip-inbound-nonce-counts.js';

/** How long a nonce may be answered; later answers are challenged again with stale=TRUE. */
export const NONCE_LIFETIME_MS = 5 * 60_000;
const MAX_AUTHORIZATIONS = 4;

/**
 * `stale`: expired, or a verified answer sent again as it was (its digest is valid, so the
 * peer may answer a new nonce at once: RFC 7616 §3.3 stale=TRUE); `replayed`: a nonce count
 * that does not go up, on an answer we never verified.
 */
export type NonceState = 'fresh' | 'stale' | 'replayed' | 'forged';

/** What an INVITE's Authorization header offers, for our realm. */
export interface OfferedCredentials {
  readonly credentials: DigestCredentials;
  readonly nonce: NonceState;
}

function isObject(value: unknown): value is Doc {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The URI's host and port (5060/5061 when absent), or the URI itself when it is not SIP. */
function targetOf(text: string): string {
  const uri = parseUri(text);
  if (uri === null || !isSipUri(uri)) {
    return text;
  }
  return `${uri.host.toLowerCase()}:${uri.port ?? (uri.scheme === 'sips' ? 5061 : 5060)}`;
}

/**
 * Whether the digest-uri names the Request-URI (RFC 3261 §22.4). Some UACs (SIPp among them)
 * answer with the server's address only, so the host and port must match and the user may be
 * left out; the response still covers the exact string they sent.
 */
function sameTarget(digestUri: string, requestUri: string): boolean {
  return digestUri === requestUri || targetOf(digestUri) === targetOf(requestUri);
}

export class SipInboundAuth {
  private readonly key = randomBytes(32);
  private readonly counts: NonceCounts;

  constructor(
    readonly realm: string,
    private readonly now: () => number = Date.now,
    maxTrackedNonces?: number,
  ) {
    this.counts = new NonceCounts(NONCE_LIFETIME_MS, maxTrackedNonces);
  }

  /** A WWW-Authenticate value with a new nonce. */
  challenge(stale = false): string {
    return buildDigestChallenge({ realm: this.realm, nonce: this.newNonce(), stale });
  }

  /** The request's digest credentials for our realm (null when it carries none usable). */
  offered(request: SipRequest): OfferedCredentials | null {
    const values = request.headers.getAll('authorization').slice(0, MAX_AUTHORIZATIONS);
    for (const value of values) {
      const credentials = parseDigestCredentials(value);
      if (credentials !== null && credentials.realm === this.realm) {
        return { credentials, nonce: this.nonceState(credentials) };
      }
    }
    return null;
  }

  /**
   * Whether `trunk` (secrets open) accepts the credentials: its authUsername and authPassword,
   * answered for this method and Request-URI. An accepted answer's nonce count is recorded, so
   * the same answer is not accepted twice.
   */
  trunkAccepts(trunk: Doc, offered: OfferedCredentials, request: SipRequest): boolean {
    const plan = isObject(trunk.outboundAuthenticationPlan)
      ? trunk.outboundAuthenticationPlan
      : undefined;
    const username = plan?.authUsername;
    const password = plan?.authPassword;
    const { credentials } = offered;
    if (
      offered.nonce !== 'fresh' ||
      typeof username !== 'string' ||
      username === '' ||
      typeof password !== 'string' ||
      password === '' ||
      credentials.username !== username ||
      !sameTarget(credentials.uri, request.uri)
    ) {
      return false;
    }
    if (!verifyDigestCredentials(credentials, request.method, password)) {
      return false;
    }
    const issuedMs = parseInt(credentials.nonce.split('.')[0]!, 36);
    const nc = nonceCountOf(credentials.nc);
    return this.counts.record(credentials.nonce, issuedMs, nc, credentials.response, this.now());
  }

  /** `issued.salt.signature`: the salt keeps two challenges of one millisecond apart. */
  private newNonce(): string {
    const stamp = `${this.now().toString(36)}.${randomBytes(6).toString('base64url')}`;
    return `${stamp}.${this.sign(stamp)}`;
  }

  private sign(issued: string): string {
    return createHmac('sha256', this.key).update(issued).digest('base64url').slice(0, 22);
  }

  private nonceState(credentials: DigestCredentials): NonceState {
    const [issued, salt, signature, extra] = credentials.nonce.split('.');
    if (
      issued === undefined ||
      salt === undefined ||
      signature === undefined ||
      extra !== undefined
    ) {
      return 'forged';
    }
    const expected = Buffer.from(this.sign(`${issued}.${salt}`));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
      return 'forged';
    }
    const issuedMs = parseInt(issued, 36);
    const ageMs = this.now() - issuedMs;
    if (ageMs < 0 || ageMs > NONCE_LIFETIME_MS || this.counts.forgotten(issuedMs)) {
      return 'stale';
    }
    const count = this.counts.check(
      credentials.nonce,
      nonceCountOf(credentials.nc),
      credentials.response,
    );
    return count === 'new' ? 'fresh' : count === 'replay-of-valid' ? 'stale' : 'replayed';
  }
}
