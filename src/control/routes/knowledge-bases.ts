import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../core/errors.js';
import type { Doc } from '../../store/resource-store.js';
import { mergePatch, registerCrud, validatePatch } from '../crud.js';
import { ForUpdate } from '../schemas/common.js';
import {
  CreateKnowledgeBase,
  KNOWLEDGE_BASE_KINDS,
  KnowledgeBaseListQuery,
  UpdateKnowledgeBase,
  type KnowledgeBaseProvider,
} from '../schemas/knowledge-base.js';
import type { RouteDeps } from './index.js';

/** Update schema per kind, built once: every field optional, `provider` allowed but fixed. */
const UPDATE_SCHEMAS = Object.fromEntries(
  Object.entries(KNOWLEDGE_BASE_KINDS).map(([provider, schema]) => [provider, ForUpdate(schema)]),
) as Record<KnowledgeBaseProvider, ReturnType<typeof ForUpdate>>;

/** `/knowledge-base`: the v1 knowledge bases (custom server or hosted vector store). */
export function registerKnowledgeBaseRoutes(app: FastifyInstance, deps: RouteDeps): void {
  registerCrud(app, deps.store, {
    path: '/knowledge-base',
    resource: 'knowledgeBases',
    label: 'Knowledge Base',
    createSchema: CreateKnowledgeBase,
    updateSchema: UpdateKnowledgeBase,
    listQuery: KnowledgeBaseListQuery,
    paged: false,
    prepareUpdate: (_ctx, current, patch) => {
      const provider = current.provider as KnowledgeBaseProvider;
      // The SDK's update bodies repeat the kind; a different one would change the resource's shape.
      if (patch.provider !== undefined && patch.provider !== provider) {
        throw badRequest(`provider cannot be changed (this knowledge base is ${provider})`);
      }
      const schema = UPDATE_SCHEMAS[provider];
      if (schema === undefined) {
        throw badRequest(`knowledge base has an unknown provider ${String(provider)}`);
      }
      return mergePatch(current, validatePatch<Doc>(schema, patch));
    },
  });
}
