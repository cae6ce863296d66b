import type { FastifyInstance } from 'fastify';
import { badRequest, ParlaError } from '../../core/errors.js';
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
import { checkNumber } from '../schemas/phone-number.js';
import type { RouteDeps } from './index.js';
import { checkPhoneNumberRefs, requireHandlerRefs, requireRef } from './phone-numbers.js';

const HANDLER_LIST = 'assistant, assistantId, squad, squadId, workflow or workflowId';

/** Checks a customer's number (E.164 unless its check is off); `path` names it in messages. */
export function checkCustomer(customer: Doc, path: string): void {
  checkNumber(`${path}.number`, customer.number, customer.numberE164CheckEnabled);
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
 * Hands the queued call to the call engine and merges what it answers (a websocket URL, or
 * `ended` with a reason). A starter that throws ends the call rather than leave it queued.
 */
async function startCall(deps: RouteDeps, ctx: RequestContext, call: Resource): Promise<Resource> {
  let fields: Doc;
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
  const updated = await ctx.store.resources.calls.update(ctx.orgId, call.id, (current) => ({
    ...current,
    ...fields,
  }));
  return updated ?? call;
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
    // `ids` (bulk delete) is accepted because the SDK may send it, but only the path id is deleted.
    deleteBody: DeleteCallBody,
  });
}
