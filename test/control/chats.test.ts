import { describe, expect, it } from 'vitest';
import { useHarness, type Harness } from '../support/app-harness.js';
import { useFakeVendor } from '../support/fake-openai-server.js';
import { storeTargets } from '../support/store-targets.js';

interface SseEvent {
  event?: string;
  data: any;
}

function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const out: SseEvent = { data: undefined };
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) {
          out.event = line.slice(7);
        } else if (line.startsWith('data: ')) {
          out.data = JSON.parse(line.slice(6));
        }
      }
      return out;
    });
}

const MODEL = { provider: 'openai', model: 'gpt-4o-mini' };

async function createAssistant(h: Harness, doc: Record<string, unknown> = {}, org = h.orgA) {
  const model = {
    ...MODEL,
    messages: [{ role: 'system', content: 'You help {{name}} on {{date}}.' }],
  };
  return (await h.store.resources.assistants.create(org, { name: 'Helper', model, ...doc })).id;
}

async function streamed(h: Harness, url: string, body: unknown) {
  const response = await h.request({ method: 'POST', url, payload: body as object });
  return {
    status: response.statusCode,
    type: response.headers['content-type'],
    events: parseSse(response.body),
  };
}

for (const target of storeTargets()) {
  describe(target.name, () => {
    const { fake, options } = useFakeVendor('test-key');
    const h = useHarness(target, options);

    it('answers a chat with the stored Chat, sending the assistant prompt and input', async () => {
      const assistantId = await createAssistant(h);
      const [status, chat] = await h.post('/chat', {
        assistantId,
        input: 'Hello',
        name: 'first chat',
        assistantOverrides: {
          variableValues: { name: 'Ana' },
          model: { ...MODEL, temperature: 0.3 },
        },
      });
      expect(status).toBe(201);
      const today = new Date().toISOString().slice(0, 10);
      expect(chat).toMatchObject({
        orgId: h.orgA,
        assistantId,
        name: 'first chat',
        input: 'Hello',
        messages: [
          { role: 'system', content: `You help Ana on ${today}.` },
          { role: 'user', content: 'Hello' },
        ],
        output: [{ role: 'assistant', content: 'You said: Hello' }],
        cost: 0.000006,
        costs: [
          {
            type: 'model',
            model: MODEL,
            promptTokens: 12,
            completionTokens: 7,
            cost: 0.000006,
          },
        ],
      });
      const sent = fake.requests[0];
      expect(sent?.headers.authorization).toBe('Bearer test-key');
      expect(fake.sentBody(0)).toMatchObject({
        model: 'gpt-4o-mini',
        temperature: 0.3,
        stream: true,
        messages: [
          { role: 'system', content: `You help Ana on ${today}.` },
          { role: 'user', content: 'Hello' },
        ],
      });
      const [, fetched] = await h.get(`/chat/${chat.id}`);
      expect(fetched).toEqual(chat);
    });

    it('streams `{id, path, delta}` data lines whose deltas join to the reply, then stores it', async () => {
      const assistantId = await createAssistant(h);
      fake.enqueue({ chunks: ['Good', ' morning', ', Ana'] });
      const { status, type, events } = await streamed(h, '/chat', {
        assistantId,
        input: 'Hi',
        stream: true,
      });
      expect(status).toBe(200);
      expect(type).toMatch(/^text\/event-stream/);
      expect(events.every((e) => e.event === undefined)).toBe(true);
      const id = events[0]?.data.id as string;
      for (const { data } of events) {
        expect(data).toEqual({ id, path: 'chat.output[0].content', delta: expect.any(String) });
      }
      expect(events.map((e) => e.data.delta).join('')).toBe('Good morning, Ana');
      const [, chat] = await h.get(`/chat/${id}`);
      expect(chat.output).toEqual([{ role: 'assistant', content: 'Good morning, Ana' }]);
    });

    it('answers /chat/responses with a ResponseObject when stream is false', async () => {
      const assistantId = await createAssistant(h);
      const [status, response] = await h.post('/chat/responses', {
        assistantId,
        input: [{ role: 'user', content: 'Ping' }],
        stream: false,
        model: 'gpt-4o',
      });
      expect(status).toBe(200);
      expect(response).toEqual({
        id: expect.any(String),
        object: 'response',
        created_at: expect.any(Number),
        status: 'completed',
        error: null,
        output: [
          {
            id: expect.stringMatching(/^msg_/),
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: 'You said: Ping', annotations: [] }],
          },
        ],
      });
      expect(Math.abs(response.created_at - Date.now() / 1000)).toBeLessThan(60);
      const [, chat] = await h.get(`/chat/${response.id}`);
      expect(chat.output[0].content).toBe('You said: Ping');
    });

    it('streams /chat/responses by default as the Responses event sequence', async () => {
      const assistantId = await createAssistant(h);
      fake.enqueue({ chunks: ['One', ' two'] });
      const { status, events } = await streamed(h, '/chat/responses', { assistantId, input: 'x' });
      expect(status).toBe(200);
      expect(events.map((e) => e.event)).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      for (const [index, e] of events.entries()) {
        expect(e.data.type).toBe(e.event);
        expect(e.data.sequence_number).toBe(index);
      }
      const deltas = events.filter((e) => e.event === 'response.output_text.delta');
      expect(deltas[0]?.data).toEqual({
        type: 'response.output_text.delta',
        item_id: expect.stringMatching(/^msg_/),
        output_index: 0,
        content_index: 0,
        delta: 'One',
        sequence_number: 4,
      });
      expect(events[6]?.data.text).toBe('One two');
      const completed = events.at(-1)?.data.response;
      expect(completed.status).toBe('completed');
      expect(completed.output[0].content[0].text).toBe('One two');
      const [, chat] = await h.get(`/chat/${completed.id}`);
      expect(chat.output[0].content).toBe('One two');
    });

    it('chains history with previousChatId (and previous_response_id), keeping the assistant', async () => {
      const assistantId = await createAssistant(h);
      const [, first] = await h.post('/chat', { assistantId, input: 'My name is Ana' });
      const [status, second] = await h.post('/chat', {
        previousChatId: first.id,
        input: 'What is my name?',
      });
      expect(status).toBe(201);
      expect(second).toMatchObject({ previousChatId: first.id, assistantId });
      expect(fake.sentBody(1).messages?.slice(1)).toEqual([
        { role: 'user', content: 'My name is Ana' },
        { role: 'assistant', content: 'You said: My name is Ana' },
        { role: 'user', content: 'What is my name?' },
      ]);
      const [, third] = await h.post('/chat/responses', {
        previous_response_id: second.id,
        input: 'And again?',
        stream: false,
      });
      expect(fake.sentBody(2).messages).toHaveLength(6);
      const [, list] = await h.get(`/chat?previousChatId=${second.id}`);
      expect(list.results.map((c: { id: string }) => c.id)).toEqual([third.id]);
    });

    it('uses the assistant credential key over the org one and the default, never showing it', async () => {
      const credential = await h.store.resources.credentials.create(h.orgA, {
        provider: 'openai',
        apiKey: 'org-key',
      });
      try {
        const stored = await createAssistant(h, {
          credentials: [{ provider: 'openai', apiKey: 'assistant-key' }],
        });
        await h.post('/chat', { assistantId: stored, input: 'a' });
        expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer assistant-key');
        const [, inline] = await h.post('/chat', {
          assistant: { model: MODEL, credentials: [{ provider: 'openai', apiKey: 'inline-key' }] },
          input: 'b',
        });
        expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer inline-key');
        expect(inline.assistant.credentials).toEqual([{ provider: 'openai' }]);
        await h.post('/chat', { assistantId: await createAssistant(h), input: 'c' });
        expect(fake.requests.at(-1)?.headers.authorization).toBe('Bearer org-key');
      } finally {
        await h.store.resources.credentials.delete(h.orgA, credential.id);
      }
    });

    it("answers as a squad's first member, member then squad overrides under the chat's", async () => {
      const assistantId = await createAssistant(h);
      const squad = await h.store.resources.squads.create(h.orgA, {
        members: [{ assistantId, assistantOverrides: { variableValues: { name: 'member' } } }],
        membersOverrides: { variableValues: { name: 'squad', date: 'today' } },
      });
      const [status, chat] = await h.post('/chat', {
        squadId: squad.id,
        input: 'x',
        assistantOverrides: { variableValues: { date: 'now' } },
      });
      expect(status).toBe(201);
      expect(chat.squadId).toBe(squad.id);
      expect(fake.sentBody(0).messages?.[0]).toEqual({
        role: 'system',
        content: 'You help squad on now.',
      });
    });

    it('talks to a custom-llm at model.url without a key', async () => {
      const [status, chat] = await h.post('/chat', {
        assistant: { model: { provider: 'custom-llm', model: 'mine', url: fake.url } },
        input: 'hey',
      });
      expect(status).toBe(201);
      expect(chat.output[0].content).toBe('You said: hey');
      expect(fake.requests[0]?.headers.authorization).toBeUndefined();
      expect(chat.costs[0]).toMatchObject({ model: { provider: 'custom-llm' }, cost: 0 });
    });

    it('answers 502 for a vendor failure, or an error event when streaming', async () => {
      const assistantId = await createAssistant(h);
      fake.enqueue({ status: 401, errorMessage: 'Incorrect API key' });
      const [status, body] = await h.post('/chat', { assistantId, input: 'x' });
      expect(status).toBe(502);
      expect(body).toEqual({
        statusCode: 502,
        error: 'Bad Gateway',
        message: 'openai: HTTP 401: Incorrect API key',
      });
      fake.enqueue({ status: 500 });
      const chat = await streamed(h, '/chat', { assistantId, input: 'x', stream: true });
      expect(chat.events).toEqual([
        {
          event: 'error',
          data: {
            id: expect.any(String),
            error: {
              statusCode: 502,
              error: 'Bad Gateway',
              message: 'openai: HTTP 500: fake error 500',
            },
          },
        },
      ]);
      fake.enqueue({ status: 429 });
      const responses = await streamed(h, '/chat/responses', { assistantId, input: 'x' });
      expect(responses.events.at(-1)).toEqual({
        event: 'error',
        data: {
          type: 'error',
          code: 'ERR_PROVIDER',
          message: 'openai: HTTP 429: fake error 429',
          param: null,
          sequence_number: 4,
        },
      });
      const [, list] = await h.get(`/chat?assistantId=${assistantId}`);
      expect(list.metadata.totalItems).toBe(0);
    });

    it.each([
      [
        { input: 'x' },
        'one of assistantId, assistant, squadId or squad is required (or a sessionId)',
      ],
      [{ input: 'x', assistantId: 'A', squadId: 'B' }, 'only one of assistantId'],
      [
        { input: 'x', sessionId: 'a', previousChatId: 'b' },
        'sessionId and previousChatId cannot be used together',
      ],
      [{ input: 'x', assistantId: 'nope' }, 'assistant with id nope not found'],
      [{ input: 'x', previousChatId: 'nope' }, 'chat with id nope not found'],
      [
        { input: 'x', assistant: { model: { provider: 'acme', model: 'm' } } },
        'model provider acme is not available',
      ],
      [{ input: 'x', assistant: { name: 'no model' } }, 'the assistant has no model'],
      [{ input: 'x', assistant: { model: MODEL }, bogus: 1 }, 'property bogus should not exist'],
      [{ assistant: { model: MODEL } }, 'input should not be empty'],
      [
        { input: 'x', assistant: { model: MODEL }, name: 'n'.repeat(41) },
        'name must be shorter than or equal to 40 characters',
      ],
    ])('rejects a bad chat with 400 (%j)', async (body, message) => {
      for (const url of ['/chat', '/chat/responses']) {
        const [status, error] = await h.post(url, body);
        expect(status).toBe(400);
        expect(String(error.message)).toContain(message);
      }
      expect(fake.requests).toHaveLength(0);
    });

    it('accepts a name of exactly 40 characters', async () => {
      const [status, chat] = await h.post('/chat', {
        assistant: { model: MODEL },
        input: 'x',
        name: 'n'.repeat(40),
      });
      expect(status).toBe(201);
      expect(chat.name).toHaveLength(40);
    });

    it('lists chats in pages with metadata and filters, and deletes one', async () => {
      const assistantId = await createAssistant(h);
      const ids: string[] = [];
      for (const input of ['1', '2', '3']) {
        ids.push((await h.post('/chat', { assistantId, input }))[1].id);
      }
      const [status, page1] = await h.get(`/chat?assistantId=${assistantId}&limit=2`);
      expect(status).toBe(200);
      expect(page1.metadata).toEqual({ itemsPerPage: 2, totalItems: 3, currentPage: 1 });
      expect(page1.results.map((c: { id: string }) => c.id)).toEqual([ids[2], ids[1]]);
      const [, page2] = await h.get(`/chat?assistantId=${assistantId}&limit=2&page=2`);
      expect(page2.metadata).toEqual({ itemsPerPage: 2, totalItems: 3, currentPage: 2 });
      expect(page2.results.map((c: { id: string }) => c.id)).toEqual([ids[0]]);
      const [, byId] = await h.get(`/chat?id=${ids[1]}`);
      expect(byId.results).toHaveLength(1);
      expect((await h.get('/chat?colour=red'))[0]).toBe(400);

      const [deleteStatus, deleted] = await h.del(`/chat/${ids[0]}`);
      expect(deleteStatus).toBe(200);
      expect(deleted).toMatchObject({ id: ids[0], input: '1' });
      expect((await h.get(`/chat/${ids[0]}`))[0]).toBe(404);
    });

    it('keeps orgs apart', async () => {
      const assistantId = await createAssistant(h);
      const [, chat] = await h.post('/chat', { assistantId, input: 'secret' });
      expect((await h.get(`/chat/${chat.id}`, h.keyB))[0]).toBe(404);
      expect((await h.del(`/chat/${chat.id}`, h.keyB))[0]).toBe(404);
      const [, listB] = await h.get('/chat', h.keyB);
      expect(listB.results.some((c: { id: string }) => c.id === chat.id)).toBe(false);
      const [status, error] = await h.post('/chat', { assistantId, input: 'x' }, h.keyB);
      expect(status).toBe(400);
      expect(error.message).toEqual([`assistant with id ${assistantId} not found`]);
      const chained = await h.post('/chat', { previousChatId: chat.id, input: 'x' }, h.keyB);
      expect(chained[0]).toBe(400);
      expect((await h.get(`/chat/${chat.id}`))[0]).toBe(200);
    });
  });

  describe(`${target.name} without a default model key`, () => {
    const { fake, options } = useFakeVendor('');
    const h = useHarness(target, options);

    it('answers 400 when no key is found, or an error event when streaming', async () => {
      const body = { assistant: { model: MODEL }, input: 'x' };
      const [status, error] = await h.post('/chat', body);
      expect(status).toBe(400);
      expect(error.message).toMatch(/^no API key for model provider openai/);
      const { events } = await streamed(h, '/chat', { ...body, stream: true });
      expect(events).toHaveLength(1);
      expect(events[0]?.event).toBe('error');
      expect(events[0]?.data.error.statusCode).toBe(400);
      expect(fake.requests).toHaveLength(0);
    });
  });
}
