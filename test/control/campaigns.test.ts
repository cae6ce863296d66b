import { beforeAll, describe, expect, it } from 'vitest';
import { useHarness } from '../support/app-harness.js';
import { storeTargets } from '../support/store-targets.js';
import { api, badRequest, type Body } from '../support/typed-api.js';

function without(doc: Record<string, unknown>, key: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(doc).filter(([name]) => name !== key));
}

const CUSTOMERS = [{ number: '+14155550101', name: 'Ada' }, { sipUri: 'sip:bob@example.com' }];

for (const target of storeTargets()) {
  describe(target.name, () => {
    const h = useHarness(target);
    const a = api(h);
    let phoneNumberId = '';
    let assistantId = '';
    const body = (extra: object = {}): Record<string, unknown> => ({
      name: 'spring promo',
      phoneNumberId,
      assistantId,
      customers: CUSTOMERS,
      ...extra,
    });

    beforeAll(async () => {
      const trunk = { provider: 'byo-sip-trunk', gateways: [{ ip: '203.0.113.10' }] };
      const credentialId = (await a.post('/credential', trunk))[1].id;
      const number = { provider: 'byo-phone-number', number: '+14155550100', credentialId };
      phoneNumberId = (await a.post('/phone-number', number))[1].id;
      assistantId = (await h.store.resources.assistants.create(h.orgA, { name: 'caller' })).id;
    });

    it('creates, reads, renames, cancels and deletes a campaign', async () => {
      const schedulePlan = { earliestAt: '2030-01-01T09:00:00Z', latestAt: '2030-01-01T17:00:00Z' };
      const [status, created] = await a.post('/campaign', body({ schedulePlan }));
      expect(status).toBe(201);
      expect(created).toMatchObject({
        status: 'scheduled',
        customersTotal: 2,
        callsCounterScheduled: 0,
        callsCounterEnded: 0,
        calls: {},
        orgId: h.orgA,
        schedulePlan,
        customers: [
          { number: '+14155550101', name: 'Ada', numberE164CheckEnabled: true },
          { sipUri: 'sip:bob@example.com', numberE164CheckEnabled: true },
        ],
      });
      expect(created).not.toHaveProperty('endedReason');
      expect(await a.get(`/campaign/${created.id}`)).toEqual([200, created]);

      const [renamedStatus, renamed] = await a.patch(`/campaign/${created.id}`, { name: 'summer' });
      expect([renamedStatus, renamed.name, renamed.status]).toEqual([200, 'summer', 'scheduled']);
      expect(await a.patch(`/campaign/${created.id}`, { status: 'in-progress' })).toEqual([
        400,
        badRequest('status must be one of the following values: ended, cancelled'),
      ]);
      const [, ended] = await a.patch(`/campaign/${created.id}`, { status: 'ended' });
      expect(ended).toMatchObject({
        status: 'ended',
        endedReason: 'campaign.scheduled.ended-by-user',
        name: 'summer',
      });
      const [, again] = await a.patch(`/campaign/${created.id}`, { status: 'cancelled' });
      expect(again).toMatchObject({
        status: 'ended',
        endedReason: 'campaign.scheduled.ended-by-user',
      });

      const [deleted, gone] = await a.del(`/campaign/${created.id}`);
      expect([deleted, gone.id]).toEqual([200, created.id]);
      expect(await a.get(`/campaign/${created.id}`)).toEqual([
        404,
        {
          statusCode: 404,
          error: 'Not Found',
          message: `Campaign with id ${created.id} not found`,
        },
      ]);
    });

    it('needs a name of at most 40 characters and 1..10000 customers', async () => {
      const unnamed = without(body(), 'name');
      expect(await a.post('/campaign', unnamed)).toEqual([
        400,
        badRequest('name should not be empty'),
      ]);
      expect((await a.post('/campaign', body({ name: 'n'.repeat(40) })))[0]).toBe(201);
      expect(await a.post('/campaign', body({ name: 'n'.repeat(41) }))).toEqual([
        400,
        badRequest('name must be shorter than or equal to 40 characters'),
      ]);
      expect(await a.post('/campaign', body({ customers: [] }))).toEqual([
        400,
        badRequest('customers must contain at least 1 elements'),
      ]);
      const many = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ number: `+1415${String(i).padStart(7, '0')}` }));
      const [manyStatus, big] = await a.post('/campaign', body({ customers: many(10_000) }));
      expect([manyStatus, big.customersTotal]).toEqual([201, 10_000]);
      expect(await a.post('/campaign', body({ customers: many(10_001) }))).toEqual([
        400,
        badRequest('customers must contain no more than 10000 elements'),
      ]);
    });

    it('checks each customer', async () => {
      const customers = (second: object) => body({ customers: [CUSTOMERS[0], second] });
      expect((await a.post('/campaign', customers({ number: '4155550102' })))[0]).toBe(400);
      const loose = { number: 'ext42', numberE164CheckEnabled: false };
      expect((await a.post('/campaign', customers(loose)))[0]).toBe(201);
      expect(await a.post('/campaign', customers({ name: 'no way to reach' }))).toEqual([
        400,
        badRequest('customers.1 needs a number or a sipUri'),
      ]);
      expect(await a.post('/campaign', customers({ number: '+14155550102', age: 3 }))).toEqual([
        400,
        badRequest('customers.1.property age should not exist'),
      ]);
    });

    it('needs an existing phone number and exactly one existing handler', async () => {
      const noNumber = without(body(), 'phoneNumberId');
      expect(await a.post('/campaign', noNumber)).toEqual([
        400,
        badRequest('phoneNumberId should not be empty'),
      ]);
      expect(await a.post('/campaign', body({ phoneNumberId: 'nope' }))).toEqual([
        400,
        badRequest('phoneNumberId: no phone number with id nope'),
      ]);
      const noHandler = without(body(), 'assistantId');
      expect(await a.post('/campaign', noHandler)).toEqual([
        400,
        {
          statusCode: 400,
          error: 'Bad Request',
          message: 'Need assistantId, workflowId or squadId.',
        },
      ]);
      const [status, error] = await a.post('/campaign', body({ workflowId: 'w' }));
      expect(status).toBe(400);
      expect(error.message).toContain('Give only one of');
      for (const field of ['assistantId', 'workflowId', 'squadId']) {
        const [code, problem] = await a.post('/campaign', { ...noHandler, [field]: 'nope' });
        expect(code).toBe(400);
        expect(problem.message[0]).toContain(field);
      }
      const workflowId = (await h.store.resources.workflows.create(h.orgA, { nodes: [] })).id;
      expect((await a.post('/campaign', { ...noHandler, workflowId }))[0]).toBe(201);
    });

    it('checks the schedule plan', async () => {
      const at = (earliestAt: string, latestAt?: string) =>
        a.post(
          '/campaign',
          body({ schedulePlan: { earliestAt, ...(latestAt ? { latestAt } : {}) } }),
        );
      expect((await at('2030-01-01T09:00:00Z'))[0]).toBe(201);
      expect((await at('2030-01-01T09:00:00Z', '2030-01-01T09:00:00Z'))[0]).toBe(201);
      expect(await at('2030-01-01T09:00:00Z', '2030-01-01T08:59:59Z')).toEqual([
        400,
        badRequest('schedulePlan.latestAt must not be before schedulePlan.earliestAt'),
      ]);
      expect(await at('tomorrow')).toEqual([
        400,
        badRequest('schedulePlan.earliestAt must be a valid date-time'),
      ]);
    });

    it('rejects unknown properties', async () => {
      expect(await a.post('/campaign', body({ maxConcurrency: 5 }))).toEqual([
        400,
        badRequest('property maxConcurrency should not exist'),
      ]);
      const [, created] = await a.post('/campaign', body());
      expect(await a.patch(`/campaign/${created.id}`, { customers: [] })).toEqual([
        400,
        badRequest('property customers should not exist'),
      ]);
    });

    it('pages the list with metadata, page >= 1, limit 0..1000 and a status filter', async () => {
      const orgC = await h.store.keys.createOrg('org-c');
      const keyC = (await h.store.keys.createKey(orgC, 'test')).key;
      const trunk = { provider: 'byo-sip-trunk', gateways: [{ ip: '203.0.113.20' }] };
      const credentialId = (await a.post('/credential', trunk, keyC))[1].id;
      const number = { provider: 'byo-phone-number', number: '+14155550199', credentialId };
      const numberC = (await a.post('/phone-number', number, keyC))[1].id;
      const assistantC = (await h.store.resources.assistants.create(orgC, {})).id;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const campaign = {
          ...body({ name: `c${i}` }),
          phoneNumberId: numberC,
          assistantId: assistantC,
        };
        ids.push((await a.post('/campaign', campaign, keyC))[1].id);
      }
      const [status, page] = await a.get('/campaign?limit=2&page=2', keyC);
      expect(status).toBe(200);
      expect(page.results).toHaveLength(2);
      expect(page.metadata).toEqual({ itemsPerPage: 2, totalItems: 5, currentPage: 2 });
      const resultIds = async (query: string) =>
        ((await a.get(`/campaign?${query}`, keyC))[1].results as Body[]).map((c) => c.id);
      // The pages together hold each campaign once.
      const seen: string[] = [];
      for (const n of [1, 2, 3]) {
        seen.push(...(await resultIds(`limit=2&page=${n}`)));
      }
      expect(seen.sort()).toEqual([...ids].sort());

      await a.patch(`/campaign/${ids[0]}`, { status: 'ended' }, keyC);
      expect(await resultIds('status=ended')).toEqual([ids[0]]);
      const [, ended] = await a.get('/campaign?status=ended', keyC);
      expect(ended.metadata).toMatchObject({ totalItems: 1 });
      expect((await a.get('/campaign?status=paused', keyC))[0]).toBe(400);

      expect((await a.get('/campaign?page=1', keyC))[1].metadata).toMatchObject({ currentPage: 1 });
      expect(await a.get('/campaign?page=0', keyC)).toEqual([
        400,
        badRequest('page must not be less than 1'),
      ]);
      expect((await a.get('/campaign?limit=1000', keyC))[0]).toBe(200);
      expect(await a.get('/campaign?limit=1001', keyC)).toEqual([
        400,
        badRequest('limit must not be greater than 1000'),
      ]);
    });

    it("keeps org A's campaigns, numbers and assistants from org B", async () => {
      const [, mine] = await a.post('/campaign', body({ name: 'private' }));
      const missing = [
        404,
        { statusCode: 404, error: 'Not Found', message: `Campaign with id ${mine.id} not found` },
      ];
      expect(await a.get(`/campaign/${mine.id}`, h.keyB)).toEqual(missing);
      expect(await a.patch(`/campaign/${mine.id}`, { status: 'ended' }, h.keyB)).toEqual(missing);
      const deleted = await h.request({
        method: 'DELETE',
        url: `/campaign/${mine.id}`,
        key: h.keyB,
      });
      expect(deleted.statusCode).toBe(404);
      const [, listB] = await a.get('/campaign', h.keyB);
      expect(listB).toEqual({
        results: [],
        metadata: { itemsPerPage: 100, totalItems: 0, currentPage: 1 },
      });
      expect((await a.post('/campaign', body(), h.keyB))[0]).toBe(400);
      expect((await a.get(`/campaign/${mine.id}`))[1]).toMatchObject({ status: 'scheduled' });
    });
  });
}
