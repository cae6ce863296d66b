/**
 * assistant-request against a local HTTP server: the envelope, the server's headers, the
 * deadline (injected, short), retries inside it, and how each reply is read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { interpretReply } from '../../src/calls/assistant-request-reply.js';
import {
  assistantRequestDeadlineMs,
  assistantRequestServer,
  requestAssistant,
} from '../../src/calls/assistant-request.js';
import type { Resource } from '../../src/store/resource-store.js';
import type { Store } from '../../src/store/store.js';
import { storeTargets } from '../support/store-targets.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

let store: Store;
let cleanup: () => Promise<void>;
let orgId = '';
let receiver: WebhookReceiver;
let call: Resource;
let phoneNumber: Resource;
beforeAll(async () => {
  ({ store, cleanup } = await storeTargets()[0]!.open());
  orgId = await store.keys.createOrg('ar');
  receiver = await WebhookReceiver.start();
  phoneNumber = await store.resources.phoneNumbers.create(orgId, {
    provider: 'byo-phone-number',
    number: '+14155550100',
  });
  call = await store.resources.calls.create(orgId, {
    type: 'inboundPhoneCall',
    phoneNumberId: phoneNumber.id,
    customer: { number: '+15550001111' },
  });
});
afterAll(async () => {
  await receiver.close();
  await cleanup();
});

const ask = (server: Record<string, unknown>, deadlineMs?: number) =>
  requestAssistant({
    store,
    orgId,
    call,
    phoneNumber,
    server: { url: receiver.url, ...server },
    ...(deadlineMs !== undefined && { deadlineMs }),
    now: () => 1_700_000_000_000,
  });

describe('assistant-request', () => {
  it('posts the envelope with the server headers and reads an assistant', async () => {
    receiver.clear();
    receiver.respond(() => ({ body: { assistant: { name: 'Inline' } } }));
    const outcome = await ask({ secret: 's3cret', headers: { 'x-tenant': 't1' } });
    expect(outcome).toMatchObject({ kind: 'handler', fields: { assistant: { name: 'Inline' } } });
    const [request] = receiver.requests;
    expect(request?.headers['x-vapi-secret']).toBe('s3cret');
    expect(request?.headers['x-tenant']).toBe('t1');
    expect(request?.body).toEqual({
      message: {
        type: 'assistant-request',
        timestamp: 1_700_000_000_000,
        call: JSON.parse(JSON.stringify(call)),
        phoneNumber: JSON.parse(JSON.stringify(phoneNumber)),
        customer: { number: '+15550001111' },
      },
    });
    await store.logs.flush();
    const { results } = await store.logs.list(orgId, {
      limit: 10,
      page: 1,
      sortOrder: 'DESC',
      webhookType: 'assistant-request',
      callId: call.id,
    });
    expect(results[0]).toMatchObject({ type: 'Webhook', responseHttpCode: 200 });
  });

  it('gives up at the deadline, retries included', async () => {
    receiver.clear();
    let answered = false;
    receiver.respond(() => ({ delayMs: 5000, body: { assistantId: 'late' } }));
    const outcome = await ask(
      { backoffPlan: { type: 'fixed', maxRetries: 3, baseDelaySeconds: 0 } },
      300,
    ).finally(() => (answered = receiver.requests.length > 0));
    expect(answered).toBe(true);
    expect(outcome).toEqual({
      kind: 'failed',
      endedReason: 'assistant-request-failed',
      message: `assistant-request to ${receiver.url} failed: no reply within 0.3 s`,
    });
  });

  it('retries a 5xx within the deadline', async () => {
    receiver.clear();
    receiver.respond((_request, index) =>
      index === 0 ? { status: 503 } : { body: { assistantId: 'missing' } },
    );
    const outcome = await ask({
      backoffPlan: { type: 'fixed', maxRetries: 2, baseDelaySeconds: 0 },
    });
    expect(receiver.requests).toHaveLength(2);
    expect(outcome).toMatchObject({
      kind: 'failed',
      endedReason: 'assistant-request-returned-invalid-assistant',
    });
  });

  it('fails on a non-2xx or a body that is not JSON', async () => {
    receiver.respond(() => ({ status: 404, body: { assistantId: 'x' } }));
    expect(await ask({})).toMatchObject({
      kind: 'failed',
      endedReason: 'assistant-request-failed',
    });
    receiver.respond(() => ({ raw: '<html>' }));
    expect(await ask({})).toMatchObject({
      kind: 'failed',
      endedReason: 'assistant-request-failed',
      message: expect.stringContaining('not JSON'),
    });
  });

  it('has a deadline of 7.5 s, or the server timeoutSeconds when shorter', () => {
    expect(assistantRequestDeadlineMs({ url: 'http://x' })).toBe(7500);
    expect(assistantRequestDeadlineMs({ url: 'http://x', timeoutSeconds: 20 })).toBe(7500);
    expect(assistantRequestDeadlineMs({ url: 'http://x', timeoutSeconds: 2 })).toBe(2000);
    expect(assistantRequestDeadlineMs({ url: 'http://x' }, 100)).toBe(100);
  });

  it("goes to the phone number's server; none without one", () => {
    expect(assistantRequestServer({ server: { url: 'http://a' } })).toEqual({ url: 'http://a' });
    expect(assistantRequestServer({ server: { timeoutSeconds: 3 } })).toBeNull();
    expect(assistantRequestServer(null)).toBeNull();
  });
});

describe('assistant-request replies', () => {
  const read = (reply: unknown) => interpretReply(store, orgId, reply);

  it('put an error before everything, and a destination before any assistant', async () => {
    expect(
      await read({ error: ' Closed ', destination: { type: 'sip', sipUri: 'sip:a@b' } }),
    ).toEqual({
      kind: 'error',
      endedReason: 'assistant-request-returned-error',
      message: 'Closed',
    });
    expect(await read({ error: { code: 1 } })).toMatchObject({
      kind: 'error',
      endedReason: 'assistant-request-returned-unspeakable-error',
    });
    expect(
      await read({ destination: { type: 'number', number: '+14155550199' }, assistantId: 'x' }),
    ).toEqual({
      kind: 'destination',
      destination: { type: 'number', number: '+14155550199', numberE164CheckEnabled: true },
    });
  });

  it('check destinations as the API does', async () => {
    for (const destination of [
      { type: 'number', number: '4155550199' },
      { type: 'sip', sipUri: 'http://nope' },
      { type: 'assistant', assistantName: 'x' },
    ]) {
      expect(await read({ destination })).toMatchObject({
        kind: 'failed',
        endedReason: 'assistant-request-returned-invalid-assistant',
      });
    }
  });

  it('take one stored or inline handler, checked, with overrides', async () => {
    const stored = await store.resources.assistants.create(orgId, { name: 'Stored' });
    expect(
      await read({ assistantId: stored.id, assistantOverrides: { variableValues: { a: 1 } } }),
    ).toEqual({
      kind: 'handler',
      fields: { assistantId: stored.id, assistantOverrides: { variableValues: { a: 1 } } },
    });
    const squad = await read({ squad: { members: [{ assistantId: stored.id }] } });
    expect(squad).toMatchObject({ kind: 'handler', fields: { squad: { members: [{}] } } });
    expect(await read({ squad: { members: [{ assistantId: 'gone' }] } })).toMatchObject({
      kind: 'failed',
      endedReason: 'assistant-request-returned-invalid-assistant',
      message: expect.stringContaining('gone'),
    });
    expect(await read({ assistantId: stored.id, squadId: 'x' })).toMatchObject({
      endedReason: 'assistant-request-returned-invalid-assistant',
      message: expect.stringContaining('more than one'),
    });
    expect(await read({ assistant: { name: 'x'.repeat(41) } })).toMatchObject({
      endedReason: 'assistant-request-returned-invalid-assistant',
    });
  });

  it('report no assistant for an empty reply and invalid for a non-object', async () => {
    expect(await read(undefined)).toMatchObject({
      endedReason: 'assistant-request-returned-no-assistant',
    });
    expect(await read({ assistantOverrides: {} })).toMatchObject({
      endedReason: 'assistant-request-returned-no-assistant',
    });
    expect(await read(['assistant'])).toMatchObject({
      endedReason: 'assistant-request-returned-invalid-assistant',
    });
  });
});
