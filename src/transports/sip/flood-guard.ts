/**
 * Flood protection against SIP scanners: a source address whose requests keep being refused
 * is ignored for a while: its new requests get no answer at all, so a scanner learns nothing
 * and costs us no responses. Refusals (403, wrong credentials) block sooner than challenges
 * (401 to a request without credentials), since a busy trunk that authenticates with digest
 * is challenged once per call, possibly many times before its first answer arrives. Memory is
 * bounded: past `maxSources` tracked addresses the least recently seen is forgotten.
 */

export interface SipFloodGuardOptions {
  /** Refusals allowed per window; one more blocks the source. Default 10. */
  readonly maxRejects?: number;
  /** Challenges allowed per window; one more blocks the source. Default 100. */
  readonly maxChallenges?: number;
  /** Default 60 s. */
  readonly windowMs?: number;
  /** How long a blocked source is ignored. Default 5 minutes. */
  readonly blockMs?: number;
  /** Addresses tracked at most. Default 10 000. */
  readonly maxSources?: number;
  /** Monotonic ms. */
  readonly now?: () => number;
}

interface SourceState {
  windowStartMs: number;
  rejects: number;
  challenges: number;
  blockedUntilMs: number;
}

export const DEFAULT_FLOOD_MAX_REJECTS = 10;
export const DEFAULT_FLOOD_MAX_CHALLENGES = 100;
export const DEFAULT_FLOOD_WINDOW_MS = 60_000;
export const DEFAULT_FLOOD_BLOCK_MS = 300_000;
export const DEFAULT_FLOOD_MAX_SOURCES = 10_000;

/** `::ffff:192.0.2.1` counts as 192.0.2.1 (a dual-stack socket sees both). */
function keyOf(address: string): string {
  const lower = address.toLowerCase();
  return lower.startsWith('::ffff:') && lower.includes('.') ? lower.slice(7) : lower;
}

export class SipFloodGuard {
  private readonly sources = new Map<string, SourceState>();
  private readonly maxRejects: number;
  private readonly maxChallenges: number;
  private readonly windowMs: number;
  private readonly blockMs: number;
  private readonly maxSources: number;
  private readonly now: () => number;

  constructor(options: SipFloodGuardOptions = {}) {
    this.maxRejects = options.maxRejects ?? DEFAULT_FLOOD_MAX_REJECTS;
    this.maxChallenges = options.maxChallenges ?? DEFAULT_FLOOD_MAX_CHALLENGES;
    this.windowMs = options.windowMs ?? DEFAULT_FLOOD_WINDOW_MS;
    this.blockMs = options.blockMs ?? DEFAULT_FLOOD_BLOCK_MS;
    this.maxSources = Math.max(1, options.maxSources ?? DEFAULT_FLOOD_MAX_SOURCES);
    this.now = options.now ?? (() => performance.now());
  }

  /** How many addresses are tracked (bounded by maxSources). */
  get trackedSources(): number {
    return this.sources.size;
  }

  /** Whether requests from `address` are to be dropped unanswered. */
  isBlocked(address: string): boolean {
    const state = this.sources.get(keyOf(address));
    return state !== undefined && state.blockedUntilMs > this.now();
  }

  /** A request from `address` was refused (403, or 401 to credentials that failed). */
  recordReject(address: string): void {
    this.record(address, 'rejects');
  }

  /** A request from `address` without credentials was challenged (401). */
  recordChallenge(address: string): void {
    this.record(address, 'challenges');
  }

  /** A request from `address` was accepted: it is a real peer, its count starts over. */
  recordAccepted(address: string): void {
    const key = keyOf(address);
    const state = this.sources.get(key);
    if (state !== undefined && state.blockedUntilMs <= this.now()) {
      this.sources.delete(key);
    }
  }

  private record(address: string, kind: 'rejects' | 'challenges'): void {
    const key = keyOf(address);
    const nowMs = this.now();
    let state = this.sources.get(key);
    if (state === undefined) {
      state = { windowStartMs: nowMs, rejects: 0, challenges: 0, blockedUntilMs: 0 };
    } else {
      // Re-inserted below, so the map stays ordered by last sight.
      this.sources.delete(key);
    }
    if (nowMs - state.windowStartMs >= this.windowMs) {
      state.windowStartMs = nowMs;
      state.rejects = 0;
      state.challenges = 0;
    }
    state[kind] += 1;
    if (state.rejects > this.maxRejects || state.challenges > this.maxChallenges) {
      state.blockedUntilMs = nowMs + this.blockMs;
      state.rejects = 0;
      state.challenges = 0;
      state.windowStartMs = nowMs;
    }
    this.sources.set(key, state);
    while (this.sources.size > this.maxSources) {
      const oldest = this.sources.keys().next().value as string;
      this.sources.delete(oldest);
    }
  }
}
