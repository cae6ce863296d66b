/**
 * Issue 6 must-show: a REFER transfer on a real inbound SIP call. SIPp calls in as the trunk,
 * the call is answered and running; a `transfer` control message (what the control URL and the
 * transferCall tool send) makes Parla REFER the caller to another number; SIPp accepts (202),
 * reports the new call's progress in NOTIFY sipfrags, and Parla hangs up its leg. The call is
 * stored as forwarded, having gone through `forwarding`.
 */
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { hasSipp, runSipp } from '../support/sipp.js';
import { sippArgs, sippMediaPort, useSipHarness } from '../calls/sip-call-harness.js';
import { liveCallOn } from './sip-transfer-support.js';

const h = useSipHarness();

describe.skipIf(!hasSipp)('a blind transfer of an inbound SIP call with REFER', () => {
  it(
    'REFERs the caller, follows the NOTIFYs, hangs up and ends forwarded',
    { timeout: 60_000 },
    async () => {
      const number = '+15550009300';
      const { phoneNumberId } = await h.phoneNumber({ number });
      const sipp = runSipp(
        sippArgs(h, 'transfer-inbound.xml', ['-s', number, '-mp', String(sippMediaPort())]),
        tmpdir(),
      );
      const callId = await liveCallOn(h, phoneNumberId);
      const session = h.engine.session(callId)!;
      const statuses: string[] = [];
      const watch = setInterval(() => {
        if (statuses.at(-1) !== session.state) {
          statuses.push(session.state);
        }
      }, 5);
      const accepted = session.control({
        type: 'transfer',
        destination: { type: 'number', number: '+15550199' },
      });
      expect(accepted).toEqual({ ok: true });
      const result = await sipp;
      expect(result.code, result.output).toBe(0);
      await session.done;
      clearInterval(watch);
      expect(statuses).toContain('forwarding');
      const stored = (await h.callsOf(phoneNumberId))[0]!;
      expect(stored).toMatchObject({
        status: 'ended',
        endedReason: 'assistant-forwarded-call',
        destination: { type: 'number', number: '+15550199' },
      });
    },
  );
});
