/** What the outbound SIP e2e tests share: waiting on the stored call, and dialling SIPp. */
import { expect } from 'vitest';
import type { Doc } from '../../src/store/resource-store.js';
import {
  freeUdpPort,
  sippMediaPort,
  startSippUas,
  type SipHarness,
} from '../calls/sip-call-harness.js';

export async function waitFor<T>(
  read: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined && value !== false) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

let numbers = 0;
/** A caller ID no other test of the run uses. */
export const newNumber = (): string => `+1555020${String(1000 + numbers++)}`;

export async function stored(h: SipHarness, callId: string): Promise<Doc> {
  return (await h.store.resources.calls.get(h.orgId, callId))!;
}

export async function endedCall(h: SipHarness, callId: string): Promise<Doc> {
  return waitFor(
    async () => {
      const call = await stored(h, callId);
      // The end-of-call fields (the observer's artifact) land just after the status.
      return call.status === 'ended' && call.artifact !== undefined ? call : undefined;
    },
    20_000,
    'the call to end',
  );
}

export interface DialOptions {
  trunk?: Doc;
  assistant?: Doc;
  sippArgs?: string[];
  customer?: Doc;
}

/** Starts SIPp as the trunk on a free port and POSTs a call to +15550009999 through it. */
export async function dialSipp(h: SipHarness, scenario: string, options: DialOptions = {}) {
  const port = await freeUdpPort();
  const trunk =
    typeof options.trunk?.outboundProxy === 'string'
      ? { ...options.trunk, outboundProxy: options.trunk.outboundProxy.replace('PORT', `${port}`) }
      : options.trunk;
  const { phoneNumberId, assistantId } = await h.outboundNumber({
    port,
    number: newNumber(),
    ...(trunk !== undefined && { trunk }),
    ...(options.assistant !== undefined && { assistant: options.assistant }),
  });
  const sipp = startSippUas(scenario, port, [
    '-mp',
    String(sippMediaPort()),
    ...(options.sippArgs ?? []),
  ]);
  const [status, call] = await h.post('/call', {
    assistantId,
    phoneNumberId,
    customer: { number: '+15550009999', ...options.customer },
  });
  expect(status, JSON.stringify(call)).toBe(201);
  return { call, sipp };
}

/**
 * Waits for SIPp to pass its scenario and the call to end on the customer's BYE after ringing
 * and an answer, with our tone sent and echoed back by SIPp (`-rtp_echo`, echoMode tone).
 */
export async function expectEchoedCall(
  h: SipHarness,
  callId: string,
  sipp: { exited: Promise<{ code: number | null; output: string }> },
) {
  const result = await sipp.exited;
  expect(result.code, result.output).toBe(0);
  const ended = await endedCall(h, callId);
  expect(ended.endedReason).toBe('customer-ended-call');
  const observer = h.observers.get(callId)!;
  expect(observer.statuses.map((status) => status.status)).toEqual([
    'ringing',
    'in-progress',
    'ended',
  ]);
  // Our 440 Hz tone went out as RTP and came back through SIPp's echo.
  expect(observer.audio.assistant).toBeGreaterThan(8000);
  expect(observer.audio.user).toBeGreaterThan(8000);
  expect(observer.energy.user / observer.audio.user).toBeGreaterThan(50);
  return observer;
}

/** Ends a call through its monitor control URL, as a customer's app would. */
export async function endThroughControlUrl(h: SipHarness, controlUrl: string): Promise<void> {
  const control = new URL(controlUrl);
  const response = await h.app.inject({
    method: 'POST',
    url: `${control.pathname}${control.search}`,
    payload: { type: 'end-call' },
  });
  expect(response.statusCode, response.body).toBe(200);
}
