import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { getCSeq, getFrom, getTo, getTopVia } from '../../../src/transports/sip/message.js';
import { parseSipMessage } from '../../../src/transports/sip/parser.js';
import { serializeSipMessage } from '../../../src/transports/sip/serializer.js';

const FIXTURES = new URL('../../fixtures/sip/', import.meta.url);
const corpus = (
  JSON.parse(readFileSync(new URL('corpus.json', FIXTURES), 'utf8')) as {
    file: string;
  }[]
).map((entry) => readFileSync(new URL(entry.file, FIXTURES)));

/** Deterministic xorshift32, so a failure names a reproducible seed. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
}

const INTERESTING = [
  '"',
  '<',
  '>',
  ';',
  ',',
  ':',
  '\\',
  '\r\n',
  '\r\n ',
  ' ',
  '=',
  '%',
  '\0',
  'é',
].map((text) => Buffer.from(text));

function mutate(source: Buffer, next: () => number): Buffer {
  let data = Buffer.from(source);
  const edits = 1 + Math.floor(next() * 4);
  for (let edit = 0; edit < edits; edit++) {
    const at = Math.floor(next() * (data.length + 1));
    const choice = next();
    if (choice < 0.25 && data.length > 0) {
      data[Math.min(at, data.length - 1)] = Math.floor(next() * 256);
    } else if (choice < 0.5) {
      const insert = INTERESTING[Math.floor(next() * INTERESTING.length)]!;
      data = Buffer.concat([data.subarray(0, at), insert, data.subarray(at)]);
    } else if (choice < 0.7) {
      const length = Math.floor(next() * 12);
      data = Buffer.concat([data.subarray(0, at), data.subarray(at + length)]);
    } else if (choice < 0.85) {
      data = data.subarray(0, at);
    } else {
      const length = Math.floor(next() * 40);
      data = Buffer.concat([data.subarray(0, at + length), data.subarray(at)]);
    }
  }
  return data;
}

describe('parseSipMessage under random mutation', () => {
  it('never throws, and whatever it accepts serializes and parses again', () => {
    const next = random(0x5eed);
    let accepted = 0;
    let rejected = 0;
    for (let round = 0; round < 4000; round++) {
      const source = corpus[round % corpus.length]!;
      const data = mutate(source, next);
      const stream = round % 3 === 0;
      let result: ReturnType<typeof parseSipMessage> | undefined;
      expect(() => (result = parseSipMessage(data, { stream })), `round ${round}`).not.toThrow();
      if (!result!.ok) {
        rejected++;
        expect(result!.code).toMatch(/^SIP_[A-Z_]+$/);
        continue;
      }
      accepted++;
      const message = result!.message;
      expect(getTopVia(message)).toBeDefined();
      expect(getCSeq(message)).toBeDefined();
      expect(getFrom(message)).toBeDefined();
      expect(getTo(message)).toBeDefined();
      const again = parseSipMessage(serializeSipMessage(message), { stream: true });
      expect(again.ok ? 'ok' : `${again.code}: ${again.reason}`, `round ${round}`).toBe('ok');
    }
    // Both outcomes must occur, or the mutations are too weak (or too strong) to mean anything.
    expect(accepted).toBeGreaterThan(200);
    expect(rejected).toBeGreaterThan(200);
  });
});
