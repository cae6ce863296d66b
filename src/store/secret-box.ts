import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ParlaError } from '../core/errors.js';

const PREFIX = 'sealed:v1:';

/** Field names whose string values are secrets: sealed at rest, never returned by the API. */
export const SECRET_FIELDS: ReadonlySet<string> = new Set([
  'apiKey',
  'authPassword',
  'password',
  'secret',
  'clientSecret',
  'secretKey',
  'privateKey',
  'token',
]);

/** Subtrees that hold user data or JSON schemas, where those names mean something else. */
const NOT_SECRET_SUBTREES: ReadonlySet<string> = new Set([
  'variableValues',
  'metadata',
  'parameters',
  'properties',
  'body',
  'headers',
  'schema',
  'messages',
  'input',
  'output',
]);

/** AES-256-GCM sealing of secret fields inside JSON documents. */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) {
      throw new Error('secret key must be 32 bytes');
    }
    this.#key = key;
  }

  /** Key from PARLA_SECRET_KEY (base64 or hex), else a key file created on first use. */
  static fromConfig(secretKey: string, keyFile: string): SecretBox {
    if (secretKey !== '') {
      const key = /^[0-9a-f]{64}$/i.test(secretKey)
        ? Buffer.from(secretKey, 'hex')
        : Buffer.from(secretKey, 'base64');
      if (key.length !== 32) {
        throw new Error('PARLA_SECRET_KEY must be 32 bytes, as 64 hex digits or base64');
      }
      return new SecretBox(key);
    }
    if (!existsSync(keyFile)) {
      mkdirSync(dirname(keyFile), { recursive: true });
      writeFileSync(keyFile, randomBytes(32).toString('base64') + '\n', {
        mode: 0o600,
        flag: 'wx',
      });
    }
    return new SecretBox(Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64'));
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return PREFIX + [iv, cipher.getAuthTag(), body].map((b) => b.toString('base64url')).join('.');
  }

  open(sealed: string): string {
    try {
      return this.#open(sealed);
    } catch (error) {
      throw new ParlaError(
        'ERR_INTERNAL',
        'a stored secret cannot be opened: it was sealed with another key (is PARLA_SECRET_KEY the same on every node?)',
        { cause: error },
      );
    }
  }

  #open(sealed: string): string {
    const [iv, tag, body] = sealed
      .slice(PREFIX.length)
      .split('.')
      .map((p) => Buffer.from(p, 'base64url'));
    if (iv === undefined || tag === undefined || body === undefined) {
      throw new Error('malformed sealed secret');
    }
    const decipher = createDecipheriv('aes-256-gcm', this.#key, iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  }

  /** A copy of `doc` with every plain secret sealed. */
  sealDoc<T>(doc: T): T {
    return mapSecrets(doc, (value) => (value.startsWith(PREFIX) ? value : this.seal(value)));
  }

  /** A copy of `doc` with every sealed secret opened, for internal use only. */
  openDoc<T>(doc: T): T {
    return mapSecrets(doc, (value) => (value.startsWith(PREFIX) ? this.open(value) : value));
  }
}

/**
 * Whether any string in `value` is a sealed secret. Stored documents have every secret sealed,
 * so a document without one needs no redaction copy (the common case on list reads).
 */
export function containsSealed(value: unknown): boolean {
  if (typeof value === 'string') {
    return value.startsWith(PREFIX);
  }
  if (Array.isArray(value)) {
    return value.some(containsSealed);
  }
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) {
      if (containsSealed(child)) {
        return true;
      }
    }
  }
  return false;
}

/** A copy of `doc` without its secret fields, for API responses and logs. */
export function redactSecrets<T>(doc: T): T {
  return mapSecrets(doc, () => undefined);
}

function mapSecrets<T>(doc: T, fn: (value: string) => string | undefined): T {
  return walk(doc, fn) as T;
}

/** `server.headers` carries webhook credentials (Authorization, x-api-key): every value is secret. */
function isSecretHeaders(
  key: string,
  parentKey: string | null,
  child: unknown,
): child is Record<string, unknown> {
  return (
    key === 'headers' &&
    parentKey === 'server' &&
    child !== null &&
    typeof child === 'object' &&
    !Array.isArray(child)
  );
}

function walk(
  value: unknown,
  fn: (value: string) => string | undefined,
  parentKey: string | null = null,
): unknown {
  if (Array.isArray(value)) {
    return value.map((item) => walk(item, fn, parentKey));
  }
  if (value === null || typeof value !== 'object') {
    return value;
  }
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (SECRET_FIELDS.has(key) && typeof child === 'string') {
      const mapped = fn(child);
      if (mapped !== undefined) {
        out[key] = mapped;
      }
    } else if (isSecretHeaders(key, parentKey, child)) {
      const headers: Record<string, unknown> = {};
      for (const [name, headerValue] of Object.entries(child)) {
        const mapped = typeof headerValue === 'string' ? fn(headerValue) : headerValue;
        if (mapped !== undefined) {
          headers[name] = mapped;
        }
      }
      out[key] = headers;
    } else if (NOT_SECRET_SUBTREES.has(key)) {
      out[key] = child;
    } else {
      out[key] = walk(child, fn, key);
    }
  }
  return out;
}
