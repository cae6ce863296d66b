import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebhookSender } from '../../../src/calls/reporting/webhook-sender.js';
import type { LogEntry } from '../../../src/store/log-store.js';
import type { Doc } from '../../../src/store/resource-store.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

let receiver: WebhookReceiver;
let logs: LogEntry[];
let credentials: Record<string, Doc>;
let sleeps: number[];

function sender(options: { maxReplyBytes?: number } = {}): WebhookSender {
  return new WebhookSender({
    logContext: { orgId: 'org-1', callId: 'call-1' },
    credential: (id) => Promise.resolve(credentials[id] ?? null),
    logs: { append: (entry) => logs.push(entry) },
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
    ...options,
  });
}

const message = { message: { type: 'status-update', status: 'ringing' } };

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await receiver.close();
});
beforeEach(() => {
  receiver.clear();
  receiver.respond(() => ({ status: 200, body: {} }));
  logs = [];
  credentials = {};
  sleeps = [];
});

function hmac(algorithm: string, key: string | Buffer, text: string, encoding: 'hex' | 'base64') {
  return createHmac(algorithm, key).update(text, 'utf8').digest(encoding);
}

describe('WebhookSender', () => {
  it('POSTs the JSON body with server.headers and the legacy x-vapi-secret', async () => {
    const outcome = await sender().send(
      { url: `${receiver.url}/hook`, headers: { 'X-Custom': 'one' }, secret: 's3cret' },
      message,
      'status-update',
    );
    expect(outcome).toMatchObject({ ok: true, status: 200, attempts: 1 });
    const [request] = receiver.requests;
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/hook');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['x-custom']).toBe('one');
    expect(request!.headers['x-vapi-secret']).toBe('s3cret');
    expect(request!.body).toEqual(message);
  });

  it('sends a bearer credential, with its header name and prefix setting', async () => {
    credentials.a = { provider: 'webhook', authenticationPlan: { type: 'bearer', token: 'tok' } };
    credentials.b = {
      provider: 'webhook',
      authenticationPlan: {
        type: 'bearer',
        token: 'raw',
        headerName: 'X-Vapi-Secret',
        bearerPrefixEnabled: false,
      },
    };
    await sender().send({ url: receiver.url, credentialId: 'a' }, message, 'status-update');
    await sender().send({ url: receiver.url, credentialId: 'b' }, message, 'status-update');
    expect(receiver.requests[0]!.headers.authorization).toBe('Bearer tok');
    expect(receiver.requests[1]!.headers['x-vapi-secret']).toBe('raw');
    expect(receiver.requests[1]!.headers.authorization).toBeUndefined();
  });

  it('lets an Authorization in server.headers override the credential', async () => {
    credentials.a = { provider: 'webhook', authenticationPlan: { type: 'bearer', token: 'tok' } };
    await sender().send(
      { url: receiver.url, credentialId: 'a', headers: { authorization: 'Basic xyz' } },
      message,
      'status-update',
    );
    expect(receiver.requests[0]!.headers.authorization).toBe('Basic xyz');
  });

  it('signs {timestamp}.{body} with HMAC-SHA256 in hex by default', async () => {
    credentials.h = {
      provider: 'webhook',
      authenticationPlan: { type: 'hmac', secretKey: 'key-1', algorithm: 'sha256' },
    };
    await sender().send({ url: receiver.url, credentialId: 'h' }, message, 'status-update');
    const request = receiver.requests[0]!;
    const timestamp = request.headers['x-timestamp'] as string;
    expect(Number(timestamp)).toBeGreaterThan(1_600_000_000);
    expect(Number(timestamp)).toBeLessThan(10_000_000_000);
    expect(request.headers['x-signature']).toBe(
      hmac('sha256', 'key-1', `${timestamp}.${request.rawBody}`, 'hex'),
    );
  });

  it('honours every HMAC field: algorithm, headers, prefix, format, encoding, base64 secret', async () => {
    const secret = Buffer.from('binary-secret-bytes');
    credentials.h = {
      provider: 'webhook',
      authenticationPlan: {
        type: 'hmac',
        secretKey: `whsec_${secret.toString('base64')}`,
        secretIsBase64: true,
        algorithm: 'sha512',
        signatureHeader: 'webhook-signature',
        timestampHeader: 'webhook-timestamp',
        messageIdHeader: 'webhook-id',
        signaturePrefix: 'v1,',
        payloadFormat: '{svix-id}.{timestamp}.{method}.{url}.{body}',
        signatureEncoding: 'base64',
      },
    };
    const url = `${receiver.url}/signed?x=1`;
    await sender().send({ url, credentialId: 'h' }, message, 'status-update');
    const request = receiver.requests[0]!;
    const id = request.headers['webhook-id'] as string;
    const timestamp = request.headers['webhook-timestamp'] as string;
    expect(id).toMatch(/^msg_/);
    const expected = hmac(
      'sha512',
      secret,
      `${id}.${timestamp}.POST.${url}.${request.rawBody}`,
      'base64',
    );
    expect(request.headers['webhook-signature']).toBe(`v1,${expected}`);
  });

  it('signs the body alone without a timestamp header when includeTimestamp is false', async () => {
    credentials.h = {
      provider: 'webhook',
      authenticationPlan: {
        type: 'hmac',
        secretKey: 'k',
        algorithm: 'sha1',
        includeTimestamp: false,
        payloadFormat: '{timestamp}.{body}',
        signaturePrefix: 'sha1=',
      },
    };
    await sender().send({ url: receiver.url, credentialId: 'h' }, message, 'status-update');
    const request = receiver.requests[0]!;
    expect(request.headers['x-timestamp']).toBeUndefined();
    expect(request.headers['x-signature']).toBe(
      `sha1=${hmac('sha1', 'k', request.rawBody, 'hex')}`,
    );
  });

  it('fetches an OAuth2 client-credentials token once and sends it as Bearer', async () => {
    credentials.o = {
      provider: 'webhook',
      authenticationPlan: {
        type: 'oauth2',
        url: `${receiver.url}/token`,
        clientId: 'cid',
        clientSecret: 'csecret',
        scope: 'hooks',
      },
    };
    receiver.respond((request) =>
      request.path === '/token'
        ? { body: { access_token: 'granted', expires_in: 3600 } }
        : { body: {} },
    );
    const one = sender();
    await one.send({ url: `${receiver.url}/hook`, credentialId: 'o' }, message, 'status-update');
    await one.send({ url: `${receiver.url}/hook`, credentialId: 'o' }, message, 'status-update');
    const tokenRequests = receiver.requests.filter((r) => r.path === '/token');
    expect(tokenRequests).toHaveLength(1);
    const form = new URLSearchParams(tokenRequests[0]!.rawBody);
    expect(Object.fromEntries(form)).toEqual({
      grant_type: 'client_credentials',
      client_id: 'cid',
      client_secret: 'csecret',
      scope: 'hooks',
    });
    const hooks = receiver.requests.filter((r) => r.path === '/hook');
    expect(hooks.map((r) => r.headers.authorization)).toEqual(['Bearer granted', 'Bearer granted']);
  });

  it('retries 5xx replies by the backoff plan and logs every attempt', async () => {
    receiver.respond((_request, index) =>
      index < 2 ? { status: 503, body: {} } : { body: { a: 1 } },
    );
    const outcome = await sender().send(
      {
        url: receiver.url,
        backoffPlan: { type: 'exponential', maxRetries: 5, baseDelaySeconds: 0.5 },
      },
      message,
      'status-update',
    );
    expect(outcome).toMatchObject({ ok: true, status: 200, attempts: 3, reply: { a: 1 } });
    expect(sleeps).toEqual([500, 1000]);
    expect(logs.map((entry) => entry.responseHttpCode)).toEqual([503, 503, 200]);
    expect(logs[0]).toMatchObject({
      type: 'Webhook',
      webhookType: 'status-update',
      orgId: 'org-1',
      callId: 'call-1',
      requestHttpMethod: 'POST',
      error: { message: 'HTTP 503' },
    });
    expect(typeof logs[0]!.requestDurationSeconds).toBe('number');
  });

  it('does not retry without a backoff plan, nor on a 4xx reply', async () => {
    receiver.respond(() => ({ status: 500 }));
    expect(await sender().send({ url: receiver.url }, message, 'x')).toMatchObject({
      ok: false,
      attempts: 1,
    });
    receiver.respond(() => ({ status: 404 }));
    const outcome = await sender().send(
      { url: receiver.url, backoffPlan: { type: 'fixed', maxRetries: 3, baseDelaySeconds: 1 } },
      message,
      'x',
    );
    expect(outcome).toMatchObject({ ok: false, status: 404, attempts: 1 });
  });

  it('gives up after timeoutSeconds', async () => {
    receiver.respond(() => ({ delayMs: 5000, body: {} }));
    const started = Date.now();
    const outcome = await sender().send({ url: receiver.url, timeoutSeconds: 1 }, message, 'x');
    expect(outcome).toMatchObject({ ok: false, status: null, error: 'no reply within 1 s' });
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('refuses replies over the size limit and replies that are not JSON', async () => {
    receiver.respond(() => ({ raw: JSON.stringify({ pad: 'x'.repeat(5000) }) }));
    const big = await sender({ maxReplyBytes: 1000 }).send({ url: receiver.url }, message, 'x');
    expect(big).toMatchObject({ ok: false, status: 200 });
    expect(big.error).toContain('larger than 1000 bytes');
    receiver.respond(() => ({ raw: 'not json' }));
    const text = await sender().send({ url: receiver.url }, message, 'x');
    expect(text).toMatchObject({ ok: true, reply: undefined, error: 'the reply is not JSON' });
  });

  it('never throws: an unreachable server and a missing credential are outcomes', async () => {
    const closed = await WebhookReceiver.start();
    const url = closed.url;
    await closed.close();
    const down = await sender().send({ url }, message, 'x');
    expect(down.ok).toBe(false);
    expect(down.error).toMatch(/^request failed/);
    const noCredential = await sender().send(
      { url: receiver.url, credentialId: 'missing' },
      message,
      'x',
    );
    expect(noCredential.ok).toBe(false);
    expect(noCredential.error).toContain('not a webhook credential');
    expect(receiver.requests).toHaveLength(0);
  });
});
