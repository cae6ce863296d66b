import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../core/errors.js';
import type { Doc } from '../../store/resource-store.js';
import { LimitQuery, Strict } from '../schemas/common.js';
import { CreateSquad, UpdateSquad } from '../schemas/squad.js';
import { registerCheckedCrud } from './assistants.js';
import type { RouteDeps } from './index.js';

/** Each member names its assistant one way: by id or inline. */
export function checkMembers(body: Doc): void {
  if (!Array.isArray(body.members)) {
    return;
  }
  const problems: string[] = [];
  (body.members as Doc[]).forEach((member, index) => {
    const byId = member.assistantId !== undefined;
    const inline = member.assistant !== undefined;
    if (byId && inline) {
      problems.push(`members.${index} must have only one of assistantId and assistant`);
    } else if (!byId && !inline) {
      problems.push(`members.${index} must have assistantId or assistant`);
    }
  });
  if (problems.length > 0) {
    throw badRequest(problems);
  }
}

export function registerSquadRoutes(app: FastifyInstance, deps: RouteDeps): void {
  registerCheckedCrud(
    app,
    deps.store,
    {
      path: '/squad',
      resource: 'squads',
      label: 'Squad',
      createSchema: CreateSquad,
      updateSchema: UpdateSquad,
      listQuery: Strict(LimitQuery),
      paged: false,
    },
    checkMembers,
  );
}
