import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStorage } from '../../src/files/file-storage.js';

describe('FileStorage', () => {
  const root = mkdtempSync(join(tmpdir(), 'parla-storage-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const storage = new FileStorage(root);

  it('refuses ids that could leave its folder', () => {
    expect(() => storage.dir('org', '../etc')).toThrow(/not a valid storage id/);
    expect(() => storage.dir('..', 'x')).toThrow(/not a valid storage id/);
  });
});
