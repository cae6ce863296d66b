import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { useHarness } from '../support/app-harness.js';
import { storeTargets } from '../support/store-targets.js';

for (const target of storeTargets()) {
  describe(`date filters on ${target.name}`, () => {
    const h = useHarness(target);
    const tools: { id: string; createdAt: string; updatedAt: string }[] = [];

    beforeAll(async () => {
      for (const name of ['t1', 't2', 't3']) {
        await sleep(5); // distinct millisecond timestamps
        tools.push((await h.post('/tool', { type: 'function', function: { name } }))[1]);
      }
      await sleep(5);
      // t1 becomes the most recently updated.
      tools[0] = (await h.patch(`/tool/${tools[0]!.id}`, { function: { name: 't1b' } }))[1];
    });

    const ids = async (query: string): Promise<string[]> => {
      const [status, list] = await h.get(`/tool?${query}`);
      expect(status).toBe(200);
      const names = new Map(tools.map((t, i) => [t.id, `t${i + 1}`]));
      return (list as { id: string }[]).map((t) => names.get(t.id) ?? '?').sort();
    };

    it('filters on createdAt with each comparison', async () => {
      const at = encodeURIComponent(tools[1]!.createdAt);
      expect(await ids(`createdAtGt=${at}`)).toEqual(['t3']);
      expect(await ids(`createdAtGe=${at}`)).toEqual(['t2', 't3']);
      expect(await ids(`createdAtLt=${at}`)).toEqual(['t1']);
      expect(await ids(`createdAtLe=${at}`)).toEqual(['t1', 't2']);
    });

    it('filters on updatedAt with each comparison', async () => {
      const at = encodeURIComponent(tools[2]!.updatedAt);
      expect(await ids(`updatedAtGt=${at}`)).toEqual(['t1']);
      expect(await ids(`updatedAtGe=${at}`)).toEqual(['t1', 't3']);
      expect(await ids(`updatedAtLt=${at}`)).toEqual(['t2']);
      expect(await ids(`updatedAtLe=${at}`)).toEqual(['t2', 't3']);
    });

    it('combines filters and returns newest first', async () => {
      const from = encodeURIComponent(tools[0]!.createdAt);
      const to = encodeURIComponent(tools[2]!.createdAt);
      expect(await ids(`createdAtGt=${from}&createdAtLt=${to}`)).toEqual(['t2']);
      const [, list] = await h.get('/tool');
      expect(list.map((t: { id: string }) => t.id)).toEqual([
        tools[2]!.id,
        tools[1]!.id,
        tools[0]!.id,
      ]);
    });
  });
}
