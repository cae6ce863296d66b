import { describe, expect, it } from 'vitest';
import { useHarness } from '../support/app-harness.js';
import { storeTargets } from '../support/store-targets.js';

for (const target of storeTargets()) {
  describe(`authentication on ${target.name}`, () => {
    const h = useHarness(target);

    it('answers 401 without a key, with a bad key and with a revoked key', async () => {
      const missing = await h.request({ method: 'GET', url: '/tool', key: null });
      expect(missing.statusCode).toBe(401);
      expect(missing.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
      const wrong = await h.request({ method: 'GET', url: '/tool', key: 'parla_not-a-key' });
      expect(wrong.statusCode).toBe(401);
      const basic = await h.request({
        method: 'GET',
        url: '/tool',
        key: null,
        headers: { authorization: `Basic ${h.keyA}` },
      });
      expect(basic.statusCode).toBe(401);
      const { id, key } = await h.store.keys.createKey(h.orgA, 'short-lived');
      expect((await h.request({ method: 'GET', url: '/tool', key })).statusCode).toBe(200);
      await h.store.keys.revokeKey(id);
      expect((await h.request({ method: 'GET', url: '/tool', key })).statusCode).toBe(401);
    });

    it('stores keys only as hashes', async () => {
      const rows = await h.store.db.sql<{ key_hash: string }[]>`select key_hash from api_keys`;
      expect(rows.length).toBeGreaterThanOrEqual(2);
      for (const row of rows) {
        expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
        expect([h.keyA, h.keyB]).not.toContain(row.key_hash);
      }
    });

    it('answers unknown routes and bad JSON with the error body', async () => {
      const unknown = await h.request({ method: 'GET', url: '/nope' });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toEqual({
        statusCode: 404,
        error: 'Not Found',
        message: 'Cannot GET /nope',
      });
      const badJson = await h.request({
        method: 'POST',
        url: '/tool',
        payload: '{"type":',
        headers: { 'content-type': 'application/json' },
      });
      expect(badJson.statusCode).toBe(400);
      expect(badJson.json()).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: 'Request body is not valid JSON',
      });
    });

    it('serves the OpenAPI document and health without a key', async () => {
      const doc = await h.request({ method: 'GET', url: '/openapi.json', key: null });
      expect(doc.statusCode).toBe(200);
      const spec = doc.json();
      const paths = Object.keys(spec.paths as object);
      expect(paths).toEqual(
        expect.arrayContaining([
          '/assistant',
          '/assistant/{id}',
          '/call',
          '/call/{id}',
          '/phone-number',
          '/phone-number/{id}',
          '/credential',
          '/credential/{id}',
          '/tool',
          '/tool/{id}',
          '/knowledge-base',
          '/knowledge-base/{id}',
          '/file',
          '/file/{id}',
          '/file/{id}/content',
          '/workflow',
          '/workflow/{id}',
          '/squad',
          '/squad/{id}',
          '/campaign',
          '/campaign/{id}',
          '/chat',
          '/chat/responses',
          '/chat/{id}',
          '/session',
          '/session/{id}',
          '/logs',
        ]),
      );
      // Generated from the validating schemas: limits appear in the document.
      const toolName =
        spec.paths['/assistant'].post.requestBody.content['application/json'].schema.properties
          .name;
      expect(toolName.maxLength).toBe(40);
      const limit = spec.paths['/tool'].get.parameters.find(
        (p: { name: string }) => p.name === 'limit',
      );
      expect(limit.schema).toMatchObject({ minimum: 0, maximum: 1000, default: 100 });
      expect(spec.paths['/logs'].delete.deprecated).toBe(true);
      expect((await h.request({ method: 'GET', url: '/health', key: null })).json()).toEqual({
        status: 'ok',
      });
    });
  });
}
