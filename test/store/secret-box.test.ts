import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox, redactSecrets } from '../../src/store/secret-box.js';
import { storeTargets } from '../support/store-targets.js';
import { beforeAll, afterAll } from 'vitest';
import type { Store } from '../../src/store/store.js';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('round-trips and detects tampering', () => {
    const sealed = box.seal('sk-live-123');
    expect(sealed.startsWith('sealed:v1:')).toBe(true);
    expect(sealed).not.toContain('sk-live-123');
    expect(box.open(sealed)).toBe('sk-live-123');
    const tampered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
    expect(() => box.open(tampered)).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed)).toThrow();
  });

  it('seals secret fields at any depth but not user data subtrees', () => {
    const doc = {
      credentials: [{ provider: 'openai', apiKey: 'k1' }],
      server: { url: 'https://x', secret: 's1' },
      variableValues: { token: 'not-a-secret' },
      schema: { properties: { password: { type: 'string' } } },
    };
    const sealed = box.sealDoc(doc);
    expect(sealed.credentials[0]!.apiKey).toMatch(/^sealed:v1:/);
    expect(sealed.server.secret).toMatch(/^sealed:v1:/);
    expect(sealed.variableValues.token).toBe('not-a-secret');
    expect(box.sealDoc(sealed)).toEqual(sealed);
    expect(box.openDoc(sealed)).toEqual(doc);
    expect(redactSecrets(sealed)).toEqual({
      credentials: [{ provider: 'openai' }],
      server: { url: 'https://x' },
      variableValues: { token: 'not-a-secret' },
      schema: { properties: { password: { type: 'string' } } },
    });
  });
});

for (const target of storeTargets()) {
  describe(`secrets at rest on ${target.name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ store, cleanup } = await target.open());
    });
    afterAll(async () => cleanup());

    it('keeps secrets sealed in the table and out of API-shaped reads', async () => {
      const orgId = await store.keys.createOrg('o');
      const created = await store.resources.assistants.create(orgId, {
        name: 'a',
        credentials: [{ provider: 'openai', apiKey: 'sk-very-secret' }],
      });
      expect(JSON.stringify(created)).not.toContain('sk-very-secret');
      const [row] = await store.db.sql<
        { doc: unknown }[]
      >`select doc from assistants where id = ${created.id}`;
      expect(JSON.stringify(row!.doc)).not.toContain('sk-very-secret');
      expect(JSON.stringify(row!.doc)).toContain('sealed:v1:');
      const internal = await store.resources.assistants.getInternal(orgId, created.id);
      expect((internal!.credentials as { apiKey: string }[])[0]!.apiKey).toBe('sk-very-secret');
      const other = await store.keys.createOrg('other');
      expect(await store.resources.assistants.getInternal(other, created.id)).toBeNull();
    });
  });
}
