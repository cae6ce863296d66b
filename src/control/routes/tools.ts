import type { FastifyInstance } from 'fastify';
import { ParlaError } from '../../core/errors.js';
import { withDefaultFunction } from '../../core/tool-functions.js';
import { mergePatch, registerCrud } from '../crud.js';
import { LimitQuery, Strict } from '../schemas/common.js';
import { CreateTool, UpdateToolEnvelope, toolUpdateSchema } from '../schemas/tool.js';
import { validateBody } from '../validation.js';
import type { RouteDeps } from './index.js';

export function registerToolRoutes(app: FastifyInstance, deps: RouteDeps): void {
  registerCrud(app, deps.store, {
    path: '/tool',
    resource: 'tools',
    label: 'Tool',
    createSchema: CreateTool,
    updateSchema: UpdateToolEnvelope,
    listQuery: Strict(LimitQuery),
    paged: false,
    prepareCreate: (_ctx, body) => withDefaultFunction(body),
    prepareUpdate: (_ctx, current, patch) => {
      const type = current.type as string;
      if (patch.type !== undefined && patch.type !== type) {
        throw new ParlaError('ERR_VALIDATION', [
          `type cannot change from ${type} to ${JSON.stringify(patch.type)}`,
        ]);
      }
      const schema = toolUpdateSchema(type);
      if (schema === undefined) {
        throw new ParlaError('ERR_INTERNAL', `stored tool has unknown type ${type}`);
      }
      validateBody(schema, patch);
      const merged = mergePatch(current, patch);
      // A transferCall's generated function lists its destinations: regenerate it when they change.
      if (
        type === 'transferCall' &&
        patch.destinations !== undefined &&
        patch.function === undefined
      ) {
        delete merged.function;
      }
      return withDefaultFunction(merged);
    },
  });
}
