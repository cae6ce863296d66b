import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { storeTargets } from '../support/store-targets.js';

for (const target of storeTargets()) {
  describe(`ResourceStore on ${target.name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let orgId = '';
    beforeAll(async () => {
      ({ store, cleanup } = await target.open());
      orgId = await store.keys.createOrg('o');
    });
    afterAll(async () => cleanup());

    it('loses no update when many run at once', async () => {
      const tools = store.resources.tools;
      const created = await tools.create(orgId, { type: 'function', count: 0 });
      await Promise.all(
        Array.from({ length: 10 }, () =>
          tools.update(orgId, created.id, (current) => ({
            ...current,
            count: (current.count as number) + 1,
          })),
        ),
      );
      const final = await tools.get(orgId, created.id);
      expect(final?.count).toBe(10);
      expect(Date.parse(final!.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt));
    });

    it('lets mutate query the store (no lock held)', async () => {
      const other = await store.resources.assistants.create(orgId, { name: 'ref' });
      const tool = await store.resources.tools.create(orgId, { type: 'function' });
      const updated = await store.resources.tools.update(orgId, tool.id, async (current) => {
        const found = await store.resources.assistants.get(orgId, other.id);
        return { ...current, assistantName: found?.name };
      });
      expect(updated?.assistantName).toBe('ref');
    });

    it('keeps filter columns in step with the document', async () => {
      const call = await store.resources.calls.create(orgId, {
        assistantId: 'a1',
        status: 'queued',
      });
      await store.resources.calls.update(orgId, call.id, (c) => ({ ...c, assistantId: 'a2' }));
      expect(
        (await store.resources.calls.list(orgId, { limit: 10, equals: { assistantId: 'a1' } }))
          .length,
      ).toBe(0);
      expect(
        (await store.resources.calls.list(orgId, { limit: 10, equals: { assistantId: 'a2' } })).map(
          (c) => c.id,
        ),
      ).toEqual([call.id]);
      expect(
        await store.resources.calls.count(orgId, {
          limit: 10,
          equals: { assistantId: ['a2', 'a3'] },
        }),
      ).toBe(1);
    });

    it('scopes every operation to the org', async () => {
      const mine = await store.resources.squads.create(orgId, { name: 's' });
      const otherOrg = await store.keys.createOrg('other');
      expect(await store.resources.squads.get(otherOrg, mine.id)).toBeNull();
      expect(await store.resources.squads.update(otherOrg, mine.id, (c) => c)).toBeNull();
      expect(await store.resources.squads.delete(otherOrg, mine.id)).toBeNull();
      expect(await store.resources.squads.list(otherOrg, { limit: 100 })).toEqual([]);
      expect((await store.resources.squads.get(orgId, mine.id))?.name).toBe('s');
    });
  });
}
