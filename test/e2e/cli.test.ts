import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';

describe('parla CLI (npm run keys)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parla-cli-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
      env: { ...process.env, PARLA_DATA_DIR: dataDir, DATABASE_URL: '' },
      encoding: 'utf8',
      timeout: 120_000,
    });

  it(
    'creates orgs and keys, lists them without the keys, and revokes',
    { timeout: 300_000 },
    async () => {
      const created = cli('orgs', 'create', 'Acme');
      expect(created.status).toBe(0);
      const key = /key (parla_\S+)/.exec(created.stdout)?.[1];
      expect(key).toBeDefined();

      const second = cli('keys', 'create', '--name', 'ci');
      expect(second.status).toBe(0);
      const [, keyId, secondKey] =
        /key id (\S+) for org \S+\n(parla_\S+)/.exec(second.stdout) ?? [];

      const listed = cli('keys', 'list');
      expect(listed.status).toBe(0);
      expect(listed.stdout).toContain(keyId);
      expect(listed.stdout).not.toContain(key);
      expect(listed.stdout).not.toContain(secondKey);

      expect(cli('keys', 'revoke', keyId!).status).toBe(0);
      expect(cli('keys', 'revoke', keyId!).status).toBe(1);
      expect(cli('frobnicate').status).toBe(2);

      const store = await Store.open({ dataDir });
      try {
        expect(await store.keys.authenticate(key!)).not.toBeNull();
        expect(await store.keys.authenticate(secondKey!)).toBeNull();
      } finally {
        await store.close();
      }
    },
  );
});
