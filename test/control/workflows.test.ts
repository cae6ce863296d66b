import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { useHarness, type Harness } from '../support/app-harness.js';
import { storeTargets } from '../support/store-targets.js';

interface Body {
  id: string;
  createdAt: string;
  updatedAt: string;
  message: string[];
  nodes: Record<string, unknown>[];
  [key: string]: unknown;
}

type Reply = [number, Body];

const greet = {
  type: 'conversation',
  name: 'greet',
  isStart: true,
  prompt: 'Greet the caller',
  model: { provider: 'openai', model: 'gpt-4o', custom: true },
  voice: { provider: 'test-voice', chunkPlan: {} },
  globalNodePlan: { enabled: false, enterCondition: '' },
  variableExtractionPlan: { aliases: [{ key: 'city', value: '{{city}}' }] },
  metadata: { x: 1 },
};
const lookup = { type: 'tool', name: 'lookup', tool: { type: 'function' }, position: { x: 1 } };
const edge = { from: 'greet', to: 'lookup', condition: { type: 'ai', prompt: 'needs lookup' } };

function workflow(extra: object = {}) {
  return { name: 'Support flow', nodes: [greet, lookup], edges: [edge], ...extra };
}

for (const target of storeTargets()) {
  describe(target.name, () => {
    const h: Harness = useHarness(target);
    const post = (url: string, body?: unknown, key?: string) =>
      h.post(url, body, key) as Promise<Reply>;
    const get = (url: string, key?: string) => h.get(url, key) as Promise<Reply>;
    const patch = (url: string, body?: unknown, key?: string) =>
      h.patch(url, body, key) as Promise<Reply>;
    const del = (url: string, key?: string) => h.del(url, key) as Promise<Reply>;
    const list = (url: string, key?: string) => h.get(url, key) as Promise<[number, Body[]]>;

    it('creates, gets, lists, updates and deletes a workflow', async () => {
      const [status, created] = await post(
        '/workflow',
        workflow({ globalPrompt: 'Be brief', startSpeakingPlan: {} }),
      );
      expect(status, JSON.stringify(created)).toBe(201);
      expect(created).toMatchObject({
        name: 'Support flow',
        orgId: h.orgA,
        edges: [edge],
        globalPrompt: 'Be brief',
        startSpeakingPlan: { waitSeconds: 0.4 },
      });
      // Conversation nodes get their defaults; other node kinds keep their own fields.
      expect(created.nodes[0]).toMatchObject({ voice: { chunkPlan: { minCharacters: 30 } } });
      expect(created.nodes[1]).toEqual(lookup);
      expect(await get(`/workflow/${created.id}`)).toEqual([200, created]);
      const [, items] = await list('/workflow');
      expect(items.map((item) => item.id)).toContain(created.id);

      const [patchStatus, updated] = await patch(`/workflow/${created.id}`, {
        name: 'Renamed',
        edges: [],
      });
      expect(patchStatus).toBe(200);
      expect(updated).toMatchObject({ name: 'Renamed', edges: [], globalPrompt: 'Be brief' });
      expect(updated.nodes).toHaveLength(2);

      expect(await del(`/workflow/${created.id}`)).toEqual([200, updated]);
      expect((await get(`/workflow/${created.id}`))[0]).toBe(404);
    });

    it('validates conversation nodes in full and other nodes loosely', async () => {
      const [status, body] = await post('/workflow', {
        name: 'bad',
        nodes: [
          { ...greet, colour: 'red', voice: { provider: 'v', chunkPlan: { minCharacters: 81 } } },
          { type: 'conversation', name: 'second', globalNodePlan: { enabled: 'yes' } },
          { type: 'tool' },
        ],
      });
      expect(status).toBe(400);
      expect(body).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: ['nodes.2.name should not be empty'],
      });
      const [, nodeErrors] = await post('/workflow', {
        name: 'bad',
        nodes: [
          { ...greet, colour: 'red', voice: { provider: 'v', chunkPlan: { minCharacters: 81 } } },
          { type: 'conversation', name: 'second', globalNodePlan: { enabled: 'yes' } },
        ],
      });
      expect(nodeErrors.message).toEqual([
        'nodes.0.property colour should not exist',
        'nodes.0.voice.chunkPlan.minCharacters must not be greater than 80',
        'nodes.1.globalNodePlan.enabled must be a boolean',
      ]);
      const [, missing] = await post('/workflow', { nodes: [] });
      expect(missing.message).toEqual(['name should not be empty']);
    });

    it('checks edges, node names and plan fields', async () => {
      const [, edges] = await post(
        '/workflow',
        workflow({
          edges: [
            { from: 'greet', to: 'nowhere' },
            { from: 'x', to: 'greet' },
          ],
        }),
      );
      expect(edges.message).toEqual([
        'edges.0.to names no node: nowhere',
        'edges.1.from names no node: x',
      ]);
      const [, condition] = await post(
        '/workflow',
        workflow({ edges: [{ ...edge, condition: { type: 'logic', prompt: 'x' } }] }),
      );
      expect(condition.message).toEqual(['edges.0.condition.type must be equal to "ai"']);
      const [, names] = await post('/workflow', workflow({ nodes: [greet, greet], edges: [] }));
      expect(names.message).toEqual([
        'nodes.1.name greet is used by another node',
        'nodes must have at most one node with isStart true',
      ]);
      const [, plans] = await post(
        '/workflow',
        workflow({ stopSpeakingPlan: { numWords: 11 }, monitorPlan: { spy: true } }),
      );
      expect(plans.message).toEqual([
        'stopSpeakingPlan.numWords must not be greater than 10',
        'monitorPlan.property spy should not exist',
      ]);

      const [, created] = await post('/workflow', workflow());
      const [status, body] = await patch(`/workflow/${created.id}`, { nodes: [lookup] });
      expect(status).toBe(400);
      expect(body.message).toEqual(['edges.0.from names no node: greet']);
      expect((await get(`/workflow/${created.id}`))[1].nodes).toHaveLength(2);
    });

    it('rejects ids of resources that do not exist in the org', async () => {
      const tool = await h.store.resources.tools.create(h.orgA, { type: 'function' });
      const foreign = await h.store.resources.credentials.create(h.orgB, { provider: 'x' });
      const [okStatus] = await post(
        '/workflow',
        workflow({
          nodes: [
            { ...greet, toolIds: [tool.id] },
            { ...lookup, toolId: tool.id },
          ],
        }),
      );
      expect(okStatus).toBe(201);
      const [status, body] = await post(
        '/workflow',
        workflow({
          nodes: [{ ...greet, toolIds: ['gone'] }, lookup],
          credentialIds: [foreign.id],
        }),
      );
      expect(status).toBe(400);
      expect(body.message).toEqual([
        'nodes.0.toolIds.0: Tool with id gone not found',
        `credentialIds.0: Credential with id ${foreign.id} not found`,
      ]);
    });

    it('keeps each org to its own workflows', async () => {
      const [, mine] = await post('/workflow', workflow());
      expect((await get(`/workflow/${mine.id}`, h.keyB))[0]).toBe(404);
      expect((await patch(`/workflow/${mine.id}`, { name: 'x' }, h.keyB))[0]).toBe(404);
      expect((await del(`/workflow/${mine.id}`, h.keyB))[0]).toBe(404);
      const [, theirs] = await list('/workflow', h.keyB);
      expect(theirs.map((item) => item.id)).not.toContain(mine.id);
    });

    it('filters lists by date and limit', async () => {
      const [, first] = await post('/workflow', workflow());
      await sleep(5);
      const [, second] = await post('/workflow', workflow());
      const ids = [first.id, second.id];
      const [, after] = await list(`/workflow?createdAtGt=${encodeURIComponent(first.createdAt)}`);
      expect(after.map((item) => item.id).filter((id) => ids.includes(id))).toEqual([second.id]);
      const [, upTo] = await list(`/workflow?updatedAtLe=${encodeURIComponent(first.updatedAt)}`);
      expect(upTo.map((item) => item.id).filter((id) => ids.includes(id))).toEqual([first.id]);
      expect((await list('/workflow?limit=1'))[1]).toHaveLength(1);
      expect((await get('/workflow?limit=1001'))[0]).toBe(400);
    });
  });
}
