/**
 * The cross-org phone number lookup inbound SIP routing uses: one indexed query on the number,
 * on the embedded PGlite and on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { storeTargets } from '../support/store-targets.js';

for (const target of storeTargets()) {
  describe(`phone numbers across orgs on ${target.name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let first = '';
    let second = '';
    beforeAll(async () => {
      ({ store, cleanup } = await target.open());
      first = await store.keys.createOrg('first');
      second = await store.keys.createOrg('second');
    });
    afterAll(async () => cleanup());

    it('finds a number in whichever org holds it, oldest first', async () => {
      const numbers = store.resources.phoneNumbers;
      const a = await numbers.create(first, {
        provider: 'byo-phone-number',
        number: '+14155550100',
      });
      const b = await numbers.create(second, {
        provider: 'byo-phone-number',
        number: '+14155550100',
      });
      await numbers.create(second, { provider: 'byo-phone-number', number: '+14155550199' });
      const found = await numbers.findAcrossOrgs('number', ['14155550100', '+14155550100'], 10);
      expect(found.map((number) => [number.orgId, number.id])).toEqual([
        [first, a.id],
        [second, b.id],
      ]);
      expect(await numbers.findAcrossOrgs('number', ['+14155550100'], 1)).toHaveLength(1);
      expect(await numbers.findAcrossOrgs('number', ['+19999999999'], 10)).toEqual([]);
      expect(await numbers.findAcrossOrgs('number', [], 10)).toEqual([]);
    });

    it('leaves secrets out, like get', async () => {
      const numbers = store.resources.phoneNumbers;
      await numbers.create(first, {
        provider: 'byo-phone-number',
        number: '+14155550111',
        server: { url: 'http://example.test', secret: 'hidden' },
      });
      const [found] = await numbers.findAcrossOrgs('number', ['+14155550111'], 10);
      expect(JSON.stringify(found)).not.toContain('hidden');
    });

    it('refuses a field that has no column', async () => {
      await expect(store.resources.phoneNumbers.findAcrossOrgs('name', ['x'], 10)).rejects.toThrow(
        /no filter column/,
      );
    });

    it('is served by the index on the number, not by a scan', async () => {
      const plan = await store.db.sql.begin(async (tx) => {
        await tx`set local enable_seqscan = off`;
        return tx<{ 'QUERY PLAN': string }[]>`
          explain select id from phone_numbers where number in ('+14155550100', '14155550100')`;
      });
      expect(plan.map((row) => row['QUERY PLAN']).join('\n')).toContain('phone_numbers_number');
    });
  });
}
