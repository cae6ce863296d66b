import { describe, expect, it } from 'vitest';
import { useHarness, type Harness } from '../support/app-harness.js';
import { storeTargets } from '../support/store-targets.js';
import { api, badRequest } from '../support/typed-api.js';

const PASSWORD = 'trunk-password-7f3a';
const TRUNK = {
  provider: 'byo-sip-trunk',
  name: 'carrier',
  gateways: [{ ip: '203.0.113.10' }],
  outboundAuthenticationPlan: {
    authUsername: 'parla',
    authPassword: PASSWORD,
    sipRegisterPlan: { domain: 'sip.example.com', username: 'parla', realm: 'example' },
  },
  sipTrunkingProvider: 'example-carrier',
};

/** The stored document, straight from SQL. */
async function storedDoc(h: Harness, id: string): Promise<Record<string, unknown>> {
  const [row] = await h.store.db.sql<{ doc: Record<string, unknown> }[]>`
    select doc from credentials where id = ${id}`;
  return row?.doc ?? {};
}

/** The opened secret at `path` (dotted) of a credential, as the call engine would read it. */
async function openedSecret(h: Harness, id: string, path: string): Promise<unknown> {
  let value: unknown = await h.store.resources.credentials.getInternal(h.orgA, id);
  for (const key of path.split('.')) {
    value = (value as Record<string, unknown> | undefined)?.[key];
  }
  return value;
}

for (const target of storeTargets()) {
  describe(target.name, () => {
    const h = useHarness(target);
    const a = api(h);

    it('seals secrets at rest and leaves them out of every response', async () => {
      const [status, created] = await a.post('/credential', TRUNK);
      expect(status).toBe(201);
      expect(created.outboundAuthenticationPlan).toEqual({
        authUsername: 'parla',
        sipRegisterPlan: TRUNK.outboundAuthenticationPlan.sipRegisterPlan,
      });
      const doc = await storedDoc(h, created.id);
      const sealed = (doc.outboundAuthenticationPlan as Record<string, string>).authPassword;
      expect(sealed).toMatch(/^sealed:v1:/);
      expect(JSON.stringify(doc)).not.toContain(PASSWORD);
      expect(await openedSecret(h, created.id, 'outboundAuthenticationPlan.authPassword')).toBe(
        PASSWORD,
      );

      const responses = [
        await a.get(`/credential/${created.id}`),
        await a.get('/credential'),
        await a.patch(`/credential/${created.id}`, { name: 'renamed' }),
        await a.del(`/credential/${created.id}`),
      ];
      for (const [code, response] of responses) {
        expect(code).toBe(200);
        expect(JSON.stringify(response)).not.toContain(PASSWORD);
        expect(JSON.stringify(response)).not.toContain('authPassword');
        expect(JSON.stringify(response)).not.toContain('sealed:');
      }
      expect(responses[3]?.[1]).toMatchObject({ id: created.id, name: 'renamed' });
      expect((await a.get(`/credential/${created.id}`))[0]).toBe(404);
    });

    it('fills gateway defaults and checks gateway fields at both sides of each limit', async () => {
      const [, created] = await a.post('/credential', {
        provider: 'byo-sip-trunk',
        gateways: [{ ip: '198.51.100.7' }],
      });
      expect(created.gateways).toEqual([
        {
          ip: '198.51.100.7',
          port: 5060,
          netmask: 32,
          inboundEnabled: true,
          outboundEnabled: true,
          outboundProtocol: 'udp',
        },
      ]);
      const gateway = (fields: object) =>
        a.post('/credential', {
          provider: 'byo-sip-trunk',
          gateways: [{ ip: '1.2.3.4', ...fields }],
        });
      expect((await gateway({ port: 1 }))[0]).toBe(201);
      expect(await gateway({ port: 0 })).toEqual([
        400,
        badRequest('gateways.0.port must not be less than 1'),
      ]);
      expect((await gateway({ port: 65535 }))[0]).toBe(201);
      expect((await gateway({ port: 65536 }))[0]).toBe(400);
      expect((await gateway({ netmask: 24 }))[0]).toBe(201);
      expect((await gateway({ netmask: 23 }))[0]).toBe(400);
      expect((await gateway({ netmask: 32 }))[0]).toBe(201);
      expect((await gateway({ netmask: 33 }))[0]).toBe(400);
      expect((await gateway({ outboundProtocol: 'tls/srtp' }))[0]).toBe(201);
      expect((await gateway({ outboundProtocol: 'sctp' }))[0]).toBe(400);
      for (const ip of ['2001:db8::1', 'sip.example.com', '10.0.0.1']) {
        expect((await gateway({ ip }))[0]).toBe(201);
      }
      for (const ip of ['300.1.1.1', 'bad host!', '-leading.example.com']) {
        expect(await gateway({ ip })).toEqual([
          400,
          badRequest('gateways.0.ip must be an IPv4 or IPv6 address or a hostname'),
        ]);
      }
      const empty = await a.post('/credential', { provider: 'byo-sip-trunk', gateways: [] });
      expect(empty).toEqual([400, badRequest('gateways must contain at least 1 elements')]);
    });

    it('limits name to 40 characters and rejects unknown properties', async () => {
      const named = (name: string) =>
        a.post('/credential', { provider: 'openai', apiKey: 'sk-1', name });
      expect((await named('n'.repeat(40)))[0]).toBe(201);
      expect(await named('n'.repeat(41))).toEqual([
        400,
        badRequest('name must be shorter than or equal to 40 characters'),
      ]);
      expect(await a.post('/credential', { ...TRUNK, techPrefix: '9' })).toEqual([
        400,
        badRequest('property techPrefix should not exist'),
      ]);
      const [, created] = await a.post('/credential', { provider: 'deepgram', apiKey: 'dg-1' });
      expect(await a.patch(`/credential/${created.id}`, { region: 'eu' })).toEqual([
        400,
        badRequest('property region should not exist'),
      ]);
    });

    it('stores webhook authentication plans with their defaults and sealed secrets', async () => {
      const plans = [
        [
          { type: 'bearer', token: 'bearer-secret-1' },
          'token',
          { headerName: 'Authorization', bearerPrefixEnabled: true },
        ],
        [
          {
            type: 'oauth2',
            url: 'https://auth.example.com/token',
            clientId: 'id',
            clientSecret: 'oauth-secret-1',
          },
          'clientSecret',
          { clientId: 'id' },
        ],
        [
          { type: 'hmac', secretKey: 'hmac-secret-1', algorithm: 'sha256' },
          'secretKey',
          {
            signatureHeader: 'x-signature',
            timestampHeader: 'x-timestamp',
            includeTimestamp: true,
            payloadFormat: '{timestamp}.{body}',
            signatureEncoding: 'hex',
            secretIsBase64: false,
          },
        ],
      ] as const;
      for (const [plan, secretField, defaults] of plans) {
        const [status, created] = await a.post('/credential', {
          provider: 'webhook',
          authenticationPlan: plan,
        });
        expect(status).toBe(201);
        expect(created.authenticationPlan).toMatchObject(defaults);
        expect(created.authenticationPlan).not.toHaveProperty(secretField);
        const stored = (await storedDoc(h, created.id)).authenticationPlan as Record<
          string,
          string
        >;
        expect(stored[secretField]).toMatch(/^sealed:v1:/);
        expect(JSON.stringify(stored)).not.toContain((plan as Record<string, string>)[secretField]);
      }
      const hmac = { type: 'hmac', secretKey: 'k', algorithm: 'md5' };
      expect(
        (await a.post('/credential', { provider: 'webhook', authenticationPlan: hmac }))[0],
      ).toBe(400);
      expect(
        await a.post('/credential', {
          provider: 'webhook',
          authenticationPlan: { type: 'bearer' },
        }),
      ).toEqual([400, badRequest('authenticationPlan.token should not be empty')]);
      expect(await a.post('/credential', { provider: 'webhook' })).toEqual([
        400,
        badRequest('authenticationPlan should not be empty'),
      ]);
    });

    it('keeps a stored secret that a PATCH does not resend', async () => {
      const [, trunk] = await a.post('/credential', TRUNK);
      const path = 'outboundAuthenticationPlan.authPassword';
      const [status, renamed] = await a.patch(`/credential/${trunk.id}`, {
        outboundAuthenticationPlan: { authUsername: 'new-user' },
      });
      expect(status).toBe(200);
      expect(renamed.outboundAuthenticationPlan).toEqual({ authUsername: 'new-user' });
      expect(await openedSecret(h, trunk.id, path)).toBe(PASSWORD);
      await a.patch(`/credential/${trunk.id}`, {
        outboundAuthenticationPlan: { authUsername: 'new-user', authPassword: 'rotated' },
      });
      expect(await openedSecret(h, trunk.id, path)).toBe('rotated');

      const [, hook] = await a.post('/credential', {
        provider: 'webhook',
        authenticationPlan: { type: 'bearer', token: 'keep-me' },
      });
      const bearer = { type: 'bearer', headerName: 'X-Api-Key', bearerPrefixEnabled: false };
      expect((await a.patch(`/credential/${hook.id}`, { authenticationPlan: bearer }))[0]).toBe(
        200,
      );
      expect(await openedSecret(h, hook.id, 'authenticationPlan.token')).toBe('keep-me');
      // A plan of another type does not inherit the old secret.
      const hmac = { type: 'hmac', algorithm: 'sha256' };
      expect(await a.patch(`/credential/${hook.id}`, { authenticationPlan: hmac })).toEqual([
        400,
        badRequest('authenticationPlan.secretKey should not be empty'),
      ]);

      const [, key] = await a.post('/credential', { provider: 'openai', apiKey: 'sk-keep' });
      expect((await a.patch(`/credential/${key.id}`, { name: 'llm' }))[1]).not.toHaveProperty(
        'apiKey',
      );
      expect(await openedSecret(h, key.id, 'apiKey')).toBe('sk-keep');
    });

    it('checks API-key credentials, provider changes and sealed-looking input', async () => {
      const [status, created] = await a.post('/credential', {
        provider: 'eleven-labs',
        apiKey: 'el-1',
      });
      expect(status).toBe(201);
      expect(created).not.toHaveProperty('apiKey');
      expect(await a.post('/credential', { provider: 'openai' })).toEqual([
        400,
        badRequest('apiKey should not be empty'),
      ]);
      expect((await a.post('/credential', { provider: 'OpenAI', apiKey: 'x' }))[0]).toBe(400);
      expect((await a.post('/credential', { apiKey: 'x' }))[0]).toBe(400);
      expect(await a.patch(`/credential/${created.id}`, { provider: 'webhook' })).toEqual([
        400,
        badRequest('provider cannot change from eleven-labs to webhook'),
      ]);
      expect(
        (await a.patch(`/credential/${created.id}`, { provider: 'eleven-labs', name: 'x' }))[0],
      ).toBe(200);
      expect(
        await a.post('/credential', { provider: 'openai', apiKey: 'sealed:v1:a.b.c' }),
      ).toEqual([400, badRequest('apiKey must not start with sealed:v1:')]);
    });

    it('limits list size to 0..1000', async () => {
      await a.post('/credential', { provider: 'openai', apiKey: 'sk-list' });
      expect((await a.get('/credential?limit=1'))[1]).toHaveLength(1);
      expect((await a.get('/credential?limit=1000'))[0]).toBe(200);
      expect(await a.get('/credential?limit=1001')).toEqual([
        400,
        badRequest('limit must not be greater than 1000'),
      ]);
    });

    it("keeps org A's credentials from org B", async () => {
      const [, mine] = await a.post('/credential', TRUNK);
      const missing = [
        404,
        { statusCode: 404, error: 'Not Found', message: `Credential with id ${mine.id} not found` },
      ];
      expect(await a.get(`/credential/${mine.id}`, h.keyB)).toEqual(missing);
      expect(await a.patch(`/credential/${mine.id}`, { name: 'x' }, h.keyB)).toEqual(missing);
      const deleted = await h.request({
        method: 'DELETE',
        url: `/credential/${mine.id}`,
        key: h.keyB,
      });
      expect(deleted.statusCode).toBe(404);
      const listB = await a.list('/credential', h.keyB);
      expect(listB.map((c) => c.id)).not.toContain(mine.id);
      expect((await a.get(`/credential/${mine.id}`))[1].name).toBe('carrier');
    });
  });
}
