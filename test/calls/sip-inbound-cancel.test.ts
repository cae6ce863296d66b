/**
 * CANCEL before answer: the call's set-up is held (its params builder waits on a gate) while
 * SIPp rings, cancels and gets its 487; released, the set-up sees the CANCEL and ends the call
 * as the caller's hang-up without ever answering it.
 */
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { CallParamsBuilder } from '../../src/calls/call-params-builder.js';
import { hasSipp, runSipp } from '../support/sipp.js';
import { waitFor } from './websocket-call-harness.js';
import { sippArgs, useSipHarness } from './sip-call-harness.js';

let release: () => void = () => {};
const gate = new Promise<void>((resolve) => (release = resolve));
let held = 0;

const h = useSipHarness({
  builder: (base) =>
    ({
      build: async (...args: Parameters<CallParamsBuilder['build']>) => {
        held++;
        await gate;
        return base.build(...args);
      },
    }) as unknown as CallParamsBuilder,
});

describe.skipIf(!hasSipp)('an inbound SIP call cancelled before answer', () => {
  it('answers 487 and stores the call ended by the customer', { timeout: 40_000 }, async () => {
    const number = '+15550002000';
    const { phoneNumberId } = await h.phoneNumber({ number });
    const mediaPort = String(20_000 + 2 * Math.floor(Math.random() * 4000));
    const result = await runSipp(
      sippArgs(h, 'inbound-cancel.xml', ['-s', number, '-mp', mediaPort]),
      tmpdir(),
    );
    expect(result.code, result.output).toBe(0);
    expect(held).toBe(1);
    release();
    let call: Record<string, unknown> | undefined;
    const deadline = Date.now() + 10_000;
    while (call?.status !== 'ended' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      call = (await h.callsOf(phoneNumberId))[0];
    }
    expect(call).toMatchObject({
      type: 'inboundPhoneCall',
      status: 'ended',
      endedReason: 'customer-ended-call',
    });
    // Never answered: no live session, no worker, no dialog.
    await waitFor(() => h.sip.calls.liveCalls === 0, 5000, 'no live SIP call');
    expect(h.engine.activeCalls).toBe(0);
    expect(h.sip.agent.dialogs.dialogCount).toBe(0);
  });
});
