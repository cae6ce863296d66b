import type { FastifyInstance } from 'fastify';
import { ParlaError } from '../core/errors.js';
import type { Store } from '../store/store.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Every route needs `Authorization: Bearer <key>` unless its config says `public`. */
export function registerAuth(app: FastifyInstance, store: Store): void {
  app.decorateRequest('orgId', '');
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.public === true) {
      return;
    }
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? BEARER.exec(header) : null;
    if (match?.[1] === undefined) {
      throw new ParlaError(
        'ERR_UNAUTHORIZED',
        'Missing Authorization header: send `Authorization: Bearer <API key>`',
      );
    }
    const orgId = await store.keys.authenticate(match[1]);
    if (orgId === null) {
      throw new ParlaError('ERR_UNAUTHORIZED', 'Invalid Key');
    }
    request.orgId = orgId;
  });
}
