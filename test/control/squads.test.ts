import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { useHarness, type Harness } from '../support/app-harness.js';
import { storeTargets } from '../support/store-targets.js';

interface Body {
  id: string;
  createdAt: string;
  updatedAt: string;
  message: string[];
  members: Record<string, unknown>[];
  [key: string]: unknown;
}

type Reply = [number, Body];

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

    const assistant = async (name: string, key?: string) =>
      (await post('/assistant', { name }, key))[1].id;

    it('creates, gets, lists, updates and deletes a squad', async () => {
      const receptionist = await assistant('Receptionist');
      const [status, created] = await post('/squad', {
        name: 'Front desk',
        members: [
          {
            assistantId: receptionist,
            assistantOverrides: { firstMessage: 'Hi {{name}}', variableValues: { name: 'Ann' } },
            assistantDestinations: [
              {
                type: 'assistant',
                assistantName: 'Billing',
                message: 'One moment',
                description: 'billing',
              },
            ],
          },
          { assistant: { name: 'Billing', stopSpeakingPlan: {} } },
        ],
        membersOverrides: { stopSpeakingPlan: { numWords: 2 } },
      });
      expect(status, JSON.stringify(created)).toBe(201);
      expect(created).toMatchObject({ name: 'Front desk', orgId: h.orgA });
      // Inline assistants are filled like created ones; overrides get no defaults.
      expect(created.members[1]).toMatchObject({
        assistant: {
          maxDurationSeconds: 600,
          stopSpeakingPlan: { numWords: 0, voiceSeconds: 0.2 },
        },
      });
      expect(created.members[0]?.assistantOverrides).toEqual({
        firstMessage: 'Hi {{name}}',
        variableValues: { name: 'Ann' },
      });
      expect(created.membersOverrides).toEqual({ stopSpeakingPlan: { numWords: 2 } });

      expect(await get(`/squad/${created.id}`)).toEqual([200, created]);
      const [, items] = await list('/squad');
      expect(items.map((item) => item.id)).toContain(created.id);

      const [patchStatus, updated] = await patch(`/squad/${created.id}`, { name: 'Desk' });
      expect(patchStatus).toBe(200);
      expect(updated).toMatchObject({ name: 'Desk', members: created.members });
      expect(await del(`/squad/${created.id}`)).toEqual([200, updated]);
      expect((await get(`/squad/${created.id}`))[0]).toBe(404);
    });

    it('validates members, destinations and overrides', async () => {
      const id = await assistant('Member');
      const [status, body] = await post('/squad', { members: [] });
      expect(status).toBe(400);
      expect(body).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: ['members must contain at least 1 elements'],
      });
      const [, shape] = await post('/squad', {
        name: 's'.repeat(41),
        members: [
          {
            assistantId: id,
            assistantDestinations: [{ type: 'number', assistantName: 'x' }],
            assistantOverrides: { colour: 'red', maxDurationSeconds: 9 },
          },
        ],
      });
      expect(shape.message).toEqual([
        'name must be shorter than or equal to 40 characters',
        'members.0.assistantOverrides.property colour should not exist',
        'members.0.assistantOverrides.maxDurationSeconds must not be less than 10',
        'members.0.assistantDestinations.0.type must be equal to "assistant"',
      ]);
      const [, either] = await post('/squad', {
        members: [{ assistantId: id, assistant: { name: 'x' } }, { assistantOverrides: {} }],
      });
      expect(either.message).toEqual([
        'members.0 must have only one of assistantId and assistant',
        'members.1 must have assistantId or assistant',
      ]);
      const [, inline] = await post('/squad', {
        members: [{ assistant: { startSpeakingPlan: { waitSeconds: 6 } } }],
      });
      expect(inline.message).toEqual([
        'members.0.assistant.startSpeakingPlan.waitSeconds must not be greater than 5',
      ]);
    });

    it('rejects member assistants that do not exist in the org', async () => {
      const mine = await assistant('Mine');
      const theirs = await assistant('Theirs', h.keyB);
      const tool = await h.store.resources.tools.create(h.orgB, { type: 'function' });
      const [status, body] = await post('/squad', {
        members: [
          { assistantId: mine },
          { assistantId: theirs },
          { assistant: { model: { provider: 'p', toolIds: [tool.id] } } },
        ],
      });
      expect(status).toBe(400);
      expect(body.message).toEqual([
        `members.1.assistantId: Assistant with id ${theirs} not found`,
        `members.2.assistant.model.toolIds.0: Tool with id ${tool.id} not found`,
      ]);
      const [, created] = await post('/squad', { members: [{ assistantId: mine }] });
      const [patchStatus, patchBody] = await patch(`/squad/${created.id}`, {
        members: [{ assistantId: 'missing' }],
      });
      expect(patchStatus).toBe(400);
      expect(patchBody.message).toEqual([
        'members.0.assistantId: Assistant with id missing not found',
      ]);
    });

    it('keeps each org to its own squads', async () => {
      const [, mine] = await post('/squad', { members: [{ assistantId: await assistant('A') }] });
      expect((await get(`/squad/${mine.id}`, h.keyB))[0]).toBe(404);
      expect((await patch(`/squad/${mine.id}`, { name: 'x' }, h.keyB))[0]).toBe(404);
      expect((await del(`/squad/${mine.id}`, h.keyB))[0]).toBe(404);
      const [, theirs] = await list('/squad', h.keyB);
      expect(theirs.map((item) => item.id)).not.toContain(mine.id);
    });

    it('filters lists by date and limit', async () => {
      const members = [{ assistantId: await assistant('Dated') }];
      const [, first] = await post('/squad', { members });
      await sleep(5);
      const [, second] = await post('/squad', { members });
      const ids = [first.id, second.id];
      const [, before] = await list(`/squad?createdAtLt=${encodeURIComponent(second.createdAt)}`);
      expect(before.map((item) => item.id).filter((id) => ids.includes(id))).toEqual([first.id]);
      const [, from] = await list(`/squad?updatedAtGe=${encodeURIComponent(second.updatedAt)}`);
      expect(from.map((item) => item.id).filter((id) => ids.includes(id))).toEqual([second.id]);
      expect((await list('/squad?limit=0'))[1]).toEqual([]);
      expect((await get('/squad?limit=-1'))[0]).toBe(400);
    });
  });
}
