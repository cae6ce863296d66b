import { VapiClient, VapiError } from '@vapi-ai/server-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createModelRegistry } from '../../src/providers/llm/registry.js';
import { useHarness } from '../support/app-harness.js';
import { FakeOpenAiServer } from '../support/fake-openai-server.js';
import { storeTargets } from '../support/store-targets.js';

/**
 * The official client, `@vapi-ai/server-sdk` 2.0.1, against a listening Parla: the 17 operations
 * of the interface spec, then create/read/list/update/delete of each resource. Operations the SDK
 * 2.x no longer models (logs, v1 knowledge bases, workflows, credentials) go through its
 * `client.fetch` passthrough, which reuses its auth and base URL.
 */
const fake = new FakeOpenAiServer();
beforeAll(() => fake.start());
afterAll(() => fake.close());

for (const target of storeTargets()) {
  describe(`@vapi-ai/server-sdk on ${target.name}`, () => {
    const h = useHarness(target, {
      models: createModelRegistry({
        openaiBaseUrl: 'http://127.0.0.1:9/v1',
        openaiApiKey: 'test-key',
      }),
    });
    let client: VapiClient;
    let base = '';
    const fetchJson = async (path: string, init?: RequestInit): Promise<[number, any]> => {
      const response = await client.fetch(`${base}${path}`, init);
      const text = await response.text();
      return [response.status, text === '' ? undefined : JSON.parse(text)];
    };
    const send = (method: string, path: string, body: unknown) =>
      fetchJson(path, {
        method,
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      });

    beforeAll(async () => {
      await h.app.listen({ host: '127.0.0.1', port: 0 });
      const address = h.app.server.address();
      base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
      client = new VapiClient({ token: h.keyA, baseUrl: base, maxRetries: 0 });
    });

    let assistantId = '';
    let credentialId = '';
    let phoneNumberId = '';

    it('creates, reads, lists, updates and deletes assistants (op 11: DELETE /assistant/{id})', async () => {
      const created = await client.assistants.create({ name: 'SDK assistant', firstMessage: 'Hi' });
      assistantId = created.id;
      expect((await client.assistants.get({ id: created.id })).name).toBe('SDK assistant');
      expect((await client.assistants.list({ limit: 10 })).map((a) => a.id)).toContain(created.id);
      expect((await client.assistants.update({ id: created.id, name: 'Renamed' })).name).toBe(
        'Renamed',
      );
      const throwaway = await client.assistants.create({ name: 'to delete' });
      expect((await client.assistants.delete({ id: throwaway.id })).id).toBe(throwaway.id);
      await expect(client.assistants.get({ id: throwaway.id })).rejects.toMatchObject({
        statusCode: 404,
      });
    });

    it('creates a byo-sip-trunk credential and a phone number; ops 2 and 3: PATCH and DELETE /phone-number/{id}', async () => {
      const [status, credential] = await send('POST', '/credential', {
        provider: 'byo-sip-trunk',
        name: 'trunk',
        gateways: [{ ip: '192.0.2.10' }],
      });
      expect(status).toBe(201);
      credentialId = credential.id;
      const number = await client.phoneNumbers.create({
        provider: 'byo-phone-number',
        number: '+14155550123',
        credentialId,
        name: 'Main line',
      });
      phoneNumberId = number.id;
      expect((await client.phoneNumbers.get({ id: number.id })).number).toBe('+14155550123');
      expect((await client.phoneNumbers.list({ limit: 5 })).map((p) => p.id)).toContain(number.id);
      const updated = await client.phoneNumbers.update({
        id: number.id,
        body: { provider: 'byo-phone-number', name: 'Support line', assistantId },
      });
      expect(updated).toMatchObject({ name: 'Support line', assistantId });
      const other = await client.phoneNumbers.create({
        provider: 'byo-phone-number',
        number: '+14155550124',
        credentialId,
      });
      expect((await client.phoneNumbers.delete({ id: other.id })).id).toBe(other.id);
    });

    it('ops 4 and 5: PATCH /tool/{id} and GET /tool with date filters', async () => {
      const tool = await client.tools.create({
        type: 'function',
        function: { name: 'get_weather' },
      });
      expect((await client.tools.get({ id: tool.id })).type).toBe('function');
      const updated = await client.tools.update({
        id: tool.id,
        body: {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather by city' },
        },
      });
      expect((updated as { function: { description: string } }).function.description).toBe(
        'Weather by city',
      );
      const listed = await client.tools.list({ limit: 10, createdAtGe: tool.createdAt });
      expect(listed.map((t) => t.id)).toEqual([tool.id]);
      expect((await client.tools.delete({ id: tool.id })).id).toBe(tool.id);
    });

    it('op 1: PATCH /call/{id} changes the name; calls are created, read, listed and deleted', async () => {
      const created = await client.calls.create({
        assistantId,
        transport: {
          provider: 'vapi.websocket',
          audioFormat: { format: 'pcm_s16le', container: 'raw', sampleRate: 16000 },
        },
      } as never);
      const call = created as { id: string; type: string };
      expect(call.type).toBe('vapi.websocketCall');
      expect((await client.calls.update({ id: call.id, name: 'First call' })).name).toBe(
        'First call',
      );
      expect((await client.calls.get({ id: call.id })).name).toBe('First call');
      expect((await client.calls.list({ assistantId })).map((c) => c.id)).toContain(call.id);
      expect((await client.calls.delete({ id: call.id })).id).toBe(call.id);
    });

    it('op 12: POST /campaign', async () => {
      const campaign = await client.campaigns.campaignControllerCreate({
        name: 'Spring',
        phoneNumberId,
        assistantId,
        customers: [{ number: '+14155550199' }],
      });
      expect(campaign).toMatchObject({ name: 'Spring', phoneNumberId, assistantId });
    });

    it('ops 13–15: POST /chat/responses, GET /chat, GET /chat/{id}', async () => {
      const [, chatAssistant] = await send('POST', '/assistant', {
        name: 'Chatty',
        model: {
          provider: 'custom-llm',
          model: 'fake',
          url: fake.url,
          messages: [{ role: 'system', content: 'Be brief.' }],
        },
        credentials: [{ provider: 'custom-llm', apiKey: 'fake-key' }],
      });
      fake.enqueue({
        chunks: ['Hello ', 'there'],
        usage: { prompt_tokens: 5, completion_tokens: 2 },
      });
      const response = (await client.chats.createResponse({
        input: 'Hi',
        assistantId: chatAssistant.id,
        stream: false,
      })) as { object: string; output: { content: { text: string }[] }[] };
      expect(response.object).toBe('response');
      expect(response.output[0]!.content[0]!.text).toBe('Hello there');
      const page = await client.chats.list({});
      expect(page.metadata).toMatchObject({ currentPage: 1 });
      const chat = page.results?.find((c) => c.assistantId === chatAssistant.id);
      expect(chat).toBeDefined();
      expect((await client.chats.get({ id: chat!.id })).id).toBe(chat!.id);
      expect((await client.chats.delete({ id: chat!.id })).id).toBe(chat!.id);
    });

    it('ops 16 and 17: GET /session and DELETE /session/{id}', async () => {
      const session = await client.sessions.create({ name: 'Support thread', assistantId });
      expect((await client.sessions.get({ id: session.id })).name).toBe('Support thread');
      expect((await client.sessions.update({ id: session.id, name: 'Renamed thread' })).name).toBe(
        'Renamed thread',
      );
      const page = await client.sessions.list({});
      expect(page.results?.map((s) => s.id)).toContain(session.id);
      expect(page.metadata).toMatchObject({ currentPage: 1 });
      expect((await client.sessions.delete({ id: session.id })).id).toBe(session.id);
    });

    it('op 9: DELETE /file/{id}; files are uploaded, read, listed and updated', async () => {
      const file = await client.files.create({
        file: new Blob(['opening hours: 9 to 5'], { type: 'text/plain' }),
        purpose: 'assistant',
      } as never);
      expect(file.status).toBe('processing');
      expect((await client.files.get({ id: file.id })).id).toBe(file.id);
      expect((await client.files.list({ purpose: 'assistant' })).map((f) => f.id)).toContain(
        file.id,
      );
      expect((await client.files.update({ id: file.id, name: 'hours' })).name).toBe('hours');
      expect((await client.files.delete({ id: file.id })).id).toBe(file.id);
    });

    it('ops 8 and 10: GET /knowledge-base and GET /workflow/{id} through client.fetch, with full CRUD', async () => {
      const [kbStatus, kb] = await send('POST', '/knowledge-base', {
        provider: 'custom-knowledge-base',
        server: { url: 'https://kb.example.test/search' },
      });
      expect(kbStatus).toBe(201);
      expect(
        (await fetchJson('/knowledge-base?limit=10'))[1].map((k: { id: string }) => k.id),
      ).toContain(kb.id);
      expect((await fetchJson(`/knowledge-base/${kb.id}`))[1].id).toBe(kb.id);
      expect(
        (
          await send('PATCH', `/knowledge-base/${kb.id}`, {
            server: { url: 'https://kb2.example.test' },
          })
        )[1].server.url,
      ).toBe('https://kb2.example.test');
      expect((await fetchJson(`/knowledge-base/${kb.id}`, { method: 'DELETE' }))[0]).toBe(200);

      const [wfStatus, workflow] = await send('POST', '/workflow', {
        name: 'Intake',
        nodes: [{ type: 'conversation', name: 'start', isStart: true, prompt: 'Greet the caller' }],
        edges: [],
      });
      expect(wfStatus).toBe(201);
      const [getStatus, got] = await fetchJson(`/workflow/${workflow.id}`);
      expect([getStatus, got.name]).toEqual([200, 'Intake']);
      expect((await fetchJson('/workflow'))[1].map((w: { id: string }) => w.id)).toContain(
        workflow.id,
      );
      expect((await send('PATCH', `/workflow/${workflow.id}`, { name: 'Intake v2' }))[1].name).toBe(
        'Intake v2',
      );
      expect((await fetchJson(`/workflow/${workflow.id}`, { method: 'DELETE' }))[0]).toBe(200);
    });

    it('squads and credentials: create, read, list, update, delete', async () => {
      const squad = await client.squads.create({ name: 'Front desk', members: [{ assistantId }] });
      expect((await client.squads.get({ id: squad.id })).name).toBe('Front desk');
      expect((await client.squads.list({})).map((s) => s.id)).toContain(squad.id);
      expect(
        (await client.squads.update({ id: squad.id, members: [{ assistantId }], name: 'Desk' }))
          .name,
      ).toBe('Desk');
      expect((await client.squads.delete({ id: squad.id })).id).toBe(squad.id);

      const [, credential] = await send('POST', '/credential', {
        provider: 'openai',
        apiKey: 'sk-test-123',
        name: 'oa',
      });
      expect(credential.apiKey).toBeUndefined();
      expect((await fetchJson(`/credential/${credential.id}`))[1].name).toBe('oa');
      expect((await fetchJson('/credential'))[1].map((c: { id: string }) => c.id)).toContain(
        credential.id,
      );
      expect((await send('PATCH', `/credential/${credential.id}`, { name: 'oa2' }))[1].name).toBe(
        'oa2',
      );
      expect((await fetchJson(`/credential/${credential.id}`, { method: 'DELETE' }))[0]).toBe(200);
    });

    it('ops 6 and 7: GET /logs and DELETE /logs through client.fetch', async () => {
      await h.store.logs.flush();
      const [status, page] = await fetchJson('/logs?type=API&limit=5&page=1');
      expect(status).toBe(200);
      expect(page.metadata).toMatchObject({ itemsPerPage: 5, currentPage: 1 });
      expect(page.metadata.totalItems).toBeGreaterThan(5);
      expect(page.results[0]).toMatchObject({ type: 'API', orgId: h.orgA });
      const [deleteStatus] = await fetchJson('/logs?type=API', { method: 'DELETE' });
      expect(deleteStatus).toBe(200);
    });

    it('surfaces errors as VapiError with the platform body', async () => {
      const error = await client.assistants.get({ id: 'missing' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(VapiError);
      expect(error).toMatchObject({
        statusCode: 404,
        body: { statusCode: 404, error: 'Not Found' },
      });
      const invalid = await client.tools
        .create({ type: 'function', function: { name: 'bad name' } })
        .catch((e: unknown) => e);
      expect(invalid).toMatchObject({ statusCode: 400 });
      expect((invalid as VapiError).body).toMatchObject({
        message: ['function.name must match ^[a-zA-Z0-9_-]{1,40}$ regular expression'],
      });
    });
  });
}
