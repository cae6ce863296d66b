import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { LOG_TYPES, type LogQuery } from '../../store/log-store.js';
import { dateFilters } from '../crud.js';
import { Opt, PageQuery, Strict, StringEnum } from '../schemas/common.js';
import type { RouteDeps } from './index.js';

const IdFilters = {
  assistantId: Opt(Type.String()),
  phoneNumberId: Opt(Type.String()),
  customerId: Opt(Type.String()),
  squadId: Opt(Type.String()),
  callId: Opt(Type.String()),
};
const LogType = StringEnum(LOG_TYPES);

const ListLogsQuery = Strict({
  ...PageQuery,
  type: Opt(LogType),
  webhookType: Opt(Type.String()),
  ...IdFilters,
});
const DeleteLogsQuery = Strict({ type: Opt(LogType), ...IdFilters });

type ListLogsValues = Omit<LogQuery, 'dates' | 'page' | 'limit' | 'sortOrder'> &
  Partial<Pick<LogQuery, 'page' | 'limit' | 'sortOrder'>>;

function filters(query: ListLogsValues): Omit<LogQuery, 'page' | 'limit' | 'sortOrder' | 'dates'> {
  const out: Record<string, string> = {};
  for (const key of [
    'type',
    'webhookType',
    'assistantId',
    'phoneNumberId',
    'customerId',
    'squadId',
    'callId',
  ] as const) {
    const value = query[key];
    if (value !== undefined) {
      out[key] = value;
    }
  }
  return out;
}

export function registerLogRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const tags = ['Logs'];
  app.get(
    '/logs',
    { schema: { tags, summary: 'List logs', querystring: ListLogsQuery } },
    async (request) => {
      const query = request.query as ListLogsValues;
      const limit = query.limit ?? 100;
      const page = query.page ?? 1;
      const { results, total } = await deps.store.logs.list(request.orgId, {
        ...filters(query),
        dates: dateFilters(query),
        page,
        limit,
        sortOrder: query.sortOrder ?? 'DESC',
      });
      return { results, metadata: { itemsPerPage: limit, totalItems: total, currentPage: page } };
    },
  );

  app.delete(
    '/logs',
    {
      schema: {
        tags,
        summary: 'Delete logs (deprecated)',
        deprecated: true,
        querystring: DeleteLogsQuery,
      },
    },
    async (request) => {
      // Entries still queued would otherwise be written after the delete.
      await deps.store.logs.flush();
      const deleted = await deps.store.logs.delete(
        request.orgId,
        filters(request.query as ListLogsValues),
      );
      return { deletedCount: deleted };
    },
  );
}
