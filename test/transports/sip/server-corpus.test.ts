import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serializeSipMessage } from '../../../src/transports/sip/serializer.js';
import { request } from './support/messages.js';
import { TestUas } from './support/test-uas.js';

const FIXTURES = new URL('../../fixtures/sip/', import.meta.url);
/** The Via this test adds is the one thing this message lacked: the server must accept it. */
const FIXED_BY_OUR_VIA = 'invalid/no-via.sip';
const corpus = (
  JSON.parse(readFileSync(new URL('corpus.json', FIXTURES), 'utf8')) as {
    file: string;
    expect: string;
    reply?: number | null;
  }[]
).map((entry) => (entry.file === FIXED_BY_OUR_VIA ? { ...entry, expect: 'ok' } : entry));

/**
 * Feeds the whole torture corpus to a running server over UDP. Each message gets our own Via
 * on top (with rport) so that whatever the server answers comes back to this socket; the
 * message's own Via lines stay below it and are still checked by the parser.
 */
describe('the running SIP server under the torture corpus', () => {
  let uas: TestUas;
  const client = createSocket('udp4');
  const responses: { status: number; callId: string }[] = [];

  beforeAll(async () => {
    uas = await TestUas.start();
    // Read answers loosely: a 400 echoes the broken header lines of the request it refuses.
    client.on('message', (data) => {
      const text = data.toString('latin1');
      const status = /^SIP\/2\.0 ([0-9]{3}) /.exec(text)?.[1];
      const callId = /\r\nCall-ID: ([^\r\n]*)/.exec(text)?.[1];
      if (status !== undefined && callId !== undefined) {
        responses.push({ status: Number(status), callId });
      }
    });
    await new Promise<void>((resolve) => client.bind(0, '127.0.0.1', () => resolve()));
  });

  afterAll(async () => {
    await uas.close();
    await new Promise<void>((resolve) => client.close(() => resolve()));
  });

  it('answers every valid request, never accepts an invalid one, and keeps serving', async () => {
    const port = client.address().port;
    const sent: {
      callId: string;
      file: string;
      valid: boolean;
      reply: number | null | undefined;
    }[] = [];
    corpus.forEach((entry, index) => {
      const bytes = readFileSync(new URL(entry.file, FIXTURES));
      const lineEnd = bytes.indexOf('\r\n');
      const via = `Via: SIP/2.0/UDP 127.0.0.1:${port};branch=z9hG4bK-corpus-${index};rport\r\n`;
      const data = Buffer.concat([
        bytes.subarray(0, lineEnd + 2),
        Buffer.from(via),
        bytes.subarray(lineEnd + 2),
      ]);
      const text = data.toString('latin1');
      const callId = /\r\n(?:call-id|i)[ \t]*:[ \t]*([^\r\n]+)/i.exec(text)?.[1]?.trim();
      if (callId !== undefined) {
        sent.push({
          callId,
          file: entry.file,
          valid: entry.expect === 'ok',
          reply: entry.reply,
        });
      }
      client.send(data, uas.udp.port, '127.0.0.1');
    });
    const ping = request('OPTIONS', {
      via: `SIP/2.0/UDP 127.0.0.1:${port};branch=z9hG4bK-after-corpus;rport`,
      callId: 'after-corpus',
    });
    client.send(serializeSipMessage(ping), uas.udp.port, '127.0.0.1');
    const start = Date.now();
    while (!responses.some((response) => response.callId === 'after-corpus')) {
      expect(Date.now() - start, 'the server stopped answering').toBeLessThan(10_000);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(responses.find((response) => response.callId === 'after-corpus')!.status).toBe(200);

    const invalid = corpus.filter((entry) => entry.expect !== 'ok').length;
    expect(uas.udp.stats.parseErrors).toBe(invalid);
    const invalidCallIds = sent.filter((entry) => !entry.valid).map((entry) => entry.callId);
    expect(new Set(invalidCallIds).size).toBe(invalidCallIds.length);
    for (const { callId, ...entry } of sent) {
      const answers = responses.filter((response) => response.callId === callId);
      const statuses = answers.map((response) => response.status);
      const isRequest = !readFileSync(new URL(entry.file, FIXTURES))
        .toString('latin1')
        .startsWith('SIP/');
      if (entry.valid && isRequest) {
        expect(statuses.length, `${entry.file} got no answer`).toBeGreaterThan(0);
        expect(statuses, entry.file).not.toContain(400);
      } else if (!entry.valid) {
        // Our Via on top makes every invalid request answerable: each gets exactly one 400/505.
        expect(statuses, entry.file).toEqual(isRequest ? [entry.reply ?? 400] : []);
      }
    }
  });
});
