import { describe, expect, it } from 'vitest';
import { useHarness, type Harness } from '../support/app-harness.js';
import { storeTargets } from '../support/store-targets.js';

const custom = {
  provider: 'custom-knowledge-base',
  server: { url: 'https://kb.example.com/search' },
};

const trieve = {
  provider: 'trieve',
  name: 'Product docs',
  searchPlan: { searchType: 'hybrid', topK: 5, removeStopWords: true, scoreThreshold: 0.4 },
  createPlan: { type: 'import', providerId: 'dataset-123' },
};

/** A knowledge base as the API returns it; error bodies share the object. */
interface KnowledgeBaseJson {
  id: string;
  orgId: string;
  provider: string;
  name?: string;
  server?: { url: string; timeoutSeconds?: number };
  searchPlan?: { searchType: string; topK?: number; scoreThreshold?: number };
  createPlan?: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  message?: string | string[];
}
type Reply<T> = Promise<[number, T]>;

/** The harness shorthands with the bodies typed. */
function api(h: Harness) {
  return {
    get: (url: string, key?: string) => h.get(url, key) as Reply<KnowledgeBaseJson>,
    list: (url: string, key?: string) => h.get(url, key) as Reply<KnowledgeBaseJson[]>,
    post: (url: string, body: unknown) => h.post(url, body) as Reply<KnowledgeBaseJson>,
    patch: (url: string, body: unknown, key?: string) =>
      h.patch(url, body, key) as Reply<KnowledgeBaseJson>,
    del: (url: string, key?: string) => h.del(url, key) as Reply<KnowledgeBaseJson>,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const target of storeTargets()) {
  describe(target.name, () => {
    const h = useHarness(target);
    const client = api(h);

    it('creates, reads and deletes both kinds', async () => {
      const [status, created] = await client.post('/knowledge-base', custom);
      expect(status).toBe(201);
      expect(created).toMatchObject({
        orgId: h.orgA,
        provider: 'custom-knowledge-base',
        server: { url: 'https://kb.example.com/search', timeoutSeconds: 20 },
      });
      expect(typeof created.id).toBe('string');

      const [trieveStatus, createdTrieve] = await client.post('/knowledge-base', trieve);
      expect(trieveStatus).toBe(201);
      expect(createdTrieve).toMatchObject(trieve);

      const createPlan = { type: 'create', chunkPlans: [{ fileIds: ['f1'], websites: [] }] };
      const [createStatus, withCreatePlan] = await client.post('/knowledge-base', {
        provider: 'trieve',
        createPlan,
      });
      expect(createStatus).toBe(201);
      expect(withCreatePlan.createPlan).toEqual(createPlan);

      expect(await client.get(`/knowledge-base/${created.id}`)).toEqual([200, created]);
      const [, list] = await client.list('/knowledge-base');
      const ids = list.map((kb: { id: string }) => kb.id);
      expect(ids).toEqual(expect.arrayContaining([created.id, createdTrieve.id]));

      expect(await client.del(`/knowledge-base/${created.id}`)).toEqual([200, created]);
      expect((await client.get(`/knowledge-base/${created.id}`))[0]).toBe(404);
      expect((await client.del(`/knowledge-base/${created.id}`))[0]).toBe(404);
    });

    it('validates kind, required fields and unknown properties', async () => {
      const cases: [unknown, string][] = [
        [{}, 'provider should not be empty'],
        [{ provider: 'pinecone' }, 'provider must be one of the supported kinds'],
        [{ provider: 'custom-knowledge-base' }, 'server should not be empty'],
        [{ ...custom, server: { url: 'not a url' } }, 'server.url must be a valid uri'],
        [{ ...custom, name: 'x' }, 'property name should not exist'],
        [{ ...trieve, colour: 'blue' }, 'property colour should not exist'],
        [
          { provider: 'trieve', searchPlan: { searchType: 'vector' } },
          'searchPlan.searchType must be one of the following values: fulltext, semantic, hybrid, text',
        ],
        [
          { provider: 'trieve', searchPlan: { topK: 5 } },
          'searchPlan.searchType should not be empty',
        ],
        [
          { provider: 'trieve', createPlan: { type: 'import' } },
          'createPlan.providerId should not be empty',
        ],
        [
          { provider: 'trieve', createPlan: { type: 'copy' } },
          'createPlan.type must be one of the supported kinds',
        ],
      ];
      for (const [body, message] of cases) {
        const [status, response] = await client.post('/knowledge-base', body);
        expect(status, JSON.stringify(body)).toBe(400);
        expect(response.message, JSON.stringify(body)).toContain(message);
      }
    });

    it('checks searchPlan limits on both sides', async () => {
      const plan = (extra: object) => ({
        provider: 'trieve',
        searchPlan: { searchType: 'fulltext', ...extra },
      });
      for (const ok of [
        { topK: 1 },
        { topK: 1000 },
        { scoreThreshold: 0 },
        { scoreThreshold: 1 },
      ]) {
        expect((await client.post('/knowledge-base', plan(ok)))[0], JSON.stringify(ok)).toBe(201);
      }
      const bad: [object, string][] = [
        [{ topK: 0 }, 'searchPlan.topK must not be less than 1'],
        [{ topK: 1001 }, 'searchPlan.topK must not be greater than 1000'],
        [{ scoreThreshold: -0.01 }, 'searchPlan.scoreThreshold must not be less than 0'],
        [{ scoreThreshold: 1.01 }, 'searchPlan.scoreThreshold must not be greater than 1'],
      ];
      for (const [extra, message] of bad) {
        const [status, body] = await client.post('/knowledge-base', plan(extra));
        expect(status, JSON.stringify(extra)).toBe(400);
        expect(body.message).toEqual([message]);
      }
    });

    it("validates a PATCH against the stored kind's schema", async () => {
      const [, kb] = await client.post('/knowledge-base', trieve);
      const [status, updated] = await client.patch(`/knowledge-base/${kb.id}`, {
        provider: 'trieve',
        searchPlan: { searchType: 'semantic', topK: 10 },
      });
      expect(status).toBe(200);
      expect(updated).toMatchObject({
        name: 'Product docs',
        searchPlan: { searchType: 'semantic', topK: 10 },
        createPlan: trieve.createPlan,
      });
      expect(updated.searchPlan?.scoreThreshold).toBeUndefined();

      const [nameOnly, renamed] = await client.patch(`/knowledge-base/${kb.id}`, {
        name: 'Docs v2',
      });
      expect(nameOnly).toBe(200);
      expect(renamed.name).toBe('Docs v2');

      // A custom knowledge base's field on a trieve one, and the other way round.
      const [serverOnTrieve, serverBody] = await client.patch(`/knowledge-base/${kb.id}`, {
        server: { url: 'https://x.example.com' },
      });
      expect(serverOnTrieve).toBe(400);
      expect(serverBody.message).toEqual(['property server should not exist']);
      const [changed, changedBody] = await client.patch(`/knowledge-base/${kb.id}`, {
        provider: 'custom-knowledge-base',
      });
      expect(changed).toBe(400);
      expect(changedBody.message).toEqual([expect.stringMatching(/provider cannot be changed/)]);
      const [limit] = await client.patch(`/knowledge-base/${kb.id}`, {
        searchPlan: { searchType: 'text', topK: 1001 },
      });
      expect(limit).toBe(400);

      const [, customKb] = await client.post('/knowledge-base', custom);
      const [customStatus, customUpdated] = await client.patch(`/knowledge-base/${customKb.id}`, {
        provider: 'custom-knowledge-base',
        server: { url: 'https://kb2.example.com', timeoutSeconds: 5 },
      });
      expect(customStatus).toBe(200);
      expect(customUpdated.server).toEqual({ url: 'https://kb2.example.com', timeoutSeconds: 5 });
      const [searchOnCustom, searchBody] = await client.patch(`/knowledge-base/${customKb.id}`, {
        searchPlan: { searchType: 'text' },
      });
      expect(searchOnCustom).toBe(400);
      expect(searchBody.message).toEqual(['property searchPlan should not exist']);
      const [after, stored] = await client.get(`/knowledge-base/${customKb.id}`);
      expect(after).toBe(200);
      expect(stored.server?.url).toBe('https://kb2.example.com');
    });

    it("keeps org A's knowledge bases from org B", async () => {
      const [, kb] = await client.post('/knowledge-base', custom);
      expect((await client.get(`/knowledge-base/${kb.id}`, h.keyB))[0]).toBe(404);
      expect(
        (await client.patch(`/knowledge-base/${kb.id}`, { server: custom.server }, h.keyB))[0],
      ).toBe(404);
      expect((await client.del(`/knowledge-base/${kb.id}`, h.keyB))[0]).toBe(404);
      const [, listB] = await client.list('/knowledge-base', h.keyB);
      expect(listB.map((item: { id: string }) => item.id)).not.toContain(kb.id);
      expect(await client.get(`/knowledge-base/${kb.id}`)).toEqual([200, kb]);
    });

    it('applies the eight date filters, inclusive and exclusive', async () => {
      const made: { id: string; createdAt: string; updatedAt: string }[] = [];
      for (let i = 0; i < 3; i++) {
        made.push(
          (await client.post('/knowledge-base', { provider: 'trieve', name: `kb ${i}` }))[1],
        );
        await sleep(5);
      }
      const [a, b, c] = made as [(typeof made)[0], (typeof made)[0], (typeof made)[0]];
      await sleep(5);
      const [, patchedA] = await client.patch(`/knowledge-base/${a.id}`, { name: 'kb a' });
      expect(patchedA.updatedAt > c.updatedAt).toBe(true);
      const ours = new Set(made.map((kb) => kb.id));
      const names = new Map([
        [a.id, 'a'],
        [b.id, 'b'],
        [c.id, 'c'],
      ]);
      const filtered = async (query: string): Promise<string[]> => {
        const [status, list] = await client.list(`/knowledge-base?${query}`);
        expect(status, query).toBe(200);
        return (list as { id: string }[])
          .filter((kb) => ours.has(kb.id))
          .map((kb) => names.get(kb.id) ?? '')
          .sort();
      };
      const at = (value: string) => encodeURIComponent(value);
      expect(await filtered(`createdAtGt=${at(b.createdAt)}`)).toEqual(['c']);
      expect(await filtered(`createdAtGe=${at(b.createdAt)}`)).toEqual(['b', 'c']);
      expect(await filtered(`createdAtLt=${at(b.createdAt)}`)).toEqual(['a']);
      expect(await filtered(`createdAtLe=${at(b.createdAt)}`)).toEqual(['a', 'b']);
      expect(await filtered(`updatedAtGt=${at(patchedA.updatedAt)}`)).toEqual([]);
      expect(await filtered(`updatedAtGe=${at(patchedA.updatedAt)}`)).toEqual(['a']);
      expect(await filtered(`updatedAtLt=${at(patchedA.updatedAt)}`)).toEqual(['b', 'c']);
      expect(await filtered(`updatedAtLe=${at(patchedA.updatedAt)}`)).toEqual(['a', 'b', 'c']);
      expect(
        await filtered(`createdAtGe=${at(a.createdAt)}&updatedAtLt=${at(patchedA.updatedAt)}`),
      ).toEqual(['b', 'c']);

      const [badDate] = await client.get('/knowledge-base?createdAtGt=yesterday');
      expect(badDate).toBe(400);
      const [, limited] = await client.list('/knowledge-base?limit=2');
      expect(limited).toHaveLength(2);
      expect((await client.get('/knowledge-base?limit=1001'))[0]).toBe(400);
    });
  });
}
