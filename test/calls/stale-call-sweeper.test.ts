import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STALE_CALL_MESSAGE, sweepStaleCalls } from '../../src/calls/stale-call-sweeper.js';
import type { Store } from '../../src/store/store.js';
import { storeTargets } from '../support/store-targets.js';

for (const target of storeTargets()) {
  describe(`sweeping the calls a stopped server left live (${target.name})`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      const opened = await target.open();
      store = opened.store;
      cleanup = opened.cleanup;
    });
    afterAll(() => cleanup());

    it('ends queued, ringing, in-progress and forwarding calls of every org, and only those', async () => {
      const orgA = await store.keys.createOrg('a');
      const orgB = await store.keys.createOrg('b');
      const create = (orgId: string, doc: Record<string, unknown>) =>
        store.resources.calls.create(orgId, { type: 'webCall', ...doc });
      const queued = await create(orgA, { status: 'queued' });
      const ringing = await create(orgA, { status: 'ringing' });
      const running = await create(orgB, {
        status: 'in-progress',
        startedAt: '2026-11-22T08:00:00.000Z',
      });
      const forwarding = await create(orgB, { status: 'forwarding' });
      const ended = await create(orgB, {
        status: 'ended',
        endedReason: 'customer-ended-call',
        endedAt: '2026-11-22T08:01:00.000Z',
      });
      const now = new Date('2026-11-22T09:00:00.000Z');

      expect(await sweepStaleCalls(store, now)).toBe(4);

      const get = async (orgId: string, id: string) =>
        (await store.resources.calls.get(orgId, id))!;
      expect(await get(orgA, queued.id)).toMatchObject({
        status: 'ended',
        endedReason: 'worker-shutdown',
        endedMessage: STALE_CALL_MESSAGE,
        endedAt: now.toISOString(),
      });
      expect(await get(orgA, ringing.id)).toMatchObject({
        status: 'ended',
        endedReason: 'call.in-progress.error-parlafault-worker-died',
      });
      expect(await get(orgB, running.id)).toMatchObject({
        status: 'ended',
        endedReason: 'call.in-progress.error-parlafault-worker-died',
        startedAt: '2026-11-22T08:00:00.000Z',
      });
      expect((await get(orgB, forwarding.id)).status).toBe('ended');
      expect(await get(orgB, ended.id)).toMatchObject({
        endedReason: 'customer-ended-call',
        endedAt: '2026-11-22T08:01:00.000Z',
      });
      // A second sweep finds nothing left.
      expect(await sweepStaleCalls(store, now)).toBe(0);
    });
  });
}
