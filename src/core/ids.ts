import { randomBytes, randomUUID } from 'node:crypto';

/** Resource identifiers are UUID v4 strings, as on the hosted platform. */
export function newId(): string {
  return randomUUID();
}

/** An unguessable token (256 bits), URL-safe. */
export function newToken(prefix = ''): string {
  return prefix + randomBytes(32).toString('base64url');
}
