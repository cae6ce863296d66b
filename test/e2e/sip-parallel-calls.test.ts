/**
 * Issue 6 must-show: 100 inbound SIP calls in parallel from SIPp, each playing G.711 speech from
 * the pcap SIPp ships and hanging up with BYE, and not one failed: SIPp counts no failed call,
 * and every call is stored ended by the caller with its audio having reached the call worker and
 * come back over RTP.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasSipp, runSipp } from '../support/sipp.js';
import { SIPP_SCENARIOS, useSipHarness } from '../calls/sip-call-harness.js';

const CALLS = 100;
const h = useSipHarness();

describe.skipIf(!hasSipp)('100 inbound SIP calls in parallel', () => {
  it('connects, carries audio and ends every call', { timeout: 180_000 }, async () => {
    const number = '+15550009100';
    const { phoneNumberId } = await h.phoneNumber({ number });
    const mediaPort = String(20_000 + 2 * Math.floor(Math.random() * 4000));
    let peakLiveCalls = 0;
    const sampler = setInterval(() => {
      peakLiveCalls = Math.max(peakLiveCalls, h.sip.calls.liveCalls);
    }, 20);
    const result = await runSipp(
      [
        `127.0.0.1:${h.sip.port}`,
        '-sf',
        join(SIPP_SCENARIOS, 'inbound-pcap.xml'),
        '-s',
        number,
        '-i',
        '127.0.0.1',
        '-p',
        '0',
        '-mp',
        mediaPort,
        // All 100 calls up at once: started at 50 per second, none ended before the last starts.
        '-m',
        String(CALLS),
        '-l',
        String(CALLS),
        '-r',
        '50',
        '-timeout',
        '120s',
        '-timeout_error',
        '-nostdin',
      ],
      tmpdir(),
    ).finally(() => clearInterval(sampler));
    expect(result.code, result.output).toBe(0);
    // They overlapped: each lasts over 3 s and all 100 start within 2 s.
    expect(peakLiveCalls).toBeGreaterThanOrEqual(CALLS * 0.9);

    let calls: Record<string, unknown>[] = [];
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      calls = await h.store.resources.calls.list(h.orgId, {
        limit: 1000,
        equals: { phoneNumberId },
      });
      const reported = calls.filter(
        (call) => call.status === 'ended' && h.observers.get(String(call.id))?.ended !== undefined,
      );
      if (calls.length === CALLS && reported.length === CALLS) {
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(calls).toHaveLength(CALLS);
    const reasons = new Map<string, number>();
    for (const call of calls) {
      const reason = String(call.endedReason);
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
    expect(Object.fromEntries(reasons)).toEqual({ 'customer-ended-call': CALLS });
    for (const call of calls) {
      const observer = h.observers.get(String(call.id))!;
      // About 3 s of the caller's speech reached the worker, and its echo was played back.
      expect(observer.audio.user, String(call.id)).toBeGreaterThan(8000 * 2);
      expect(observer.energy.user / observer.audio.user).toBeGreaterThan(50);
      expect(observer.energy.assistant).toBeGreaterThan(0);
    }
  });
});
