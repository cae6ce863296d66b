import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notFound } from '../core/errors.js';
import {
  DATE_FILTERS,
  type DateFilters,
  type Doc,
  type Resource,
} from '../store/resource-store.js';
import type { ResourceName, Store } from '../store/store.js';
import { IdParams } from './schemas/common.js';
import { validateBody } from './validation.js';

export interface RequestContext {
  orgId: string;
  store: Store;
  request: FastifyRequest;
}

export interface ListQueryValues {
  [key: string]: unknown;
  limit?: number;
  page?: number;
  sortOrder?: 'ASC' | 'DESC';
  sortBy?: 'createdAt' | 'updatedAt';
}

export interface CrudOptions {
  /** URL path, e.g. `/tool`. */
  path: string;
  resource: ResourceName;
  /** Human name used in messages and the OpenAPI tags, e.g. `Tool`. */
  label: string;
  createSchema: TSchema;
  /** Body schema of PATCH; validated again by `prepareUpdate` when it needs the stored kind. */
  updateSchema: TSchema;
  listQuery: TObject;
  /** Paged lists answer `{results, metadata}`; the others a bare array. */
  paged: boolean;
  /** Maps list query parameters to column filters. */
  listEquals?: (query: ListQueryValues) => Record<string, string | string[] | undefined>;
  prepareCreate?: (ctx: RequestContext, body: Doc) => Promise<Doc> | Doc;
  prepareUpdate?: (ctx: RequestContext, current: Resource, patch: Doc) => Promise<Doc> | Doc;
  /** Runs after create (e.g. start processing); its result is returned instead when given. */
  afterCreate?: (
    ctx: RequestContext,
    created: Resource,
  ) => Promise<Resource | void> | Resource | void;
  afterDelete?: (ctx: RequestContext, deleted: Resource) => Promise<void> | void;
  /** Turn a stored resource into the response (e.g. lazy status changes). */
  present?: (ctx: RequestContext, resource: Resource) => Promise<Resource> | Resource;
  /** Leave out operations a resource does not have. */
  without?: readonly ('create' | 'list' | 'get' | 'update' | 'delete')[];
  /** Accept a JSON body on DELETE (the SDK sends `{}` for calls). */
  deleteBody?: TSchema;
}

/** Shallow merge for PATCH: given top-level fields replace stored ones; `null` removes a field. */
export function mergePatch(current: Doc, patch: Doc): Doc {
  const next: Doc = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete next[key];
    } else if (value !== undefined) {
      next[key] = value;
    }
  }
  return next;
}

export function dateFilters(query: Record<string, unknown>): DateFilters {
  const dates: DateFilters = {};
  for (const name of DATE_FILTERS) {
    const value = query[name];
    if (typeof value === 'string') {
      dates[name] = value;
    }
  }
  return dates;
}

export function context(request: FastifyRequest, store: Store): RequestContext {
  return { orgId: request.orgId, store, request };
}

/** The create/get/list/update/delete set of one resource kind. */
export function registerCrud(app: FastifyInstance, store: Store, options: CrudOptions): void {
  const resources = store.resources[options.resource];
  const skip = new Set(options.without ?? []);
  const tags = [options.label];
  const present = async (ctx: RequestContext, r: Resource): Promise<Resource> =>
    options.present === undefined ? r : options.present(ctx, r);

  if (!skip.has('create')) {
    app.post(
      options.path,
      { schema: { tags, summary: `Create ${options.label}`, body: options.createSchema } },
      async (request, reply) => {
        const ctx = context(request, store);
        const body = request.body as Doc;
        const doc =
          options.prepareCreate === undefined ? body : await options.prepareCreate(ctx, body);
        let created = await resources.create(ctx.orgId, doc);
        if (options.afterCreate !== undefined) {
          created = (await options.afterCreate(ctx, created)) ?? created;
        }
        return reply.code(201).send(await present(ctx, created));
      },
    );
  }

  if (!skip.has('list')) {
    app.get(
      options.path,
      { schema: { tags, summary: `List ${options.label}`, querystring: options.listQuery } },
      async (request) => {
        const ctx = context(request, store);
        const query = request.query as ListQueryValues;
        const limit = query.limit ?? 100;
        const listQuery = {
          limit,
          dates: dateFilters(query),
          equals: options.listEquals?.(query) ?? {},
          ...(options.paged
            ? {
                page: query.page ?? 1,
                sortOrder: query.sortOrder ?? 'DESC',
                sortBy: query.sortBy ?? 'createdAt',
              }
            : {}),
        };
        const items = await Promise.all(
          (await resources.list(ctx.orgId, listQuery)).map((r) => present(ctx, r)),
        );
        if (!options.paged) {
          return items;
        }
        const totalItems = await resources.count(ctx.orgId, listQuery);
        return {
          results: items,
          metadata: { itemsPerPage: limit, totalItems, currentPage: listQuery.page },
        };
      },
    );
  }

  if (!skip.has('get')) {
    app.get(
      `${options.path}/:id`,
      { schema: { tags, summary: `Get ${options.label}`, params: IdParams } },
      async (request) => {
        const ctx = context(request, store);
        const { id } = request.params as { id: string };
        const found = await resources.get(ctx.orgId, id);
        if (found === null) {
          throw notFound(options.label, id);
        }
        return present(ctx, found);
      },
    );
  }

  if (!skip.has('update')) {
    app.patch(
      `${options.path}/:id`,
      {
        schema: {
          tags,
          summary: `Update ${options.label}`,
          params: IdParams,
          body: options.updateSchema,
        },
      },
      async (request) => {
        const ctx = context(request, store);
        const { id } = request.params as { id: string };
        const patch = request.body as Doc;
        const updated = await resources.update(ctx.orgId, id, (current) =>
          options.prepareUpdate === undefined
            ? mergePatch(current, patch)
            : options.prepareUpdate(ctx, current, patch),
        );
        if (updated === null) {
          throw notFound(options.label, id);
        }
        return present(ctx, updated);
      },
    );
  }

  if (!skip.has('delete')) {
    const schema = {
      tags,
      summary: `Delete ${options.label}`,
      params: IdParams,
      ...(options.deleteBody === undefined ? {} : { body: Type.Optional(options.deleteBody) }),
    };
    app.delete(`${options.path}/:id`, { schema }, async (request) => {
      const ctx = context(request, store);
      const { id } = request.params as { id: string };
      const deleted = await resources.delete(ctx.orgId, id);
      if (deleted === null) {
        throw notFound(options.label, id);
      }
      await options.afterDelete?.(ctx, deleted);
      return present(ctx, deleted);
    });
  }
}

/** Validates a PATCH body against a schema chosen from the stored resource (e.g. by tool type). */
export function validatePatch<T extends Doc>(schema: TSchema, patch: Doc): T {
  return validateBody<T>(schema, patch);
}
