import type { Store } from '../store/store.js';
import { ENDED_REASON_WORKER_DIED, ENDED_REASON_WORKER_SHUTDOWN } from '../workers/protocol.js';

/** Statuses of a call some server process was running (or about to run). */
const LIVE_STATUSES = ['queued', 'ringing', 'in-progress', 'forwarding'];
/** Calls read per query while sweeping. */
const PAGE_SIZE = 500;

export const STALE_CALL_MESSAGE = 'Parla stopped while the call was live, without ending it';

/**
 * Ends the calls a previous run of this server left live: it stopped without ending them (a
 * crash, a kill), so their sockets, tokens and workers are gone and they can never go on. Run at
 * start-up, before any call is taken; one Parla process per store is assumed (several nodes
 * sharing a store would end each other's calls). A queued call never started
 * (`worker-shutdown`); one that rang or ran lost its worker (`…-worker-died`).
 * Resolves with how many calls were ended.
 */
export async function sweepStaleCalls(store: Store, now: Date = new Date()): Promise<number> {
  const endedAt = now.toISOString();
  let swept = 0;
  for (const org of await store.keys.listOrgs()) {
    for (;;) {
      const live = await store.resources.calls.list(org.id, {
        limit: PAGE_SIZE,
        equals: { status: LIVE_STATUSES },
      });
      for (const call of live) {
        const updated = await store.resources.calls.update(org.id, call.id, (current) =>
          LIVE_STATUSES.includes(String(current.status))
            ? {
                ...current,
                status: 'ended',
                endedReason:
                  current.status === 'queued'
                    ? ENDED_REASON_WORKER_SHUTDOWN
                    : ENDED_REASON_WORKER_DIED,
                endedMessage: STALE_CALL_MESSAGE,
                startedAt: typeof current.startedAt === 'string' ? current.startedAt : endedAt,
                endedAt,
              }
            : current,
        );
        if (updated !== null) {
          swept++;
        }
      }
      if (live.length < PAGE_SIZE) {
        break;
      }
    }
  }
  return swept;
}
