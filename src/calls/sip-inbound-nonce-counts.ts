/**
 * The nonce counts our inbound digest challenges have been answered with (RFC 7616 §3.4,
 * RFC 2617 §3.2.2): per nonce, the highest `nc` of a verified answer, so an answer that does
 * not count up is a replay. An answer without qop has no `nc` and counts as 1, so its nonce
 * serves once. Memory is bounded: entries go when their nonce expires, and beyond
 * `maxEntries` the oldest go early, after which every nonce issued up to theirs is stale.
 */

/** How a nonce count compares with what was verified for its nonce before. */
export type NonceCountState =
  /** Higher than any verified answer: may be checked. */
  | 'new'
  /** Not higher, and byte for byte the last verified answer: a valid digest replayed. */
  | 'replay-of-valid'
  /** Not higher, and not an answer we verified. */
  | 'replay';

interface Seen {
  nc: number;
  response: string;
  readonly issuedMs: number;
}

export const DEFAULT_MAX_TRACKED_NONCES = 20_000;

/** `nc` (8 hex digits) as a number; an answer without one counts as the first. */
export function nonceCountOf(nc: string | undefined): number {
  return nc === undefined ? 1 : parseInt(nc, 16);
}

export class NonceCounts {
  private readonly seen = new Map<string, Seen>();
  /** Nonces issued up to this time lost their entry early: they are stale. */
  private evictedThroughMs = -Infinity;

  constructor(
    private readonly lifetimeMs: number,
    private readonly maxEntries = DEFAULT_MAX_TRACKED_NONCES,
  ) {}

  get size(): number {
    return this.seen.size;
  }

  /** Whether the nonce lost its count to the memory bound (so must be challenged again). */
  forgotten(issuedMs: number): boolean {
    return issuedMs <= this.evictedThroughMs;
  }

  check(nonce: string, nc: number, response: string): NonceCountState {
    const seen = this.seen.get(nonce);
    if (seen === undefined || nc > seen.nc) {
      return 'new';
    }
    return nc === seen.nc && response === seen.response ? 'replay-of-valid' : 'replay';
  }

  /**
   * Records a verified answer; false when its count is not higher than one already recorded
   * (two copies of one answer checked at once: only the first one counts).
   */
  record(nonce: string, issuedMs: number, nc: number, response: string, nowMs: number): boolean {
    const seen = this.seen.get(nonce);
    if (seen !== undefined) {
      if (nc <= seen.nc) {
        return false;
      }
      seen.nc = nc;
      seen.response = response;
      return true;
    }
    this.prune(nowMs);
    this.seen.set(nonce, { nc, response, issuedMs });
    return true;
  }

  /** Drops expired entries from the oldest on, then the oldest beyond the bound. */
  private prune(nowMs: number): void {
    for (const [nonce, seen] of this.seen) {
      if (seen.issuedMs + this.lifetimeMs >= nowMs && this.seen.size < this.maxEntries) {
        break;
      }
      this.seen.delete(nonce);
      if (seen.issuedMs + this.lifetimeMs >= nowMs) {
        this.evictedThroughMs = Math.max(this.evictedThroughMs, seen.issuedMs);
      }
    }
  }
}
