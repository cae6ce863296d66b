import { describe, expect, it } from 'vitest';
import { useHarness } from '../support/app-harness.js';
import { storeTargets } from '../support/store-targets.js';

for (const target of storeTargets()) {
  describe(`logs on ${target.name}`, () => {
    const h = useHarness(target);

    it('records API requests with redacted secrets, paginated', async () => {
      const [, tool] = await h.post('/tool', {
        type: 'function',
        function: { name: 'logged' },
        server: { url: 'https://x.test', secret: 's3cret-value' },
      });
      for (let i = 0; i < 4; i += 1) {
        await h.get(`/tool/${tool.id}`);
      }
      await h.store.logs.flush();
      const [status, page] = await h.get('/logs?type=API&limit=2&page=2&sortOrder=ASC');
      expect(status).toBe(200);
      expect(page.metadata).toEqual({ itemsPerPage: 2, totalItems: 5, currentPage: 2 });
      expect(page.results).toHaveLength(2);
      const [, all] = await h.get('/logs?limit=100&sortOrder=ASC');
      const create = all.results.find(
        (e: { requestHttpMethod: string }) => e.requestHttpMethod === 'POST',
      );
      expect(create).toMatchObject({
        type: 'API',
        orgId: h.orgA,
        requestPath: '/tool',
        responseHttpCode: 201,
        requestHeaders: { authorization: '[redacted]' },
      });
      expect(typeof create.requestDurationSeconds).toBe('number');
      const text = JSON.stringify(all);
      expect(text).not.toContain(h.keyA);
      expect(text).not.toContain('s3cret-value');
    });

    it('stores an entry whose strings hold NUL, with U+FFFD in their place', async () => {
      h.store.logs.append({
        time: new Date().toISOString(),
        orgId: h.orgA,
        type: 'API',
        requestPath: '/nul\u0000here',
      });
      await h.store.logs.flush();
      const [, all] = await h.get('/logs?limit=100');
      const paths = all.results.map((e: { requestPath?: string }) => e.requestPath);
      expect(paths).toContain('/nul\uFFFDhere');
    });

    it('keeps logs per org, filters and deletes', async () => {
      await h.get('/tool', h.keyB);
      await h.post('/tool', { type: 'bogus' }, h.keyB);
      await h.store.logs.flush();
      const [, mine] = await h.get('/logs', h.keyB);
      expect(mine.results.every((e: { orgId: string }) => e.orgId === h.orgB)).toBe(true);
      const failed = mine.results.find(
        (e: { responseHttpCode: number }) => e.responseHttpCode === 400,
      );
      expect(failed.error.message).toContain('type must be one of the supported kinds');
      const [, none] = await h.get('/logs?type=Webhook', h.keyB);
      expect(none.metadata.totalItems).toBe(0);
      const [badStatus, bad] = await h.get('/logs?page=0', h.keyB);
      expect([badStatus, bad.message]).toEqual([400, ['page must not be less than 1']]);
      const [, badOrder] = await h.get('/logs?sortOrder=UP', h.keyB);
      expect(badOrder.message).toEqual([
        'sortOrder must be one of the following values: ASC, DESC',
      ]);
      const [delStatus, deleted] = await h.del('/logs?type=API', h.keyB);
      expect(delStatus).toBe(200);
      expect(deleted.deletedCount).toBeGreaterThanOrEqual(3);
      await h.store.logs.flush();
      const [, after] = await h.get('/logs?limit=1000', h.keyB);
      // Only requests made after the delete remain.
      expect(
        after.results.every(
          (e: { requestHttpMethod: string; requestPath: string }) => e.requestPath === '/logs',
        ),
      ).toBe(true);
      const [, orgA] = await h.get('/logs?limit=0');
      expect(orgA.metadata.totalItems).toBeGreaterThan(0);
    });
  });
}
