/**
 * Issue 6 must-show: 100 inbound SIP calls in parallel from SIPp, each playing G.711 speech from
 * the pcap SIPp ships and hanging up with BYE, and not one failed: SIPp counts no failed call,
 * and every call is stored ended by the caller with its audio having reached the call worker and
 * come back over RTP.
 */
import { describe, expect, it } from 'vitest';
import { hasSipp } from '../support/sipp.js';
import { endedCallsOf, runParallelSipp, useSipHarness } from '../calls/sip-call-harness.js';

const CALLS = 100;
const h = useSipHarness();

describe.skipIf(!hasSipp)('100 inbound SIP calls in parallel', () => {
  it('connects, carries audio and ends every call', { timeout: 180_000 }, async () => {
    const number = '+15550009100';
    const { phoneNumberId } = await h.phoneNumber({ number });
    const result = await runParallelSipp(h, 'inbound-pcap.xml', number, CALLS);
    expect(result.code, result.output).toBe(0);
    // They overlapped: each lasts over 3 s and all 100 start within 2 s.
    expect(result.peakLiveCalls).toBeGreaterThanOrEqual(CALLS * 0.9);

    const calls = await endedCallsOf(h, phoneNumberId, CALLS, 60_000);
    expect(calls).toHaveLength(CALLS);
    const reasons: Record<string, number> = {};
    for (const call of calls) {
      reasons[String(call.endedReason)] = (reasons[String(call.endedReason)] ?? 0) + 1;
    }
    expect(reasons).toEqual({ 'customer-ended-call': CALLS });
    for (const call of calls) {
      const observer = h.observers.get(String(call.id))!;
      // About 3 s of the caller's speech reached the worker, and its echo was played back.
      expect(observer.audio.user, String(call.id)).toBeGreaterThan(8000 * 2);
      expect(observer.energy.user / observer.audio.user).toBeGreaterThan(50);
      expect(observer.energy.assistant).toBeGreaterThan(0);
    }
  });
});
