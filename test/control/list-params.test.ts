import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { useHarness } from '../support/app-harness.js';
import { storeTargets } from '../support/store-targets.js';

for (const target of storeTargets()) {
  describe(`paged list parameters on ${target.name}`, () => {
    const h = useHarness(target);

    it('sorts by createdAt or updatedAt and filters by lists of ids', async () => {
      const ids: string[] = [];
      for (const name of ['s1', 's2', 's3']) {
        await sleep(5);
        ids.push((await h.post('/session', { name }))[1].id);
      }
      await sleep(5);
      await h.patch(`/session/${ids[0]}`, { name: 's1b' });
      const names = async (query: string) =>
        ((await h.get(`/session?${query}`))[1].results as { name: string }[]).map((s) => s.name);
      expect(await names('sortBy=createdAt')).toEqual(['s3', 's2', 's1b']);
      expect(await names('sortBy=updatedAt')).toEqual(['s1b', 's3', 's2']);
      expect(await names('sortBy=updatedAt&sortOrder=ASC')).toEqual(['s2', 's3', 's1b']);
      expect(await names(`idAny=${ids[0]},${ids[2]}&sortOrder=ASC`)).toEqual(['s1b', 's3']);
      const [status, error] = await h.get('/session?sortBy=cost');
      expect([status, error.message]).toEqual([
        400,
        ['sortBy must be one of the following values: createdAt, updatedAt'],
      ]);
      expect((await h.get('/chat?idAny=,'))[0]).toBe(400);
    });
  });
}
