import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useHarness, type Harness } from '../support/app-harness.js';
import { storeTargets } from '../support/store-targets.js';

const MAX_FILE_BYTES = 1024 * 64;
const PNG = Uint8Array.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
  0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
  0x89, 0xff, 0xfe, 0x00,
]);

/** A file as the API returns it; error bodies share the object so one shape serves both. */
interface FileJson {
  id: string;
  orgId: string;
  object: string;
  status: string;
  name: string;
  originalName: string;
  bytes: number;
  purpose: string;
  mimetype: string;
  metadata: Record<string, unknown>;
  parsedTextUrl?: string;
  parsedTextBytes?: number;
  failureReason?: string;
  createdAt: string;
  updatedAt: string;
  statusCode?: number;
  message?: string | string[];
}
type Reply<T> = Promise<[number, T]>;

/** The harness shorthands with the bodies typed. */
function api(h: Harness) {
  return {
    get: (url: string, key?: string) => h.get(url, key) as Reply<FileJson>,
    list: (url: string, key?: string) => h.get(url, key) as Reply<FileJson[]>,
    post: (url: string, body: unknown) => h.post(url, body) as Reply<FileJson>,
    patch: (url: string, body: unknown, key?: string) => h.patch(url, body, key) as Reply<FileJson>,
    del: (url: string, key?: string) => h.del(url, key) as Reply<FileJson>,
  };
}

interface Form {
  file?: { data: Uint8Array | string; name?: string; type?: string };
  /** Appended after the file, as the platform's SDK does. */
  fields?: Record<string, string>;
  /** Extra file parts under other field names (or a second `file`). */
  extraFiles?: { field: string; data: string }[];
}

async function encode(form: Form): Promise<{ payload: Buffer; contentType: string }> {
  const body = new FormData();
  if (form.file !== undefined) {
    const { data, name = 'upload.txt', type = 'text/plain' } = form.file;
    body.append('file', new Blob([data], { type }), name);
  }
  for (const extra of form.extraFiles ?? []) {
    body.append(extra.field, new Blob([extra.data], { type: 'text/plain' }), 'extra.txt');
  }
  for (const [name, value] of Object.entries(form.fields ?? {})) {
    body.append(name, value);
  }
  const request = new Request('http://x', { method: 'POST', body });
  return {
    payload: Buffer.from(await request.arrayBuffer()),
    contentType: request.headers.get('content-type') ?? '',
  };
}

async function upload(h: Harness, form: Form, key?: string): Reply<FileJson> {
  const { payload, contentType } = await encode(form);
  const response = await h.request({
    method: 'POST',
    url: '/file',
    payload,
    headers: { 'content-type': contentType },
    ...(key === undefined ? {} : { key }),
  });
  return [response.statusCode, JSON.parse(response.body) as FileJson];
}

/** Polls GET /file/{id} until processing ends. */
async function settled(h: Harness, id: string): Promise<FileJson> {
  for (let i = 0; i < 250; i++) {
    const [status, body] = await api(h).get(`/file/${id}`);
    expect(status).toBe(200);
    if (body.status !== 'processing') {
      return body;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`file ${id} still processing`);
}

function orgDir(h: Harness, orgId: string): string {
  return join(h.dataDir, 'files', orgId);
}

function entries(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

for (const target of storeTargets()) {
  describe(target.name, () => {
    const h = useHarness(target, { maxFileBytes: MAX_FILE_BYTES });
    const a = api(h);

    it('stores a text file, extracts its text and serves both', async () => {
      const text = 'Opening hours: 9–17 h, Mon–Fri. Café ☕ 😀\n'.repeat(50);
      const [status, created] = await upload(h, {
        file: { data: text, name: 'hours.txt', type: 'text/plain' },
      });
      expect(status).toBe(201);
      const id = created.id;
      expect(created).toMatchObject({
        orgId: h.orgA,
        object: 'file',
        status: 'processing',
        name: 'hours.txt',
        originalName: 'hours.txt',
        bytes: Buffer.byteLength(text),
        purpose: 'assistant',
        mimetype: 'text/plain',
        key: `${h.orgA}/${id}/original`,
        path: `${h.orgA}/${id}/original`,
        bucket: 'local',
        url: `http://parla.test/file/${id}/content`,
        metadata: {},
      });
      expect(created.parsedTextUrl).toBeUndefined();

      const done = await settled(h, id);
      expect(done.status).toBe('done');
      expect(done.parsedTextUrl).toBe(`http://parla.test/file/${id}/parsed-text`);
      expect(done.parsedTextBytes).toBe(Buffer.byteLength(text));

      const content = await h.request({ method: 'GET', url: `/file/${id}/content` });
      expect(content.statusCode).toBe(200);
      expect(content.headers['content-type']).toMatch(/^text\/plain/);
      expect(content.headers['content-disposition']).toContain('filename="hours.txt"');
      expect(content.rawPayload.equals(Buffer.from(text))).toBe(true);

      const parsed = await h.request({ method: 'GET', url: `/file/${id}/parsed-text` });
      expect(parsed.statusCode).toBe(200);
      expect(parsed.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(parsed.rawPayload.equals(Buffer.from(text))).toBe(true);
    });

    it('finishes a binary file without parsed text', async () => {
      const [status, created] = await upload(h, {
        file: { data: PNG, name: 'pixel.png', type: 'image/png' },
      });
      expect(status).toBe(201);
      const done = await settled(h, created.id);
      expect(done.status).toBe('done');
      expect(done.mimetype).toBe('image/png');
      expect(done.parsedTextUrl).toBeUndefined();
      expect(done.parsedTextBytes).toBeUndefined();
      const content = await h.request({ method: 'GET', url: `/file/${created.id}/content` });
      expect(content.headers['content-type']).toBe('image/png');
      expect(content.rawPayload.equals(Buffer.from(PNG))).toBe(true);
      const [parsedStatus] = await a.get(`/file/${created.id}/parsed-text`);
      expect(parsedStatus).toBe(404);
    });

    it('fails a text file that is not valid UTF-8', async () => {
      const [status, created] = await upload(h, {
        file: { data: Uint8Array.from([0x68, 0x69, 0xff, 0xfe, 0x21]), type: 'text/plain' },
      });
      expect(status).toBe(201);
      const failed = await settled(h, created.id);
      expect(failed.status).toBe('failed');
      expect(failed.failureReason).toMatch(/UTF-8/);
      expect(failed.parsedTextUrl).toBeUndefined();
      expect(entries(join(orgDir(h, h.orgA), created.id))).toEqual(['original']);
      const [parsedStatus] = await a.get(`/file/${created.id}/parsed-text`);
      expect(parsedStatus).toBe(404);
    });

    it('takes a file of exactly the limit and refuses one byte more, leaving nothing', async () => {
      const [okStatus, ok] = await upload(h, {
        file: { data: new Uint8Array(MAX_FILE_BYTES).fill(0x61), name: 'max.txt' },
      });
      expect(okStatus).toBe(201);
      expect(ok.bytes).toBe(MAX_FILE_BYTES);
      await settled(h, ok.id);

      const before = entries(orgDir(h, h.orgA));
      const [status, body] = await upload(h, {
        file: { data: new Uint8Array(MAX_FILE_BYTES + 1).fill(0x61), name: 'big.txt' },
        fields: { purpose: 'assistant' },
      });
      expect(status).toBe(413);
      expect(body).toEqual({
        statusCode: 413,
        error: 'Payload Too Large',
        message: `file must not be larger than ${MAX_FILE_BYTES} bytes`,
      });
      expect(entries(orgDir(h, h.orgA))).toEqual(before);
    });

    it('requires a multipart body with one file part', async () => {
      const before = entries(orgDir(h, h.orgA));
      const [missing, missingBody] = await upload(h, { fields: { purpose: 'assistant' } });
      expect(missing).toBe(400);
      expect(missingBody.message).toEqual(['file should not be empty']);

      const [json, jsonBody] = await a.post('/file', { purpose: 'assistant' });
      expect(json).toBe(415);
      expect(jsonBody.statusCode).toBe(415);

      const [other, otherBody] = await upload(h, {
        extraFiles: [{ field: 'document', data: 'x' }],
      });
      expect(other).toBe(400);
      expect(otherBody.message).toEqual(['property document should not exist']);

      const [two, twoBody] = await upload(h, {
        file: { data: 'one' },
        extraFiles: [{ field: 'file', data: 'two' }],
      });
      expect(two).toBe(400);
      expect(twoBody.message).toEqual(['only one file may be uploaded per request']);

      const [unknown, unknownBody] = await upload(h, {
        file: { data: 'x' },
        fields: { colour: 'blue' },
      });
      expect(unknown).toBe(400);
      expect(unknownBody.message).toEqual(['property colour should not exist']);
      expect(entries(orgDir(h, h.orgA))).toEqual(before);
    });

    it('limits name to 40 characters and defaults it to the original name cut to 40', async () => {
      const [ok, okBody] = await upload(h, {
        file: { data: 'x' },
        fields: { name: 'n'.repeat(40) },
      });
      expect(ok).toBe(201);
      expect(okBody.name).toBe('n'.repeat(40));
      expect(okBody.originalName).toBe('upload.txt');

      const [tooLong, tooLongBody] = await upload(h, {
        file: { data: 'x' },
        fields: { name: 'n'.repeat(41) },
      });
      expect(tooLong).toBe(400);
      expect(tooLongBody.message).toEqual(['name must be shorter than or equal to 40 characters']);

      const longName = `${'é'.repeat(45)}.txt`;
      const [, defaulted] = await upload(h, { file: { data: 'x', name: longName } });
      expect(defaulted.originalName).toBe(longName);
      expect(defaulted.name).toBe('é'.repeat(40));
    });

    it('takes metadata as the JSON text of an object', async () => {
      const [ok, okBody] = await upload(h, {
        file: { data: 'x' },
        fields: { metadata: JSON.stringify({ source: 'crm', tags: ['a'] }) },
      });
      expect(ok).toBe(201);
      expect(okBody.metadata).toEqual({ source: 'crm', tags: ['a'] });
      for (const metadata of ['{not json', '[1,2]', '"text"', 'null']) {
        const [status, body] = await upload(h, { file: { data: 'x' }, fields: { metadata } });
        expect(status, metadata).toBe(400);
        expect(body.message).toEqual(['metadata must be a JSON object']);
      }
    });

    it('stores the purpose and filters the list by it', async () => {
      const [bad, badBody] = await upload(h, { file: { data: 'x' }, fields: { purpose: 'other' } });
      expect(bad).toBe(400);
      expect(badBody.message).toEqual([expect.stringMatching(/^purpose must be one of/)]);

      const [, kb] = await upload(h, {
        file: { data: 'kb' },
        fields: { purpose: 'knowledge-base-v2' },
      });
      const [, composer] = await upload(h, {
        file: { data: 'c' },
        fields: { purpose: 'composer-attachment' },
      });
      expect(kb.purpose).toBe('knowledge-base-v2');

      const [status, listed] = await a.list('/file?purpose=knowledge-base-v2');
      expect(status).toBe(200);
      expect(listed.map((f) => f.id)).toEqual([kb.id]);
      const [, all] = await a.list('/file');
      const ids = all.map((f) => f.id);
      expect(ids).toContain(kb.id);
      expect(ids).toContain(composer.id);
      expect(all.every((f) => f.object === 'file')).toBe(true);
      const [, one] = await a.list('/file?limit=1');
      expect(one).toHaveLength(1);
      const [unknownQuery] = await a.get('/file?colour=blue');
      expect(unknownQuery).toBe(400);
    });

    it('updates name and metadata only', async () => {
      const [, created] = await upload(h, { file: { data: 'x' } });
      await settled(h, created.id);
      const [status, updated] = await a.patch(`/file/${created.id}`, {
        name: 'renamed',
        metadata: { a: 1 },
      });
      expect(status).toBe(200);
      expect(updated).toMatchObject({ name: 'renamed', metadata: { a: 1 }, status: 'done' });
      expect(updated.updatedAt > created.updatedAt).toBe(true);
      const [tooLong] = await a.patch(`/file/${created.id}`, { name: 'n'.repeat(41) });
      expect(tooLong).toBe(400);
      const [purpose, purposeBody] = await a.patch(`/file/${created.id}`, { purpose: 'assistant' });
      expect(purpose).toBe(400);
      expect(purposeBody.message).toEqual(['property purpose should not exist']);
    });

    it("keeps org A's files from org B", async () => {
      const [, created] = await upload(h, { file: { data: 'private' } });
      await settled(h, created.id);
      const id = created.id;
      expect((await a.get(`/file/${id}`, h.keyB))[0]).toBe(404);
      expect((await a.patch(`/file/${id}`, { name: 'x' }, h.keyB))[0]).toBe(404);
      expect((await a.get(`/file/${id}/content`, h.keyB))[0]).toBe(404);
      expect((await a.get(`/file/${id}/parsed-text`, h.keyB))[0]).toBe(404);
      expect((await a.del(`/file/${id}`, h.keyB))[0]).toBe(404);
      const [, listB] = await a.list('/file', h.keyB);
      expect(listB.map((f) => f.id)).not.toContain(id);
      const [stillThere, kept] = await a.get(`/file/${id}`);
      expect(stillThere).toBe(200);
      expect(kept.name).toBe('upload.txt');
      expect(existsSync(join(orgDir(h, h.orgA), id, 'original'))).toBe(true);
    });

    it('deletes a file with its bytes on disk', async () => {
      const [, created] = await upload(h, { file: { data: 'to delete' } });
      const done = await settled(h, created.id);
      const dir = join(orgDir(h, h.orgA), created.id);
      expect(entries(dir)).toEqual(['original', 'parsed.txt']);
      const [status, deleted] = await a.del(`/file/${created.id}`);
      expect(status).toBe(200);
      expect(deleted).toMatchObject({ id: created.id, object: 'file', status: done.status });
      expect(existsSync(dir)).toBe(false);
      expect((await a.get(`/file/${created.id}`))[0]).toBe(404);
      expect((await a.get(`/file/${created.id}/content`))[0]).toBe(404);
      expect((await a.del(`/file/${created.id}`))[0]).toBe(404);
    });
  });
}
