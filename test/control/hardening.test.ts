import { describe, expect, it } from 'vitest';
import { useHarness } from '../support/app-harness.js';
import { storeTargets } from '../support/store-targets.js';

const json = { 'content-type': 'application/json' };

for (const target of storeTargets()) {
  describe(`hostile input on ${target.name}`, () => {
    const h = useHarness(target);

    it('seals webhook headers and keeps them out of responses and logs', async () => {
      const [status, created] = await h.post('/assistant', {
        name: 'hooks',
        server: {
          url: 'https://hooks.example.test',
          headers: { Authorization: 'Bearer SUPERSECRET1', 'x-team': 'blue' },
        },
      });
      expect(status).toBe(201);
      expect(JSON.stringify(created)).not.toContain('SUPERSECRET1');
      const [, got] = await h.get(`/assistant/${created.id}`);
      expect(JSON.stringify(got)).not.toContain('SUPERSECRET1');
      const [row] = await h.store.db.sql<
        { doc: unknown }[]
      >`select doc from assistants where id = ${created.id}`;
      expect(JSON.stringify(row!.doc)).not.toContain('SUPERSECRET1');
      const internal = await h.store.resources.assistants.getInternal(h.orgA, created.id);
      expect((internal!.server as { headers: Record<string, string> }).headers.Authorization).toBe(
        'Bearer SUPERSECRET1',
      );
      await h.request({ method: 'GET', url: '/tool', headers: { 'x-api-key': 'HEADERSECRET2' } });
      await h.store.logs.flush();
      const [, logs] = await h.get('/logs?limit=1000');
      expect(JSON.stringify(logs)).not.toContain('SUPERSECRET1');
      expect(JSON.stringify(logs)).not.toContain('HEADERSECRET2');
    });

    it('answers 400, not 500, to strings PostgreSQL cannot store', async () => {
      const cases: [string, string, string | undefined][] = [
        ['POST', '/assistant', '{"name":"a\\u0000b"}'],
        ['POST', '/assistant', '{"name":"\\ud800"}'],
        ['POST', '/assistant', '{"name":"x","__proto__":{"admin":true}}'],
        [
          'POST',
          '/assistant',
          '{"credentials":[{"provider":"openai","apiKey":"sealed:v1:AAAA.BBBB.CCCC"}]}',
        ],
        ['GET', '/assistant/%00', undefined],
        ['GET', '/chat?assistantId=%00', undefined],
        ['GET', '/session?page=1e300', undefined],
        ['GET', '/logs?createdAtGe=0000-06-01T00:00:00Z', undefined],
      ];
      for (const [method, url, payload] of cases) {
        const response = await h.request({
          method: method,
          url,
          headers: json,
          ...(payload === undefined ? {} : { payload }),
        });
        expect([url, payload, response.statusCode]).toEqual([url, payload, 400]);
        expect(response.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      }
    });

    it('answers an over-long id like any unknown id', async () => {
      const response = await h.request({ method: 'GET', url: `/assistant/${'a'.repeat(150)}` });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({
        statusCode: 404,
        error: 'Not Found',
        message: 'Not Found',
      });
    });

    it('refuses malformed tool calls in session history', async () => {
      const [status] = await h.post('/session', {
        assistant: { model: { provider: 'openai', model: 'gpt-4o-mini' } },
        messages: [{ role: 'assistant', tool_calls: [{}] }],
      });
      expect(status).toBe(400);
    });

    it('stores a large log backlog in chunks and loses no good entry to a bad one', async () => {
      const before = (await h.get('/logs?limit=0&type=Call', h.keyB))[1].metadata
        .totalItems as number;
      const time = new Date().toISOString();
      for (let i = 0; i < 2500; i += 1) {
        h.store.logs.append({
          time,
          // Entry 7 names no org (the insert fails); entry 8 holds a NUL, stored as U+FFFD.
          orgId: i === 7 ? 'no-such-org' : h.orgB,
          type: 'Call',
          requestPath: i === 8 ? 'bad\u0000path' : `/x/${i}`,
        });
      }
      await h.store.logs.flush();
      const [, after] = await h.get('/logs?limit=0&type=Call', h.keyB);
      expect(after.metadata.totalItems - before).toBe(2499);
      expect(h.store.logs.droppedCount).toBe(1);
    });
  });
}
