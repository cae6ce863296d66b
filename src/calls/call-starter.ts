import type { Doc, Resource } from '../store/resource-store.js';

/**
 * The seam between the control plane and the call engine. `POST /call` stores the call as
 * `queued` and hands it here; the fields returned are merged into the stored call at once (for
 * example the websocket URL, or `ended` with an `endedReason` when the call cannot start).
 * Later status changes are written by the engine itself.
 */
export interface CallStarter {
  start(orgId: string, call: Resource): Promise<Doc>;
}

/**
 * Used until a transport is wired in: every call ends at once with a reason saying its transport
 * could not be started, rather than pretending to ring.
 */
export class NoTransportCallStarter implements CallStarter {
  start(_orgId: string, _call: Resource): Promise<Doc> {
    const now = new Date().toISOString();
    return Promise.resolve({
      status: 'ended',
      endedReason: 'call.start.error-get-transport',
      endedMessage: 'No transport of this kind is available on this Parla server yet',
      startedAt: now,
      endedAt: now,
    });
  }
}
