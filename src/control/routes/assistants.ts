import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../core/errors.js';
import type { Doc } from '../../store/resource-store.js';
import type { ResourceName, Store } from '../../store/store.js';
import { registerCrud, type CrudOptions } from '../crud.js';
import { CreateAssistant, UpdateAssistant } from '../schemas/assistant.js';
import { LimitQuery, Strict } from '../schemas/common.js';
import type { RouteDeps } from './index.js';

interface ReferenceKind {
  resource: ResourceName;
  label: string;
}

const TOOL: ReferenceKind = { resource: 'tools', label: 'Tool' };
const CREDENTIAL: ReferenceKind = { resource: 'credentials', label: 'Credential' };

/** Field names that hold ids of stored resources, wherever they appear in a body. */
const REFERENCE_FIELDS: Readonly<Record<string, ReferenceKind>> = {
  assistantId: { resource: 'assistants', label: 'Assistant' },
  toolId: TOOL,
  toolIds: TOOL,
  credentialId: CREDENTIAL,
  credentialIds: CREDENTIAL,
  knowledgeBaseId: { resource: 'knowledgeBases', label: 'Knowledge base' },
};

/** Subtrees of free-form user data, where those names mean nothing. */
const OPAQUE_FIELDS = new Set([
  'metadata',
  'variableValues',
  'schema',
  'parameters',
  'properties',
  'body',
  'headers',
  'messages',
]);

export interface Reference extends ReferenceKind {
  field: string;
  id: string;
}

/** Every id a body names (e.g. `model.toolIds.0`, `members.1.assistantId`). */
export function findReferences(value: unknown, path: string[] = [], out: Reference[] = []) {
  if (Array.isArray(value)) {
    value.forEach((item, index) => findReferences(item, [...path, String(index)], out));
    return out;
  }
  if (value === null || typeof value !== 'object') {
    return out;
  }
  for (const [key, child] of Object.entries(value as Doc)) {
    const kind = REFERENCE_FIELDS[key];
    const childPath = [...path, key];
    if (kind !== undefined && typeof child === 'string') {
      out.push({ ...kind, field: childPath.join('.'), id: child });
    } else if (kind !== undefined && Array.isArray(child)) {
      child.forEach((id, index) => {
        if (typeof id === 'string') {
          out.push({ ...kind, field: [...childPath, index].join('.'), id });
        }
      });
    } else if (!OPAQUE_FIELDS.has(key)) {
      findReferences(child, childPath, out);
    }
  }
  return out;
}

/** Throws a 400 naming each field whose id is not a resource of the org. */
export async function checkReferences(store: Store, orgId: string, body: Doc): Promise<void> {
  const references = findReferences(body);
  const lookups = new Map<string, Promise<boolean>>();
  const exists = (ref: Reference): Promise<boolean> => {
    const key = `${ref.resource}/${ref.id}`;
    let lookup = lookups.get(key);
    if (lookup === undefined) {
      lookup = store.resources[ref.resource].get(orgId, ref.id).then((row) => row !== null);
      lookups.set(key, lookup);
    }
    return lookup;
  };
  const found = await Promise.all(references.map(exists));
  const problems = references
    .filter((_, index) => found[index] !== true)
    .map((ref) => `${ref.field}: ${ref.label} with id ${ref.id} not found`);
  if (problems.length > 0) {
    throw badRequest(problems);
  }
}

function isDoc(value: unknown): value is Doc {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * registerCrud, with the create and update bodies checked first: `check` (body-only rules) and
 * then the ids they name. This runs before the handler because PATCH changes the row inside a
 * transaction, where a second query could wait on the only connection of the embedded database.
 */
export function registerCheckedCrud(
  app: FastifyInstance,
  store: Store,
  options: CrudOptions,
  check?: (body: Doc) => void,
): void {
  void app.register((scope, _options, done) => {
    scope.addHook('preHandler', async (request) => {
      if ((request.method === 'POST' || request.method === 'PATCH') && isDoc(request.body)) {
        check?.(request.body);
        await checkReferences(store, request.orgId, request.body);
      }
    });
    registerCrud(scope, store, options);
    done();
  });
}

export function registerAssistantRoutes(app: FastifyInstance, deps: RouteDeps): void {
  registerCheckedCrud(app, deps.store, {
    path: '/assistant',
    resource: 'assistants',
    label: 'Assistant',
    createSchema: CreateAssistant,
    updateSchema: UpdateAssistant,
    listQuery: Strict(LimitQuery),
    paged: false,
  });
}
