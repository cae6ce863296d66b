import type { FastifyInstance } from 'fastify';
import { countSources } from '../../chat/assistant-config.js';
import { presentSession } from '../../chat/session-state.js';
import { badRequest } from '../../core/errors.js';
import type { Doc } from '../../store/resource-store.js';
import { registerCrud, type RequestContext } from '../crud.js';
import { splitIds } from '../schemas/common.js';
import { CreateSession, SessionListQuery, UpdateSession } from '../schemas/session.js';
import type { RouteDeps } from './index.js';

/** Ids a session may name, and the store each must be found in (same org). */
const REFERENCES = [
  ['assistantId', 'assistants', 'assistant'],
  ['squadId', 'squads', 'squad'],
  ['phoneNumberId', 'phoneNumbers', 'phone number'],
] as const;

async function checkReferences(ctx: RequestContext, body: Doc): Promise<void> {
  for (const [field, resource, label] of REFERENCES) {
    const id = body[field];
    if (
      typeof id === 'string' &&
      (await ctx.store.resources[resource].get(ctx.orgId, id)) === null
    ) {
      throw badRequest(`${label} with id ${id} not found`);
    }
  }
}

/** Sessions group chats: a chat naming `sessionId` reads and extends `messages`. */
export function registerSessionRoutes(app: FastifyInstance, deps: RouteDeps): void {
  registerCrud(app, deps.store, {
    path: '/session',
    resource: 'sessions',
    label: 'Session',
    createSchema: CreateSession,
    updateSchema: UpdateSession,
    listQuery: SessionListQuery,
    paged: true,
    listEquals: (query) => ({
      id: (query.id as string | undefined) ?? splitIds(query.idAny),
      name: query.name as string | undefined,
      assistantId: (query.assistantId as string | undefined) ?? splitIds(query.assistantIdAny),
      squadId: query.squadId as string | undefined,
      phoneNumberId: query.phoneNumberId as string | undefined,
    }),
    prepareCreate: async (ctx, body) => {
      if (countSources(body) > 1) {
        throw badRequest('only one of assistantId, assistant, squadId or squad can be given');
      }
      await checkReferences(ctx, body);
      return { ...body, messages: body.messages ?? [] };
    },
    present: (_ctx, session) => presentSession(session, new Date()),
  });
}
