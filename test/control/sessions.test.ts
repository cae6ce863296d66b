import { describe, expect, it } from 'vitest';
import { useHarness, type Harness } from '../support/app-harness.js';
import { useFakeVendor } from '../support/fake-openai-server.js';
import { storeTargets } from '../support/store-targets.js';

const MODEL = { provider: 'openai', model: 'gpt-4o-mini' };

async function createAssistant(h: Harness, prompt = 'You are kind.', org = h.orgA) {
  const model = { ...MODEL, messages: [{ role: 'system', content: prompt }] };
  return (await h.store.resources.assistants.create(org, { model })).id;
}

for (const target of storeTargets()) {
  describe(target.name, () => {
    const { fake, options } = useFakeVendor('test-key');
    const h = useHarness(target, options);

    it('creates a session with defaults and returns it on GET', async () => {
      const assistantId = await createAssistant(h);
      const [status, session] = await h.post('/session', { assistantId, name: 'support' });
      expect(status).toBe(201);
      expect(session).toEqual({
        id: expect.any(String),
        orgId: h.orgA,
        assistantId,
        name: 'support',
        status: 'active',
        expirationSeconds: 86400,
        messages: [],
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(await h.get(`/session/${session.id}`)).toEqual([200, session]);
    });

    it('keeps the conversation across chats and records it in session.messages', async () => {
      const assistantId = await createAssistant(h);
      const [, session] = await h.post('/session', { assistantId });
      const [firstStatus, first] = await h.post('/chat', {
        sessionId: session.id,
        input: 'My name is Ana',
      });
      expect(firstStatus).toBe(201);
      expect(first).toMatchObject({ sessionId: session.id, assistantId });
      await h.post('/chat', { sessionId: session.id, input: 'What is my name?' });
      expect(fake.sentBody(1).messages).toEqual([
        { role: 'system', content: 'You are kind.' },
        { role: 'user', content: 'My name is Ana' },
        { role: 'assistant', content: 'You said: My name is Ana' },
        { role: 'user', content: 'What is my name?' },
      ]);
      const [, stored] = await h.get(`/session/${session.id}`);
      expect(stored.messages).toHaveLength(4);
      expect(stored.messages[1]).toEqual({
        role: 'assistant',
        content: 'You said: My name is Ana',
        message: 'You said: My name is Ana',
        time: expect.any(Number),
        secondsFromStart: expect.any(Number),
      });
      expect(Math.abs(stored.messages[0].time - Date.now())).toBeLessThan(60_000);
      const [, chats] = await h.get(`/chat?sessionId=${session.id}`);
      expect(chats.metadata.totalItems).toBe(2);
    });

    it('streams a session chat with sessionId on every line', async () => {
      const [, session] = await h.post('/session', { assistantId: await createAssistant(h) });
      const response = await h.request({
        method: 'POST',
        url: '/chat',
        payload: { sessionId: session.id, input: 'hi', stream: true },
      });
      const lines = response.body.split('\n\n').filter((l) => l !== '');
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        expect(JSON.parse(line.replace(/^data: /, '')).sessionId).toBe(session.id);
      }
      const [, stored] = await h.get(`/session/${session.id}`);
      expect(stored.messages.map((m: { message: string }) => m.message)).toEqual([
        'hi',
        'You said: hi',
      ]);
    });

    it('uses given messages, an inline assistant, overrides and customer as context', async () => {
      const [status, session] = await h.post('/session', {
        assistant: {
          model: {
            ...MODEL,
            messages: [{ role: 'system', content: 'Hi {{customer.name}}, {{topic}}' }],
          },
        },
        assistantOverrides: { variableValues: { topic: 'billing' } },
        customer: { name: 'Ana' },
        messages: [{ role: 'user', message: 'earlier', time: 1, secondsFromStart: 0 }],
      });
      expect(status).toBe(201);
      await h.post('/chat', { sessionId: session.id, input: 'now' });
      expect(fake.sentBody(0).messages).toEqual([
        { role: 'system', content: 'Hi Ana, billing' },
        { role: 'user', content: 'earlier' },
        { role: 'user', content: 'now' },
      ]);
    });

    it('refuses an assistantId next to sessionId, and a session without an assistant', async () => {
      const assistantId = await createAssistant(h);
      const [, session] = await h.post('/session', { assistantId });
      const [status, error] = await h.post('/chat', {
        sessionId: session.id,
        assistantId,
        input: 'x',
      });
      expect(status).toBe(400);
      expect(error.message[0]).toMatch(/^a session is tied to one assistant/);
      const [, bare] = await h.post('/session', {});
      const [bareStatus, bareError] = await h.post('/chat', { sessionId: bare.id, input: 'x' });
      expect(bareStatus).toBe(400);
      expect(bareError.message).toEqual([`session ${bare.id} has no assistant or squad`]);
      expect(fake.requests).toHaveLength(0);
    });

    it('treats a session past its expiration as completed and refuses chats on it', async () => {
      const [, session] = await h.post('/session', {
        assistantId: await createAssistant(h),
        expirationSeconds: 60,
      });
      expect((await h.post('/chat', { sessionId: session.id, input: 'x' }))[0]).toBe(201);
      await h.store.db.sql`
        update sessions set created_at = created_at - interval '61 seconds' where id = ${session.id}`;
      const [, expired] = await h.get(`/session/${session.id}`);
      expect(expired.status).toBe('completed');
      const [status, error] = await h.post('/chat', { sessionId: session.id, input: 'y' });
      expect(status).toBe(400);
      expect(error.message).toEqual([`session ${session.id} has expired`]);
      const responses = await h.post('/chat/responses', { sessionId: session.id, input: 'y' });
      expect(responses[0]).toBe(400);
      expect(fake.requests).toHaveLength(1);
    });

    it('refuses chats on a session marked completed', async () => {
      const [, session] = await h.post('/session', { assistantId: await createAssistant(h) });
      const [, patched] = await h.patch(`/session/${session.id}`, { status: 'completed' });
      expect(patched.status).toBe('completed');
      const [status, error] = await h.post('/chat', { sessionId: session.id, input: 'y' });
      expect(status).toBe(400);
      expect(error.message).toEqual([`session ${session.id} has expired`]);
    });

    it('updates name, status, expirationSeconds and messages only', async () => {
      const [, session] = await h.post('/session', { name: 'before' });
      const [status, updated] = await h.patch(`/session/${session.id}`, {
        name: 'after',
        expirationSeconds: 3600,
        messages: [{ role: 'user', message: 'hello' }],
      });
      expect(status).toBe(200);
      expect(updated).toMatchObject({
        name: 'after',
        status: 'active',
        expirationSeconds: 3600,
        messages: [{ role: 'user', message: 'hello' }],
      });
      const [badStatus, bad] = await h.patch(`/session/${session.id}`, { assistantId: 'x' });
      expect(badStatus).toBe(400);
      expect(bad.message).toEqual(['property assistantId should not exist']);
    });

    it.each([
      [{ name: 'n'.repeat(40) }, 201],
      [{ name: 'n'.repeat(41) }, 400],
      [{ expirationSeconds: 60 }, 201],
      [{ expirationSeconds: 59 }, 400],
      [{ expirationSeconds: 2592000 }, 201],
      [{ expirationSeconds: 2592001 }, 400],
      [{ status: 'paused' }, 400],
      [{ colour: 'red' }, 400],
      [{ assistantId: 'missing' }, 400],
      [{ assistantId: 'a', squadId: 'b' }, 400],
    ])('checks limits on create (%j → %i)', async (body, expected) => {
      const [status] = await h.post('/session', body);
      expect(status).toBe(expected);
      if ('expirationSeconds' in body && expected === 400) {
        const [patchStatus] = await h.patch(
          `/session/${(await h.post('/session', {}))[1].id}`,
          body,
        );
        expect(patchStatus).toBe(400);
      }
    });

    it('lists sessions in pages with filters and deletes one', async () => {
      const assistantId = await createAssistant(h);
      const ids: string[] = [];
      for (const name of ['s1', 's2', 's3']) {
        ids.push((await h.post('/session', { assistantId, name }))[1].id);
      }
      const [, page1] = await h.get(`/session?assistantId=${assistantId}&limit=2`);
      expect(page1.metadata).toEqual({ itemsPerPage: 2, totalItems: 3, currentPage: 1 });
      expect(page1.results.map((s: { name: string }) => s.name)).toEqual(['s3', 's2']);
      const [, page2] = await h.get(`/session?assistantId=${assistantId}&limit=2&page=2`);
      expect(page2.results.map((s: { name: string }) => s.name)).toEqual(['s1']);
      const [, byName] = await h.get(`/session?name=s2&assistantId=${assistantId}`);
      expect(byName.results.map((s: { id: string }) => s.id)).toEqual([ids[1]]);
      const [deleteStatus, deleted] = await h.del(`/session/${ids[0]}`);
      expect(deleteStatus).toBe(200);
      expect(deleted).toMatchObject({ id: ids[0], name: 's1' });
      expect((await h.get(`/session/${ids[0]}`))[0]).toBe(404);
    });

    it('keeps orgs apart', async () => {
      const assistantId = await createAssistant(h);
      const [, session] = await h.post('/session', { assistantId });
      expect((await h.get(`/session/${session.id}`, h.keyB))[0]).toBe(404);
      expect((await h.patch(`/session/${session.id}`, { name: 'x' }, h.keyB))[0]).toBe(404);
      expect((await h.del(`/session/${session.id}`, h.keyB))[0]).toBe(404);
      const [chatStatus, chatError] = await h.post(
        '/chat',
        { sessionId: session.id, input: 'x' },
        h.keyB,
      );
      expect(chatStatus).toBe(400);
      expect(chatError.message).toEqual([`session with id ${session.id} not found`]);
      const [createStatus, createError] = await h.post('/session', { assistantId }, h.keyB);
      expect(createStatus).toBe(400);
      expect(createError.message).toEqual([`assistant with id ${assistantId} not found`]);
      const [, listB] = await h.get('/session', h.keyB);
      expect(listB.results.some((s: { id: string }) => s.id === session.id)).toBe(false);
      expect((await h.get(`/session/${session.id}`))[0]).toBe(200);
    });
  });
}
