import { describe, expect, it } from 'vitest';
import { RtpPortAllocator } from '../../../src/transports/rtp/rtp-port-allocator.js';

describe('RtpPortAllocator', () => {
  it('hands out even ports round robin and does not reuse a released one at once', () => {
    const allocator = new RtpPortAllocator({ minPort: 20_001, maxPort: 20_008 });
    expect(allocator.capacity).toBe(3); // 20002/3, 20004/5, 20006/7
    expect([allocator.allocate(), allocator.allocate()]).toEqual([20_002, 20_004]);
    allocator.release(20_002);
    expect(allocator.allocate()).toBe(20_006);
    expect(allocator.allocate()).toBe(20_002);
    expect(allocator.allocate()).toBeUndefined();
    expect(allocator.allocated).toBe(3);
  });

  it('refuses ranges without a pair or outside 1024–65535', () => {
    expect(() => new RtpPortAllocator({ minPort: 20_001, maxPort: 20_002 })).toThrow(RangeError);
    expect(() => new RtpPortAllocator({ minPort: 80, maxPort: 2000 })).toThrow(RangeError);
    expect(() => new RtpPortAllocator({ minPort: 65_000, maxPort: 70_000 })).toThrow(RangeError);
  });
});
