import type { FastifyInstance } from 'fastify';
import { badRequest, notFound } from '../../core/errors.js';
import type { Doc, Resource } from '../../store/resource-store.js';
import type { ResourceName } from '../../store/store.js';
import { context, mergePatch, registerCrud, type RequestContext } from '../crud.js';
import { LimitQuery, Strict } from '../schemas/common.js';
import { SIP_TRUNK, WEBHOOK } from '../schemas/credential.js';
import {
  BYO_PHONE_NUMBER,
  checkNumber,
  CreatePhoneNumber,
  UpdatePhoneNumber,
} from '../schemas/phone-number.js';
import type { RouteDeps } from './index.js';

const LABEL = 'Phone Number';

const NOUNS: Partial<Record<ResourceName, string>> = {
  assistants: 'assistant',
  squads: 'squad',
  workflows: 'workflow',
  phoneNumbers: 'phone number',
  credentials: 'credential',
};

/**
 * The resource `id` of the caller's org, or a 400 naming `field`. Another org's row answers the
 * same as a missing one.
 */
export async function requireRef(
  ctx: RequestContext,
  field: string,
  resource: ResourceName,
  id: string,
): Promise<Resource> {
  const found = await ctx.store.resources[resource].get(ctx.orgId, id);
  if (found === null) {
    throw badRequest(`${field}: no ${NOUNS[resource] ?? resource} with id ${id}`);
  }
  return found;
}

const HANDLER_REFS = [
  ['assistantId', 'assistants'],
  ['squadId', 'squads'],
  ['workflowId', 'workflows'],
] as const;

/** Checks that the assistantId, squadId and workflowId given in `doc` exist in the org. */
export async function requireHandlerRefs(
  ctx: RequestContext,
  doc: Doc,
  prefix = '',
): Promise<void> {
  for (const [field, resource] of HANDLER_REFS) {
    const id = doc[field];
    if (typeof id === 'string') {
      await requireRef(ctx, prefix + field, resource, id);
    }
  }
}

/** `credentialId` (at `field`) must name a credential of the org with the given provider. */
export async function requireCredential(
  ctx: RequestContext,
  field: string,
  id: string,
  provider: string,
): Promise<void> {
  const credential = await requireRef(ctx, field, 'credentials', id);
  if (credential.provider !== provider) {
    throw badRequest(`${field} must name a ${provider} credential`);
  }
}

/**
 * Reference checks for a phone-number document (create body, the given fields of a PATCH, or a
 * call's transient number with `prefix` `phoneNumber.`).
 */
export async function checkPhoneNumberRefs(
  ctx: RequestContext,
  doc: Doc,
  prefix = '',
): Promise<void> {
  if (typeof doc.credentialId === 'string') {
    await requireCredential(ctx, `${prefix}credentialId`, doc.credentialId, SIP_TRUNK);
  }
  await requireHandlerRefs(ctx, doc, prefix);
  const server = doc.server as Doc | null | undefined;
  if (typeof server?.credentialId === 'string') {
    await requireCredential(ctx, `${prefix}server.credentialId`, server.credentialId, WEBHOOK);
  }
}

/** Before schema validation, so a body of another provider gets this message, not a field list. */
function otherProviderError(body: unknown): Error | undefined {
  const provider = (body as { provider?: unknown } | null | undefined)?.provider;
  if (provider === undefined || provider === BYO_PHONE_NUMBER) {
    return undefined;
  }
  return badRequest(
    `provider ${JSON.stringify(provider)} is not supported here: only ${BYO_PHONE_NUMBER} numbers (your own SIP trunk) can be added to this server`,
  );
}

export function registerPhoneNumberRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const store = deps.store;
  // An encapsulated scope, so these hooks run on the phone-number routes only.
  void app.register((scope, _options, done) => {
    scope.addHook('preValidation', (request, _reply, next) => {
      const error =
        request.method === 'POST' || request.method === 'PATCH'
          ? otherProviderError(request.body)
          : undefined;
      if (error === undefined) {
        next();
      } else {
        next(error);
      }
    });
    // PATCH references are checked here: prepareUpdate runs inside the row-locked transaction,
    // where another query would wait for a pool connection (the embedded store has one).
    scope.addHook('preHandler', async (request) => {
      if (request.method !== 'PATCH') {
        return;
      }
      const ctx = context(request, store);
      const { id } = request.params as { id: string };
      if ((await store.resources.phoneNumbers.get(ctx.orgId, id)) === null) {
        throw notFound(LABEL, id);
      }
      await checkPhoneNumberRefs(ctx, request.body as Doc);
    });
    registerCrud(scope, store, {
      path: '/phone-number',
      resource: 'phoneNumbers',
      label: LABEL,
      createSchema: CreatePhoneNumber,
      updateSchema: UpdatePhoneNumber,
      listQuery: Strict(LimitQuery),
      paged: false,
      prepareCreate: async (ctx, body) => {
        checkNumber('number', body.number, body.numberE164CheckEnabled);
        await checkPhoneNumberRefs(ctx, body);
        return { ...body, status: 'active' };
      },
      prepareUpdate: (_ctx, current, patch) => {
        const next = mergePatch(current, patch);
        // The check depends on both fields: judge the merged values.
        checkNumber('number', next.number, next.numberE164CheckEnabled);
        return next;
      },
    });
    done();
  });
}
