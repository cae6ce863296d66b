import { describe, expect, it } from 'vitest';
import { OTHER_TOOL_TYPES } from '../../src/control/schemas/tool.js';
import { useHarness } from '../support/app-harness.js';
import { storeTargets } from '../support/store-targets.js';

const apiRequest = (extra: Record<string, unknown> = {}) => ({
  type: 'apiRequest',
  method: 'POST',
  url: 'https://example.test/hook',
  name: 'lookup_order',
  ...extra,
});

for (const target of storeTargets()) {
  describe(`tools on ${target.name}`, () => {
    const h = useHarness(target);

    it('creates, reads, lists, updates and deletes an apiRequest tool with defaults filled', async () => {
      const [status, created] = await h.post('/tool', apiRequest());
      expect(status).toBe(201);
      expect(created).toMatchObject({ type: 'apiRequest', timeoutSeconds: 20, orgId: h.orgA });
      const [, got] = await h.get(`/tool/${created.id}`);
      expect(got).toEqual(created);
      const [, list] = await h.get('/tool');
      expect(list.map((t: { id: string }) => t.id)).toContain(created.id);
      const [patchStatus, patched] = await h.patch(`/tool/${created.id}`, {
        description: 'Looks up an order',
        timeoutSeconds: 5,
      });
      expect(patchStatus).toBe(200);
      expect(patched).toMatchObject({
        description: 'Looks up an order',
        timeoutSeconds: 5,
        url: 'https://example.test/hook',
      });
      expect(Date.parse(patched.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt));
      const [delStatus, deleted] = await h.del(`/tool/${created.id}`);
      expect(delStatus).toBe(200);
      expect(deleted.id).toBe(created.id);
      expect((await h.get(`/tool/${created.id}`))[0]).toBe(404);
    });

    it('does not fill defaults on PATCH', async () => {
      const [, created] = await h.post('/tool', apiRequest({ timeoutSeconds: 45 }));
      const [, patched] = await h.patch(`/tool/${created.id}`, { name: 'renamed' });
      expect(patched.timeoutSeconds).toBe(45);
    });

    it('fills the function of endCall, dtmf and transferCall tools', async () => {
      const [, endCall] = await h.post('/tool', { type: 'endCall' });
      expect(endCall.function.name).toBe('endCall');
      const [, dtmf] = await h.post('/tool', { type: 'dtmf' });
      expect(dtmf.function.parameters.required).toEqual(['keys']);
      const [, transfer] = await h.post('/tool', {
        type: 'transferCall',
        destinations: [{ type: 'number', number: '+14155550100' }],
      });
      expect(transfer.function.parameters.properties.destination.enum).toEqual(['+14155550100']);
      const [, custom] = await h.post('/tool', { type: 'endCall', function: { name: 'hang_up' } });
      expect(custom.function).toEqual({ name: 'hang_up' });
    });

    it('validates name, description and timeoutSeconds on both sides of each bound', async () => {
      const ok = async (body: object) => expect((await h.post('/tool', body))[0]).toBe(201);
      const bad = async (body: object, message: string) => {
        const [status, error] = await h.post('/tool', body);
        expect(status).toBe(400);
        expect(error).toEqual({
          statusCode: 400,
          error: 'Bad Request',
          message: expect.arrayContaining([message]),
        });
      };
      await ok(apiRequest({ name: 'a'.repeat(40) }));
      await bad(
        apiRequest({ name: 'a'.repeat(41) }),
        'name must be shorter than or equal to 40 characters',
      );
      await bad(
        apiRequest({ name: 'has space' }),
        'name must match ^[a-zA-Z0-9_-]{1,40}$ regular expression',
      );
      await bad(
        apiRequest({ name: '' }),
        'name must match ^[a-zA-Z0-9_-]{1,40}$ regular expression',
      );
      await ok(apiRequest({ description: 'd'.repeat(1000) }));
      await bad(
        apiRequest({ description: 'd'.repeat(1001) }),
        'description must be shorter than or equal to 1000 characters',
      );
      await ok(apiRequest({ timeoutSeconds: 1 }));
      await ok(apiRequest({ timeoutSeconds: 300 }));
      await bad(apiRequest({ timeoutSeconds: 0 }), 'timeoutSeconds must not be less than 1');
      await bad(apiRequest({ timeoutSeconds: 301 }), 'timeoutSeconds must not be greater than 300');
      await ok({ type: 'function', function: { name: 'f'.repeat(40) } });
      await bad(
        { type: 'function', function: { name: 'f'.repeat(41) } },
        'function.name must be shorter than or equal to 40 characters',
      );
      await bad(
        { type: 'function', function: { name: 'ok', description: 'x'.repeat(1001) } },
        'function.description must be shorter than or equal to 1000 characters',
      );
    });

    it('lists every problem, rejects unknown properties and unknown kinds', async () => {
      const [status, error] = await h.post(
        '/tool',
        apiRequest({ colour: 'red', timeoutSeconds: 0, method: 'FETCH' }),
      );
      expect(status).toBe(400);
      expect(error.message).toEqual(
        expect.arrayContaining([
          'property colour should not exist',
          'timeoutSeconds must not be less than 1',
          'method must be one of the following values: POST, GET, PUT, PATCH, DELETE',
        ]),
      );
      const [, nested] = await h.post(
        '/tool',
        apiRequest({
          backoffPlan: { type: 'fixed', maxRetries: 1, baseDelaySeconds: 1, jitter: 1 },
        }),
      );
      expect(nested.message).toContain('backoffPlan.property jitter should not exist');
      const [kindStatus, kind] = await h.post('/tool', { type: 'teleport' });
      expect(kindStatus).toBe(400);
      expect(kind.message).toEqual(['type must be one of the supported kinds']);
      const [, missing] = await h.post('/tool', { url: 'https://x.test' });
      expect(missing.message).toEqual(['type should not be empty']);
    });

    it('accepts all 22 tool kinds', async () => {
      const kinds = [
        'apiRequest',
        'function',
        'endCall',
        'transferCall',
        'dtmf',
        'query',
        ...OTHER_TOOL_TYPES,
      ];
      expect(kinds).toHaveLength(22);
      for (const type of kinds) {
        const body =
          type === 'apiRequest'
            ? apiRequest()
            : type === 'function'
              ? { type, function: { name: 'f' } }
              : { type };
        const [status, created] = await h.post('/tool', body);
        expect([type, status]).toEqual([type, 201]);
        expect(created.type).toBe(type);
      }
    });

    it('validates PATCH against the stored kind and refuses a kind change', async () => {
      const [, tool] = await h.post('/tool', apiRequest());
      const [s1, e1] = await h.patch(`/tool/${tool.id}`, { timeoutSeconds: 301 });
      expect([s1, e1.message]).toEqual([400, ['timeoutSeconds must not be greater than 300']]);
      const [s2, e2] = await h.patch(`/tool/${tool.id}`, { destinations: [] });
      expect([s2, e2.message]).toEqual([400, ['property destinations should not exist']]);
      const [s3] = await h.patch(`/tool/${tool.id}`, { type: 'function' });
      expect(s3).toBe(400);
      const [s4, same] = await h.patch(`/tool/${tool.id}`, {
        type: 'apiRequest',
        messages: [{ type: 'request-start', content: 'One moment' }],
      });
      expect(s4).toBe(200);
      expect(same.messages).toEqual([{ type: 'request-start', content: 'One moment' }]);
    });

    it('keeps orgs apart', async () => {
      const [, tool] = await h.post('/tool', apiRequest());
      expect((await h.get(`/tool/${tool.id}`, h.keyB))[0]).toBe(404);
      const [patchStatus, patchError] = await h.patch(
        `/tool/${tool.id}`,
        { name: 'stolen' },
        h.keyB,
      );
      expect(patchStatus).toBe(404);
      const [missingStatus, missingError] = await h.patch(
        '/tool/00000000-0000-4000-8000-000000000000',
        { name: 'x' },
        h.keyB,
      );
      expect(missingStatus).toBe(404);
      expect(Object.keys(patchError)).toEqual(Object.keys(missingError));
      expect((await h.del(`/tool/${tool.id}`, h.keyB))[0]).toBe(404);
      const [, listB] = await h.get('/tool', h.keyB);
      expect(listB.map((t: { id: string }) => t.id)).not.toContain(tool.id);
      const [, still] = await h.get(`/tool/${tool.id}`);
      expect(still.name).toBe('lookup_order');
    });

    it('applies limit bounds', async () => {
      expect((await h.get('/tool?limit=0'))[1]).toEqual([]);
      expect((await h.get('/tool?limit=1000'))[0]).toBe(200);
      expect((await h.get('/tool?limit=1'))[1]).toHaveLength(1);
      const [s1, e1] = await h.get('/tool?limit=1001');
      expect([s1, e1.message]).toEqual([400, ['limit must not be greater than 1000']]);
      const [s2, e2] = await h.get('/tool?limit=-1');
      expect([s2, e2.message]).toEqual([400, ['limit must not be less than 0']]);
      const [s3, e3] = await h.get('/tool?createdAtGt=yesterday');
      expect([s3, e3.message]).toEqual([400, ['createdAtGt must be a valid date-time']]);
    });
  });
}
