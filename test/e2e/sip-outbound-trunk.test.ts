/**
 * What a SIP trunk engineer expects of outbound calls beyond the basics, with SIPp as the far
 * end: an outbound proxy (preloaded Route), session timers (422 and Min-SE), and early media
 * (a 183's SDP taken as the answer the 200 leaves unchanged).
 */
import { describe, expect, it } from 'vitest';
import { useSipHarness } from '../calls/sip-call-harness.js';
import { hasSipp } from '../support/sipp.js';
import {
  dialSipp,
  endThroughControlUrl,
  endedCall,
  expectEchoedCall,
  waitFor,
} from './sip-outbound-support.js';

describe.skipIf(!hasSipp)('outbound SIP trunk features against SIPp', () => {
  const h = useSipHarness({ ringTimeoutMs: 3000 });

  it(
    'sends the INVITE, ACK and BYE through the outbound proxy with a preloaded Route',
    { timeout: 60_000 },
    async () => {
      const { call, sipp } = await dialSipp(h, 'outbound-proxy.xml', {
        trunk: {
          gateways: [{ ip: 'trunk.example.com', port: 5080, inboundEnabled: false }],
          outboundProxy: 'sip:127.0.0.1:PORT;transport=udp',
        },
      });
      await waitFor(() => h.engine.session(call.id)?.state === 'in-progress', 15_000, 'the answer');
      await endThroughControlUrl(h, call.monitor.controlUrl as string);
      const result = await sipp.exited;
      expect(result.code, result.output).toBe(0);
      expect((await endedCall(h, call.id)).endedReason).toBe('assistant-ended-call');
    },
  );

  it(
    'retries a 422 with the Min-SE it names, on the same Call-ID, and connects',
    { timeout: 60_000 },
    async () => {
      const { call, sipp } = await dialSipp(h, 'outbound-422.xml');
      const result = await sipp.exited;
      expect(result.code, result.output).toBe(0);
      const ended = await endedCall(h, call.id);
      expect(ended.endedReason).toBe('customer-ended-call');
    },
  );

  it(
    'refreshes the session by re-INVITE when the answer makes Parla the refresher',
    { timeout: 60_000 },
    async () => {
      const { call, sipp } = await dialSipp(h, 'outbound-session-refresh.xml');
      const result = await sipp.exited;
      expect(result.code, result.output).toBe(0);
      // The refresh kept the call up until the customer's BYE.
      expect((await endedCall(h, call.id)).endedReason).toBe('customer-ended-call');
    },
  );

  it.each([
    ['outbound-early-media.xml', "the 183's SDP when the 200 has none"],
    ['outbound-early-media-changed.xml', "the 200's SDP when it differs from the 183's"],
  ])('%s: media flows to %s, from the answer on', { timeout: 60_000 }, async (scenario) => {
    const { call, sipp } = await dialSipp(h, scenario, {
      assistant: { metadata: { echoMode: 'tone' } },
      sippArgs: ['-rtp_echo'],
    });
    // Our tone reached SIPp's echo at the address the answer named, and came back.
    await expectEchoedCall(h, call.id, sipp);
  });
});
