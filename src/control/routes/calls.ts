import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { RESPONSE_ONLY_FIELDS } from '../../calls/websocket-call-starter.js';
import { badRequest, notFound, ParlaError } from '../../core/errors.js';
import type { Doc, Resource } from '../../store/resource-store.js';
import { registerCrud, type RequestContext } from '../crud.js';
import {
  CALL_HANDLERS,
  CallListQuery,
  CreateCall,
  DEFAULT_AUDIO_FORMAT,
  DeleteCallBody,
  UpdateCall,
} from '../schemas/call.js';
import { IdParams, Opt, Strict } from '../schemas/common.js';
import { checkNumber } from '../schemas/phone-number.js';
import type { RouteDeps } from './index.js';
import { checkPhoneNumberRefs, requireHandlerRefs, requireRef } from './phone-numbers.js';

/** sip(s):[user[:password]@]host[:port][;params][?headers], no white space or angle brackets. */
const SIP_URI =
  /^sips?:([^@\s<>"]+@)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*)(:[0-9]{1,5})?([;?][^\s<>"]*)?$/i;

const HANDLER_LIST = 'assistant, assistantId, squad, squadId, workflow or workflowId';

/**
 * Checks a customer's number (E.164 unless its check is off) and SIP URI (one we can put in a
 * Request-URI); `path` names it in messages.
 */
export function checkCustomer(customer: Doc, path: string): void {
  checkNumber(`${path}.number`, customer.number, customer.numberE164CheckEnabled);
  if (typeof customer.sipUri === 'string') {
    if (!SIP_URI.test(customer.sipUri)) {
      throw badRequest(`${path}.sipUri must be a SIP URI such as sip:alice@sip.example.com`);
    }
  }
}

function checkHandler(body: Doc): void {
  const given = CALL_HANDLERS.filter((field) => body[field] !== undefined);
  if (given.length === 0) {
    throw new ParlaError('ERR_BAD_REQUEST', `Need ${HANDLER_LIST}.`);
  }
  if (given.length > 1) {
    throw new ParlaError(
      'ERR_BAD_REQUEST',
      `Give only one of ${HANDLER_LIST}; got ${given.join(' and ')}.`,
    );
  }
}

/** The stored call: its type and first status, with the transport's defaults filled. */
function queuedCall(body: Doc): Doc {
  const transport = body.transport as Doc | undefined;
  const phone = body.phoneNumberId !== undefined || body.phoneNumber !== undefined;
  if (transport !== undefined) {
    if (phone) {
      throw badRequest('phoneNumberId and phoneNumber cannot be used with a websocket transport');
    }
    return {
      ...body,
      type: `${String(transport.provider)}Call`,
      status: 'queued',
      transport: { ...transport, audioFormat: transport.audioFormat ?? DEFAULT_AUDIO_FORMAT },
    };
  }
  const customer = body.customer as Doc | undefined;
  if (phone && customer !== undefined) {
    if (customer.number === undefined && customer.sipUri === undefined) {
      throw badRequest('customer.number or customer.sipUri is needed for an outbound phone call');
    }
    return { ...body, type: 'outboundPhoneCall', phoneCallTransport: 'sip', status: 'queued' };
  }
  return { ...body, type: 'webCall', status: 'queued' };
}

async function prepareCall(ctx: RequestContext, body: Doc): Promise<Doc> {
  checkHandler(body);
  const call = queuedCall(body);
  if (body.customer !== undefined) {
    checkCustomer(body.customer as Doc, 'customer');
  }
  const phoneNumber = body.phoneNumber as Doc | undefined;
  if (phoneNumber !== undefined) {
    checkNumber('phoneNumber.number', phoneNumber.number, phoneNumber.numberE164CheckEnabled);
    await checkPhoneNumberRefs(ctx, phoneNumber, 'phoneNumber.');
  }
  await requireHandlerRefs(ctx, body);
  if (typeof body.phoneNumberId === 'string') {
    await requireRef(ctx, 'phoneNumberId', 'phoneNumbers', body.phoneNumberId);
  }
  return call;
}

/**
 * Hands the queued call to the call engine and merges what it answers (or `ended` with a reason).
 * Fields the starter marks response-only (URLs carrying the call's tokens) are shown in this
 * response and never stored. A starter that throws ends the call rather than leave it queued.
 */
async function startCall(deps: RouteDeps, ctx: RequestContext, call: Resource): Promise<Resource> {
  let fields: Doc & { [RESPONSE_ONLY_FIELDS]?: Doc };
  try {
    fields = await deps.callStarter.start(ctx.orgId, call);
  } catch (error) {
    ctx.request.log.error({ err: error, callId: call.id }, 'call start failed');
    const now = new Date().toISOString();
    fields = {
      status: 'ended',
      endedReason: 'call.start.error-get-transport',
      endedMessage: 'The call could not be started',
      endedAt: now,
    };
  }
  const { [RESPONSE_ONLY_FIELDS]: responseOnly, ...stored } = fields;
  const updated =
    Object.keys(stored).length === 0
      ? call
      : await ctx.store.resources.calls.update(ctx.orgId, call.id, (current) => ({
          ...current,
          ...stored,
        }));
  return { ...(updated ?? call), ...responseOnly };
}

const ControlQuery = Strict({ token: Opt(Type.String({ maxLength: 200 })) });

/**
 * `monitor.controlUrl`: live control of a call by POSTing the control messages. The URL's token
 * admits the request; with `monitorPlan.controlAuthenticationEnabled` the org's API key is
 * needed as well (checked by the engine, as the route is public).
 */
function registerControlRoute(app: FastifyInstance, deps: RouteDeps): void {
  app.post(
    '/call/:id/control',
    {
      config: { public: true, noLog: true },
      schema: { hide: true, params: IdParams, querystring: ControlQuery },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const live = deps.liveCalls;
      if (live === undefined) {
        throw notFound('Live call', id);
      }
      const { token } = request.query as { token?: string };
      const header = request.headers.authorization;
      const answer = await live.control(id, token ?? '', header ?? '', request.body);
      return reply.code(answer.statusCode).send(answer.body);
    },
  );
}

export function registerCallRoutes(app: FastifyInstance, deps: RouteDeps): void {
  registerCrud(app, deps.store, {
    path: '/call',
    resource: 'calls',
    label: 'Call',
    createSchema: CreateCall,
    updateSchema: UpdateCall,
    listQuery: CallListQuery,
    paged: false,
    listEquals: (query) => ({
      id: query.id as string | undefined,
      assistantId: query.assistantId as string | undefined,
      phoneNumberId: query.phoneNumberId as string | undefined,
    }),
    prepareCreate: prepareCall,
    afterCreate: (ctx, created) => startCall(deps, ctx, created),
    // A deleted call that is still live ends now.
    afterDelete: (ctx, deleted) => {
      deps.liveCalls?.end(ctx.orgId, deleted.id, 'manually-canceled');
    },
    // `ids` (bulk delete) is accepted because the SDK may send it, but only the path id is deleted.
    deleteBody: DeleteCallBody,
  });
  registerControlRoute(app, deps);
}
