import { extname } from 'node:path';

/** Media types whose content is text, beyond `text/*`. */
const TEXT_MIMETYPES: ReadonlySet<string> = new Set([
  'application/json',
  'application/ld+json',
  'application/xml',
  'application/x-yaml',
  'application/yaml',
  'application/x-ndjson',
  'application/javascript',
  'application/x-sh',
  'application/sql',
  'application/toml',
]);

/** Extensions read as text when the media type says nothing useful. */
const TEXT_EXTENSIONS: ReadonlySet<string> = new Set([
  '.txt',
  '.text',
  '.md',
  '.markdown',
  '.mdx',
  '.csv',
  '.tsv',
  '.json',
  '.jsonl',
  '.ndjson',
  '.xml',
  '.yaml',
  '.yml',
  '.toml',
  '.ini',
  '.log',
  '.html',
  '.htm',
  '.rst',
  '.srt',
  '.vtt',
]);

/** Media types by extension, for uploads sent without a useful Content-Type. */
const MIMETYPE_BY_EXTENSION: Readonly<Record<string, string>> = {
  '.txt': 'text/plain',
  '.text': 'text/plain',
  '.log': 'text/plain',
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.mdx': 'text/markdown',
  '.csv': 'text/csv',
  '.tsv': 'text/tab-separated-values',
  '.json': 'application/json',
  '.jsonl': 'application/x-ndjson',
  '.ndjson': 'application/x-ndjson',
  '.xml': 'application/xml',
  '.yaml': 'application/x-yaml',
  '.yml': 'application/x-yaml',
  '.toml': 'application/toml',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

const GENERIC_MIMETYPES: ReadonlySet<string> = new Set(['', 'application/octet-stream']);
/** `type/subtype` with optional parameters; anything else is not echoed back as a header. */
const MIMETYPE_SHAPE =
  /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*(\s*;[\x20-\x7e]*)?$/i;

/** The media type without parameters, lower-cased: `Text/Plain; charset=x` → `text/plain`. */
export function baseMimetype(mimetype: string): string {
  return (mimetype.split(';')[0] ?? '').trim().toLowerCase();
}

/**
 * The media type to store: the client's when it is well-formed and specific, else a guess from
 * the file name's extension, else `application/octet-stream`.
 */
export function resolveMimetype(declared: string | undefined, filename: string): string {
  const given = (declared ?? '').trim();
  if (
    given.length <= 255 &&
    MIMETYPE_SHAPE.test(given) &&
    !GENERIC_MIMETYPES.has(baseMimetype(given))
  ) {
    return given;
  }
  return MIMETYPE_BY_EXTENSION[extname(filename).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * Whether a file is text to extract. A specific media type decides; only a generic one
 * (`application/octet-stream` or none) defers to the extension.
 */
export function isTextLike(mimetype: string, filename: string): boolean {
  const base = baseMimetype(mimetype);
  if (GENERIC_MIMETYPES.has(base)) {
    return TEXT_EXTENSIONS.has(extname(filename).toLowerCase());
  }
  return (
    base.startsWith('text/') ||
    TEXT_MIMETYPES.has(base) ||
    base.endsWith('+json') ||
    base.endsWith('+xml')
  );
}

/** The file is declared as text but is not valid UTF-8. */
export class InvalidTextError extends Error {
  constructor() {
    super('file content is not valid UTF-8 text');
    this.name = 'InvalidTextError';
  }
}

/**
 * Decodes a byte stream as UTF-8, chunk by chunk, so large files are never held whole. A byte
 * order mark is dropped. Throws InvalidTextError on the first invalid sequence, including a
 * sequence cut off at the end.
 */
export async function* decodeUtf8(source: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const decode = (chunk?: Uint8Array): string => {
    try {
      return chunk === undefined ? decoder.decode() : decoder.decode(chunk, { stream: true });
    } catch {
      // The fatal decoder throws a TypeError on malformed input.
      throw new InvalidTextError();
    }
  };
  for await (const chunk of source) {
    const text = decode(chunk);
    if (text !== '') {
      yield text;
    }
  }
  const rest = decode();
  if (rest !== '') {
    yield rest;
  }
}
