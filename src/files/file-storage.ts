import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Org and file ids become directory names, so only plain id characters are allowed. */
const SEGMENT = /^[A-Za-z0-9_-]{1,100}$/;

const ORIGINAL = 'original';
const PARSED = 'parsed.txt';

export interface OpenedContent {
  stream: Readable;
  bytes: number;
}

/**
 * Uploaded files on local disk: `<root>/<orgId>/<fileId>/original` and, when text was extracted,
 * `parsed.txt` beside it. Names sent by clients never reach a path. Every write goes to a
 * temporary file in the same directory first and is renamed into place, so a reader never sees
 * a half-written file.
 */
export class FileStorage {
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  /** The storage key of a file's original bytes, relative to the root. */
  static key(orgId: string, fileId: string): string {
    return `${checkSegment(orgId)}/${checkSegment(fileId)}/${ORIGINAL}`;
  }

  dir(orgId: string, fileId: string): string {
    return join(this.root, checkSegment(orgId), checkSegment(fileId));
  }

  /** Streams `source` into the file's original; returns the number of bytes written. */
  async writeOriginal(orgId: string, fileId: string, source: Readable): Promise<number> {
    const dir = this.dir(orgId, fileId);
    await mkdir(dir, { recursive: true });
    return writeAtomically(join(dir, ORIGINAL), source);
  }

  /**
   * Writes extracted text as UTF-8. The directory is not created: when the file was deleted
   * meanwhile, this fails instead of bringing it back.
   */
  async writeParsed(orgId: string, fileId: string, text: AsyncIterable<string>): Promise<number> {
    return writeAtomically(join(this.dir(orgId, fileId), PARSED), text);
  }

  openOriginal(orgId: string, fileId: string): Promise<OpenedContent | null> {
    return openContent(join(this.dir(orgId, fileId), ORIGINAL));
  }

  openParsed(orgId: string, fileId: string): Promise<OpenedContent | null> {
    return openContent(join(this.dir(orgId, fileId), PARSED));
  }

  /** Removes everything kept for a file; a missing directory is not an error. */
  async remove(orgId: string, fileId: string): Promise<void> {
    // An extraction still writing its temp file can refill the folder mid-removal (ENOTEMPTY):
    // rm retries that; the extraction drops what it wrote once it sees the file gone.
    await rm(this.dir(orgId, fileId), {
      recursive: true,
      force: true,
      maxRetries: 10,
      retryDelay: 20,
    });
  }
}

function checkSegment(segment: string): string {
  if (!SEGMENT.test(segment)) {
    throw new Error(`not a valid storage id: ${JSON.stringify(segment)}`);
  }
  return segment;
}

async function writeAtomically(
  target: string,
  source: AsyncIterable<string | Uint8Array>,
): Promise<number> {
  const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
  let bytes = 0;
  try {
    await pipeline(
      source,
      async function* count(chunks: AsyncIterable<string | Uint8Array>) {
        for await (const chunk of chunks) {
          const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
          bytes += buffer.byteLength;
          yield buffer;
        }
      },
      createWriteStream(temp, { flags: 'wx', mode: 0o600 }),
    );
    await rename(temp, target);
    return bytes;
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** Opens a file for streaming, or null when it does not exist. */
async function openContent(path: string): Promise<OpenedContent | null> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return null;
    }
    throw error;
  }
  try {
    const { size } = await handle.stat();
    return { stream: handle.createReadStream(), bytes: size };
  } catch (error) {
    await handle.close();
    throw error;
  }
}
