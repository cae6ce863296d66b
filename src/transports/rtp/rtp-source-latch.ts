export interface RtpEndpoint {
  readonly address: string;
  readonly port: number;
}

/**
 * Symmetric RTP (RFC 4961 behaviour, for callers behind NAT): the first acceptable packet
 * latches the session to its source address and port, and replies go there instead of the SDP
 * address. Packets from elsewhere are ignored while the latched source is live; after
 * `relatchAfterMs` of silence from it, the next source to send takes over (a NAT rebinding, or
 * a media server that moved the stream).
 */
export class RtpSourceLatch {
  latched: RtpEndpoint | undefined;
  relatches = 0;
  private lastMs = 0;

  constructor(private readonly relatchAfterMs: number) {}

  /** Whether a packet from `address:port` at `nowMs` is from the (possibly new) source. */
  accept(address: string, port: number, nowMs: number): boolean {
    const latched = this.latched;
    if (latched !== undefined && latched.address === address && latched.port === port) {
      this.lastMs = nowMs;
      return true;
    }
    if (latched !== undefined) {
      if (nowMs - this.lastMs < this.relatchAfterMs) {
        return false;
      }
      this.relatches++;
    }
    // Allocates only when the source changes: once per call in practice.
    this.latched = { address, port };
    this.lastMs = nowMs;
    return true;
  }
}
