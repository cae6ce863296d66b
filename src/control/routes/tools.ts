import type { FastifyInstance } from 'fastify';
import { ParlaError } from '../../core/errors.js';
import type { Doc } from '../../store/resource-store.js';
import { mergePatch, registerCrud } from '../crud.js';
import { LimitQuery, Strict } from '../schemas/common.js';
import { CreateTool, UpdateToolEnvelope, toolUpdateSchema } from '../schemas/tool.js';
import { validateBody } from '../validation.js';
import type { RouteDeps } from './index.js';

const EMPTY_PARAMETERS = { type: 'object', properties: {}, required: [] as string[] };

/** The function a model sees for the built-in kinds when the tool gives none. */
function defaultFunction(tool: Doc): Doc | undefined {
  switch (tool.type) {
    case 'endCall':
      return { name: 'endCall', description: 'End the call.', parameters: EMPTY_PARAMETERS };
    case 'dtmf':
      return {
        name: 'dtmf',
        description: 'Press keys on the keypad of the phone call.',
        parameters: {
          type: 'object',
          properties: { keys: { type: 'string', description: 'The keys to press, e.g. 123#' } },
          required: ['keys'],
        },
      };
    case 'transferCall': {
      const destinations = Array.isArray(tool.destinations) ? (tool.destinations as Doc[]) : [];
      const targets = destinations
        .map((d) => d.number ?? d.sipUri ?? d.assistantName)
        .filter((t): t is string => typeof t === 'string');
      return {
        name: 'transferCall',
        description: 'Transfer the call to one of the destinations.',
        parameters: {
          type: 'object',
          properties: {
            destination: {
              type: 'string',
              enum: targets,
              description: 'Where to transfer the call',
            },
          },
          required: ['destination'],
        },
      };
    }
    default:
      return undefined;
  }
}

function withDefaultFunction(tool: Doc): Doc {
  if (tool.function !== undefined) {
    return tool;
  }
  const fn = defaultFunction(tool);
  return fn === undefined ? tool : { ...tool, function: fn };
}

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
