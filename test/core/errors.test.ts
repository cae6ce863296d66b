import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ParlaError } from '../../src/core/errors.js';

describe('error codes', () => {
  it('are each documented in docs/errors.md, and the doc lists no others', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    const documented = [...doc.matchAll(/^\|\s*`(ERR_[A-Z_]+)`\s*\|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it('carry their status and details', () => {
    const error = new ParlaError('ERR_VALIDATION', ['a', 'b']);
    expect(error.statusCode).toBe(400);
    expect(error.details).toEqual(['a', 'b']);
    expect(error.message).toBe('a; b');
  });
});
