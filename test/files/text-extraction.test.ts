import { describe, expect, it } from 'vitest';
import {
  baseMimetype,
  decodeUtf8,
  InvalidTextError,
  isTextLike,
  resolveMimetype,
} from '../../src/files/text-extraction.js';

async function* chunks(...parts: number[][]): AsyncGenerator<Uint8Array> {
  for (const part of parts) {
    yield Uint8Array.from(part);
    await Promise.resolve();
  }
}

async function collect(source: AsyncIterable<string>): Promise<string> {
  let out = '';
  for await (const text of source) {
    out += text;
  }
  return out;
}

describe('isTextLike', () => {
  it('accepts text media types, with or without parameters', () => {
    expect(isTextLike('text/plain', 'a.bin')).toBe(true);
    expect(isTextLike('Text/CSV; charset=utf-8', 'data')).toBe(true);
    expect(isTextLike('text/markdown', 'notes')).toBe(true);
    expect(isTextLike('application/json', 'x')).toBe(true);
    expect(isTextLike('application/xml', 'x')).toBe(true);
    expect(isTextLike('application/x-yaml', 'x')).toBe(true);
    expect(isTextLike('application/vnd.api+json', 'x')).toBe(true);
    expect(isTextLike('image/svg+xml', 'x')).toBe(true);
  });

  it('lets a specific non-text media type win over the extension', () => {
    expect(isTextLike('image/png', 'picture.png')).toBe(false);
    expect(isTextLike('application/pdf', 'notes.txt')).toBe(false);
  });

  it('falls back to the extension only for generic media types', () => {
    expect(isTextLike('application/octet-stream', 'README.md')).toBe(true);
    expect(isTextLike('', 'table.CSV')).toBe(true);
    expect(isTextLike('application/octet-stream', 'config.yml')).toBe(true);
    expect(isTextLike('application/octet-stream', 'archive.zip')).toBe(false);
    expect(isTextLike('application/octet-stream', 'no-extension')).toBe(false);
  });
});

describe('resolveMimetype', () => {
  it('keeps a well-formed specific type as sent', () => {
    expect(resolveMimetype('text/plain; charset=utf-8', 'a.bin')).toBe('text/plain; charset=utf-8');
    expect(resolveMimetype('image/png', 'a.txt')).toBe('image/png');
  });

  it('guesses from the extension when the type is generic, missing or malformed', () => {
    expect(resolveMimetype('application/octet-stream', 'doc.md')).toBe('text/markdown');
    expect(resolveMimetype(undefined, 'data.json')).toBe('application/json');
    expect(resolveMimetype('not a type\r\nx: y', 'a.csv')).toBe('text/csv');
    expect(resolveMimetype('', 'blob')).toBe('application/octet-stream');
  });

  it('baseMimetype drops parameters and case', () => {
    expect(baseMimetype(' Text/HTML ; charset=UTF-8')).toBe('text/html');
  });
});

describe('decodeUtf8', () => {
  it('decodes multi-byte characters split across chunks', async () => {
    const bytes = [...Buffer.from('héllo €😀', 'utf8')];
    // Cut inside the two-byte é, the three-byte € and the four-byte emoji.
    const text = await collect(
      decodeUtf8(chunks(bytes.slice(0, 2), bytes.slice(2, 8), bytes.slice(8, 11), bytes.slice(11))),
    );
    expect(text).toBe('héllo €😀');
  });

  it('drops a byte order mark', async () => {
    expect(await collect(decodeUtf8(chunks([0xef, 0xbb, 0xbf, 0x61])))).toBe('a');
  });

  it('yields nothing for an empty source', async () => {
    expect(await collect(decodeUtf8(chunks()))).toBe('');
  });

  it('rejects invalid bytes', async () => {
    await expect(collect(decodeUtf8(chunks([0x61], [0xff, 0x62])))).rejects.toBeInstanceOf(
      InvalidTextError,
    );
  });

  it('rejects a sequence cut off at the end', async () => {
    await expect(collect(decodeUtf8(chunks([0x61, 0xe2, 0x82])))).rejects.toBeInstanceOf(
      InvalidTextError,
    );
  });
});
