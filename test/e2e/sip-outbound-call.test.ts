/**
 * Outbound calls end to end: POST /call with a byo-phone-number dials SIPp (the customer's phone
 * behind the trunk) through our SIP stack, with RTP both ways and the status going
 * queued → ringing → in-progress → ended.
 */
import { describe, expect, it } from 'vitest';
import type { Doc } from '../../src/store/resource-store.js';
import { freeUdpPort, startSippUas, useSipHarness } from '../calls/sip-call-harness.js';
import { hasSipp } from '../support/sipp.js';
import {
  dialSipp,
  endThroughControlUrl,
  endedCall,
  expectEchoedCall,
  newNumber,
  stored,
  waitFor,
  type DialOptions,
} from './sip-outbound-support.js';

describe.skipIf(!hasSipp)('outbound SIP calls answered by SIPp', () => {
  const h = useSipHarness({ ringTimeoutMs: 3000 });

  const dial = (scenario: string, options: DialOptions = {}) => dialSipp(h, scenario, options);

  it(
    'rings, connects with RTP both ways and ends on the customer BYE',
    { timeout: 60_000 },
    async () => {
      const { call, sipp } = await dial('outbound-answer.xml', {
        assistant: {
          metadata: { echoMode: 'tone' },
          keypadInputPlan: { enabled: true, timeoutSeconds: 0.5 },
        },
        sippArgs: ['-rtp_echo'],
        customer: { extension: '42' },
      });
      expect(call).toMatchObject({
        type: 'outboundPhoneCall',
        phoneCallTransport: 'sip',
        status: 'queued',
      });
      expect(call.monitor.controlUrl).toMatch(/^http:\/\/parla\.test\/call\/.+\/control\?token=/);
      // SIPp rings for 1.5 s before it answers.
      await waitFor(
        async () => (await stored(h, call.id)).status === 'ringing',
        15_000,
        'the ringing status',
      );
      // The ringing status-update went out at the 180, while the phone still rang.
      await waitFor(() => h.observers.get(call.id)!.statuses.length > 0, 5_000, 'a status');
      expect(h.observers.get(call.id)!.statuses[0]!.status).toBe('ringing');
      expect(h.engine.session(call.id)?.state).toBe('ringing');
      const observer = await expectEchoedCall(h, call.id, sipp);
      // The extension went out as RFC 4733 events; SIPp echoed them, and they came back in as
      // the customer's keypad input.
      const keyed = observer.events
        .filter((event) => event.type === 'control-received')
        .map((event) => (event.message as { message?: { content?: string } }).message?.content);
      expect(keyed).toEqual(['42']);
    },
  );

  it(
    'hangs up with BYE when the call is ended through its control URL',
    { timeout: 60_000 },
    async () => {
      const { call, sipp } = await dial('outbound-wait-bye.xml');
      await waitFor(() => h.engine.session(call.id)?.state === 'in-progress', 15_000, 'the answer');
      await endThroughControlUrl(h, call.monitor.controlUrl as string);
      const result = await sipp.exited;
      expect(result.code, result.output).toBe(0);
      expect((await endedCall(h, call.id)).endedReason).toBe('assistant-ended-call');
    },
  );

  it('hangs up an answer that accepted none of our codecs', { timeout: 60_000 }, async () => {
    const { call, sipp } = await dial('outbound-bad-answer.xml');
    const result = await sipp.exited;
    expect(result.code, result.output).toBe(0);
    const ended = await endedCall(h, call.id);
    expect(ended.endedReason).toBe('call.in-progress.error-sip-outbound-call-failed-to-connect');
    expect(ended.endedMessage).toBe(
      'The customer answered, but the answer chose no codec we offered',
    );
  });

  it('ends with customer-busy when the customer answers 486', { timeout: 60_000 }, async () => {
    const { call, sipp } = await dial('outbound-busy.xml');
    const result = await sipp.exited;
    expect(result.code, result.output).toBe(0);
    const ended = await endedCall(h, call.id);
    expect(ended.endedReason).toBe('customer-busy');
    expect(ended.endedMessage).toContain('486');
  });

  it(
    'tries the next outbound gateway when the first answers 503',
    { timeout: 60_000 },
    async () => {
      const [downPort, nextPort] = [await freeUdpPort(), await freeUdpPort()];
      const down = startSippUas('outbound-503.xml', downPort);
      const next = startSippUas('outbound-busy.xml', nextPort);
      const { phoneNumberId, assistantId } = await h.outboundNumber({
        port: downPort,
        number: newNumber(),
        trunk: {
          gateways: [
            { ip: '127.0.0.1', port: downPort, inboundEnabled: false },
            { ip: '127.0.0.1', port: nextPort, inboundEnabled: false },
          ],
        },
      });
      const [, call] = await h.post('/call', {
        assistantId,
        phoneNumberId,
        customer: { number: '+15550009999' },
      });
      for (const sipp of [down, next]) {
        const result = await sipp.exited;
        expect(result.code, result.output).toBe(0);
      }
      // The second gateway reached the phone, which was busy.
      expect((await endedCall(h, call.id as string)).endedReason).toBe('customer-busy');
    },
  );

  it('cancels an unanswered call after the ring timeout', { timeout: 60_000 }, async () => {
    const { call, sipp } = await dial('outbound-no-answer.xml');
    const result = await sipp.exited;
    expect(result.code, result.output).toBe(0);
    expect((await endedCall(h, call.id)).endedReason).toBe('customer-did-not-answer');
  });

  it('answers a 401 with digest credentials and connects', { timeout: 60_000 }, async () => {
    const trunk = {
      outboundAuthenticationPlan: { authUsername: 'parla-trunk', authPassword: 's3cret-pass' },
    };
    const { call, sipp } = await dial('outbound-auth.xml', { trunk });
    const result = await sipp.exited;
    expect(result.code, result.output).toBe(0);
    const ended = await endedCall(h, call.id);
    expect(ended.endedReason).toBe('customer-ended-call');
    expect(h.observers.get(call.id)!.statuses.map((status) => status.status)).toContain(
      'in-progress',
    );
  });

  it('fails the call when the trunk refuses our credentials', { timeout: 60_000 }, async () => {
    const trunk = {
      outboundAuthenticationPlan: { authUsername: 'parla-trunk', authPassword: 'wrong' },
    };
    const { call, sipp } = await dial('outbound-auth.xml', { trunk });
    const result = await sipp.exited;
    expect(result.code, result.output).toBe(0);
    const ended = await endedCall(h, call.id);
    expect(ended.endedReason).toBe('call.in-progress.error-sip-outbound-call-failed-to-connect');
    expect(ended.endedMessage).toContain('403');
  });
});

describe('outbound SIP call requests', () => {
  const h = useSipHarness();

  it('refuses customers that cannot be dialled, with a clear 400', async () => {
    const { phoneNumberId, assistantId } = await h.outboundNumber({
      port: 5060,
      number: newNumber(),
    });
    const call = (customer: Doc) => h.post('/call', { assistantId, phoneNumberId, customer });
    const [status, error] = await call({ number: '5550009999' });
    expect(status).toBe(400);
    expect(String(error.message)).toContain(
      'customer.number must be a valid phone number in E.164',
    );
    const [uriStatus, uriError] = await call({ sipUri: 'sip:not a uri' });
    expect(uriStatus).toBe(400);
    expect(String(uriError.message)).toContain('customer.sipUri must be a SIP URI');
    expect((await call({ name: 'nobody' }))[0]).toBe(400);
  });

  it.each([
    [
      { gateways: [{ ip: '127.0.0.1', outboundEnabled: false }] },
      'The SIP trunk has no gateway with outboundEnabled',
    ],
    [
      { outboundProxy: 'sip:proxy.invalid;transport=tcp' },
      'The SIP trunk outbound proxy proxy.invalid does not resolve',
    ],
  ])('ends at once when the trunk cannot be reached (%o)', async (trunk, endedMessage) => {
    const { phoneNumberId, assistantId } = await h.outboundNumber({
      port: 5060,
      number: newNumber(),
      trunk,
    });
    const [status, call] = await h.post('/call', {
      assistantId,
      phoneNumberId,
      customer: { number: '+15550009999' },
    });
    expect(status).toBe(201);
    expect(call).toMatchObject({
      status: 'ended',
      endedReason: 'call.start.error-get-transport',
      endedMessage,
    });
  });

  it('refuses an outbound proxy that is no SIP URI', async () => {
    const [status, error] = await h.post('/credential', {
      provider: 'byo-sip-trunk',
      gateways: [{ ip: '127.0.0.1' }],
      outboundProxy: 'http://proxy.example.com',
    });
    expect(status).toBe(400);
    expect(JSON.stringify(error)).toContain('outboundProxy must match');
  });
});
