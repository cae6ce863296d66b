import type { FastifyInstance } from 'fastify';
import type { RouteDeps } from './index.js';

// Placeholder so the tree builds while this module is written; replaced in this same change.
export function registerToolRoutes(_app: FastifyInstance, _deps: RouteDeps): void {}
