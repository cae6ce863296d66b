/** A range of UDP ports handed out in even/odd pairs: RTP on the even port, RTCP on the next. */
export interface RtpPortRange {
  readonly minPort: number;
  readonly maxPort: number;
}

export const DEFAULT_RTP_PORT_RANGE: RtpPortRange = { minPort: 10_000, maxPort: 20_000 };

/**
 * Hands out even RTP ports from a range, round robin so a port just released is not reused at
 * once (late packets of the previous call would land in the next). The caller binds them and
 * calls `release` when done, or `release` then `allocate` again when the bind fails.
 */
export class RtpPortAllocator {
  private readonly inUse = new Set<number>();
  private next: number;
  readonly capacity: number;

  constructor(readonly range: RtpPortRange = DEFAULT_RTP_PORT_RANGE) {
    const { minPort, maxPort } = range;
    if (
      !Number.isInteger(minPort) ||
      !Number.isInteger(maxPort) ||
      minPort < 1024 ||
      maxPort > 65_535 ||
      maxPort < minPort + 1
    ) {
      throw new RangeError('RTP port range must be 1024–65535 and hold at least one pair');
    }
    this.next = minPort + (minPort % 2);
    this.capacity = Math.floor((maxPort - this.next + 1) / 2);
    if (this.capacity < 1) {
      throw new RangeError('RTP port range holds no even/odd pair');
    }
  }

  get allocated(): number {
    return this.inUse.size;
  }

  /** An even port whose pair is free in this allocator, or undefined when all are taken. */
  allocate(): number | undefined {
    const first = this.range.minPort + (this.range.minPort % 2);
    for (let i = 0; i < this.capacity; i++) {
      const port = this.next;
      this.next += 2;
      if (this.next + 1 > this.range.maxPort) {
        this.next = first;
      }
      if (!this.inUse.has(port)) {
        this.inUse.add(port);
        return port;
      }
    }
    return undefined;
  }

  release(port: number): void {
    this.inUse.delete(port);
  }
}
