import { beforeAll, describe, expect, it } from 'vitest';
import { useHarness } from '../support/app-harness.js';
import { storeTargets } from '../support/store-targets.js';
import { api, badRequest, type Body } from '../support/typed-api.js';

const TRUNK = { provider: 'byo-sip-trunk', gateways: [{ ip: '203.0.113.10' }] };
const WEBHOOK = { provider: 'webhook', authenticationPlan: { type: 'bearer', token: 'tok-1' } };

function notFound(id: string): [number, object] {
  const message = `Phone Number with id ${id} not found`;
  return [404, { statusCode: 404, error: 'Not Found', message }];
}

for (const target of storeTargets()) {
  describe(target.name, () => {
    const h = useHarness(target);
    const a = api(h);
    let credentialId = '';
    let webhookCredentialId = '';
    let credentialB = '';
    let assistantId = '';
    let serial = 1000;
    const nextNumber = (): string => `+1415555${serial++}`;
    const body = (extra: object = {}): Record<string, unknown> => ({
      provider: 'byo-phone-number',
      number: nextNumber(),
      credentialId,
      ...extra,
    });
    const create = async (extra: object = {}): Promise<Body> =>
      (await a.post('/phone-number', body(extra)))[1];

    beforeAll(async () => {
      credentialId = (await a.post('/credential', TRUNK))[1].id;
      webhookCredentialId = (await a.post('/credential', WEBHOOK))[1].id;
      credentialB = (await a.post('/credential', TRUNK, h.keyB))[1].id;
      assistantId = (await h.store.resources.assistants.create(h.orgA, { name: 'helper' })).id;
    });

    it('creates, reads, lists, updates and deletes a number', async () => {
      const [status, created] = await a.post('/phone-number', body({ name: 'front desk' }));
      expect(status).toBe(201);
      expect(created).toMatchObject({
        provider: 'byo-phone-number',
        status: 'active',
        numberE164CheckEnabled: true,
        name: 'front desk',
        orgId: h.orgA,
        credentialId,
      });
      expect(await a.get(`/phone-number/${created.id}`)).toEqual([200, created]);
      expect((await a.list('/phone-number')).map((n) => n.id)).toContain(created.id);

      const [patched, updated] = await a.patch(`/phone-number/${created.id}`, { name: 'desk' });
      expect(patched).toBe(200);
      expect(updated).toMatchObject({ name: 'desk', number: created.number, status: 'active' });

      const [deleted, gone] = await a.del(`/phone-number/${created.id}`);
      expect(deleted).toBe(200);
      expect(gone).toMatchObject({ id: created.id, name: 'desk' });
      expect(await a.get(`/phone-number/${created.id}`)).toEqual(notFound(created.id));
      expect((await a.del(`/phone-number/${created.id}`))[0]).toBe(404);
    });

    it('answers that only byo-phone-number is supported for other providers', async () => {
      const twilio = { provider: 'twilio', number: nextNumber(), twilioAccountSid: 'AC1' };
      const [status, error] = await a.post('/phone-number', twilio);
      expect(status).toBe(400);
      expect(String(error.message)).toContain('only byo-phone-number');
      const created = await create();
      const url = `/phone-number/${created.id}`;
      const [patchStatus, patchError] = await a.patch(url, { provider: 'vapi', name: 'x' });
      expect(patchStatus).toBe(400);
      expect(String(patchError.message)).toContain('only byo-phone-number');
      // The SDK sends the provider with every update.
      const [ok, updated] = await a.patch(url, { provider: 'byo-phone-number', name: 'sdk' });
      expect([ok, updated.name]).toEqual([200, 'sdk']);
    });

    it('limits name to 40 characters and number to 3..40', async () => {
      expect((await a.post('/phone-number', body({ name: 'n'.repeat(40) })))[0]).toBe(201);
      expect(await a.post('/phone-number', body({ name: 'n'.repeat(41) }))).toEqual([
        400,
        badRequest('name must be shorter than or equal to 40 characters'),
      ]);
      const loose = (number: string) => body({ number, numberE164CheckEnabled: false });
      expect((await a.post('/phone-number', loose('abc')))[0]).toBe(201);
      expect(await a.post('/phone-number', loose('ab'))).toEqual([
        400,
        badRequest('number must be longer than or equal to 3 characters'),
      ]);
      expect((await a.post('/phone-number', loose('7'.repeat(40))))[0]).toBe(201);
      expect(await a.post('/phone-number', loose('7'.repeat(41)))).toEqual([
        400,
        badRequest('number must be shorter than or equal to 40 characters'),
      ]);
    });

    it('checks E.164 unless numberE164CheckEnabled is false, also on the merged PATCH', async () => {
      const [status, error] = await a.post('/phone-number', body({ number: '4155550100' }));
      expect(status).toBe(400);
      expect(error.message[0]).toMatch(/^number must be a valid phone number in E\.164/);
      const loose = await create({ number: 'trunk4155', numberE164CheckEnabled: false });
      expect(loose.number).toBe('trunk4155');
      const dashed = body({ number: 'a-b-c', numberE164CheckEnabled: false });
      expect((await a.post('/phone-number', dashed))[0]).toBe(400);

      const url = `/phone-number/${loose.id}`;
      // PATCH of the number alone keeps the stored check (off) ...
      expect((await a.patch(url, { number: 'other4155' }))[0]).toBe(200);
      // ... and turning the check on judges the stored number.
      expect((await a.patch(url, { numberE164CheckEnabled: true }))[0]).toBe(400);
      const strict = await create();
      const strictUrl = `/phone-number/${strict.id}`;
      expect((await a.patch(strictUrl, { number: 'abc123' }))[0]).toBe(400);
      const both = { number: 'abc123', numberE164CheckEnabled: false };
      const [okStatus, relaxed] = await a.patch(strictUrl, both);
      expect([okStatus, relaxed.number]).toEqual([200, 'abc123']);
    });

    it('needs a byo-sip-trunk credential of the same org', async () => {
      const noCredential = body();
      delete noCredential.credentialId;
      expect(await a.post('/phone-number', noCredential)).toEqual([
        400,
        badRequest('credentialId should not be empty'),
      ]);
      expect(await a.post('/phone-number', body({ credentialId: 'missing' }))).toEqual([
        400,
        badRequest('credentialId: no credential with id missing'),
      ]);
      expect(await a.post('/phone-number', body({ credentialId: webhookCredentialId }))).toEqual([
        400,
        badRequest('credentialId must name a byo-sip-trunk credential'),
      ]);
      expect((await a.post('/phone-number', body({ credentialId: credentialB })))[0]).toBe(400);
      const created = await create();
      const patch = { credentialId: credentialB };
      expect((await a.patch(`/phone-number/${created.id}`, patch))[0]).toBe(400);
    });

    it('checks handler ids and unsets them, the fallback and the server with null', async () => {
      for (const field of ['assistantId', 'squadId', 'workflowId']) {
        expect(await a.post('/phone-number', body({ [field]: 'nope' }))).toEqual([
          400,
          badRequest(`${field}: no ${field.replace('Id', '')} with id nope`),
        ]);
      }
      const [status, created] = await a.post(
        '/phone-number',
        body({
          assistantId,
          fallbackDestination: { type: 'number', number: '+14155550199' },
          hooks: [{ on: 'call.ringing', do: [{ type: 'say', exact: 'Hello' }] }],
          server: { url: 'https://hooks.example.com/parla', credentialId: webhookCredentialId },
        }),
      );
      expect(status).toBe(201);
      expect(created.server).toMatchObject({ timeoutSeconds: 20 });
      const url = `/phone-number/${created.id}`;
      expect((await a.patch(url, { assistantId: 'nope' }))[0]).toBe(400);
      const [patched, cleared] = await a.patch(url, {
        assistantId: null,
        fallbackDestination: null,
        server: null,
      });
      expect(patched).toBe(200);
      expect(cleared).not.toHaveProperty('assistantId');
      expect(cleared).not.toHaveProperty('fallbackDestination');
      expect(cleared).not.toHaveProperty('server');
      expect(cleared.hooks).toHaveLength(1);
      expect((await a.patch(url, { name: null }))[0]).toBe(400);
    });

    it('validates destinations, hooks and server timeouts', async () => {
      const post = (extra: object) => a.post('/phone-number', body(extra));
      const toAssistant = { type: 'assistant', assistantName: 'a' };
      expect((await post({ fallbackDestination: toAssistant }))[0]).toBe(400);
      expect((await post({ hooks: [{ on: 'call.ending', do: [] }] }))[0]).toBe(400);
      const server = (timeoutSeconds: number) => ({
        server: { url: 'https://hooks.example.com', timeoutSeconds },
      });
      expect((await post(server(1)))[0]).toBe(201);
      expect(await post(server(0))).toEqual([
        400,
        badRequest('server.timeoutSeconds must not be less than 1'),
      ]);
      expect((await post(server(300)))[0]).toBe(201);
      expect(await post(server(301))).toEqual([
        400,
        badRequest('server.timeoutSeconds must not be greater than 300'),
      ]);
      // A server credential must be a webhook credential.
      const trunkAuth = { server: { url: 'https://x.example.com', credentialId } };
      expect(await post(trunkAuth)).toEqual([
        400,
        badRequest('server.credentialId must name a webhook credential'),
      ]);
    });

    it('rejects unknown properties', async () => {
      expect(await a.post('/phone-number', body({ twilioAuthToken: 'x' }))).toEqual([
        400,
        badRequest('property twilioAuthToken should not exist'),
      ]);
      const created = await create();
      expect(await a.patch(`/phone-number/${created.id}`, { status: 'blocked' })).toEqual([
        400,
        badRequest('property status should not exist'),
      ]);
    });

    it('answers 409 for a number already in the org, not for another org', async () => {
      const number = nextNumber();
      expect((await a.post('/phone-number', body({ number })))[0]).toBe(201);
      const [status, error] = await a.post('/phone-number', body({ number }));
      expect([status, error.statusCode, error.error]).toEqual([409, 409, 'Conflict']);
      const other = await create();
      expect((await a.patch(`/phone-number/${other.id}`, { number }))[0]).toBe(409);
      const inB = { provider: 'byo-phone-number', number, credentialId: credentialB };
      expect((await a.post('/phone-number', inB, h.keyB))[0]).toBe(201);
    });

    it('limits list size to 0..1000', async () => {
      await create();
      expect(await a.list('/phone-number?limit=1')).toHaveLength(1);
      expect((await a.get('/phone-number?limit=1000'))[0]).toBe(200);
      expect(await a.get('/phone-number?limit=1001')).toEqual([
        400,
        badRequest('limit must not be greater than 1000'),
      ]);
      expect((await a.get('/phone-number?color=red'))[0]).toBe(400);
    });

    it("keeps org A's numbers, credentials and assistants from org B", async () => {
      const mine = await create({ name: 'mine' });
      const url = `/phone-number/${mine.id}`;
      const missing = notFound(mine.id);
      expect(await a.get(url, h.keyB)).toEqual(missing);
      expect(await a.patch(url, { name: 'x' }, h.keyB)).toEqual(missing);
      expect(await a.del(url, h.keyB)).toEqual(missing);
      expect((await a.list('/phone-number', h.keyB)).map((n) => n.orgId)).not.toContain(h.orgA);
      const inB = { provider: 'byo-phone-number', number: nextNumber(), credentialId };
      expect((await a.post('/phone-number', inB, h.keyB))[0]).toBe(400);
      const withAssistant = { ...inB, credentialId: credentialB, assistantId };
      expect((await a.post('/phone-number', withAssistant, h.keyB))[0]).toBe(400);
      expect((await a.get(url))[1].name).toBe('mine');
    });
  });
}
