import type { FastifyInstance } from 'fastify';
import { badRequest, ParlaError } from '../../core/errors.js';
import type { Doc } from '../../store/resource-store.js';
import { mergePatch, registerCrud, type RequestContext } from '../crud.js';
import { CampaignListQuery, CreateCampaign, UpdateCampaign } from '../schemas/campaign.js';
import { checkCustomer } from './calls.js';
import type { RouteDeps } from './index.js';
import { requireHandlerRefs, requireRef } from './phone-numbers.js';

const HANDLERS = ['assistantId', 'workflowId', 'squadId'] as const;

function checkSchedule(plan: Doc | undefined): void {
  if (plan?.latestAt === undefined) {
    return;
  }
  if (Date.parse(plan.latestAt as string) < Date.parse(plan.earliestAt as string)) {
    throw badRequest('schedulePlan.latestAt must not be before schedulePlan.earliestAt');
  }
}

async function prepareCampaign(ctx: RequestContext, body: Doc): Promise<Doc> {
  const given = HANDLERS.filter((field) => body[field] !== undefined);
  if (given.length !== 1) {
    throw new ParlaError(
      'ERR_BAD_REQUEST',
      given.length === 0
        ? 'Need assistantId, workflowId or squadId.'
        : `Give only one of assistantId, workflowId or squadId; got ${given.join(' and ')}.`,
    );
  }
  checkSchedule(body.schedulePlan as Doc | undefined);
  const customers = body.customers as Doc[];
  customers.forEach((customer, index) => {
    if (customer.number === undefined && customer.sipUri === undefined) {
      throw badRequest(`customers.${index} needs a number or a sipUri`);
    }
    checkCustomer(customer, `customers.${index}`);
  });
  await requireRef(ctx, 'phoneNumberId', 'phoneNumbers', String(body.phoneNumberId));
  await requireHandlerRefs(ctx, body);
  // This server cannot dial out yet, so a campaign stays scheduled until it is cancelled.
  return {
    ...body,
    status: 'scheduled',
    customersTotal: customers.length,
    calls: {},
    callsCounterScheduled: 0,
    callsCounterQueued: 0,
    callsCounterInProgress: 0,
    callsCounterEndedVoicemail: 0,
    callsCounterEnded: 0,
  };
}

/** PATCH: a new name, or `status: ended` to cancel (recording who ended it, once). */
function updateCampaign(current: Doc, patch: Doc): Doc {
  const { status, ...rest } = patch;
  const next = mergePatch(current, rest);
  if (status !== undefined && current.status !== 'ended') {
    next.status = 'ended';
    next.endedReason =
      current.status === 'in-progress'
        ? 'campaign.in-progress.ended-by-user'
        : 'campaign.scheduled.ended-by-user';
  }
  return next;
}

export function registerCampaignRoutes(app: FastifyInstance, deps: RouteDeps): void {
  registerCrud(app, deps.store, {
    path: '/campaign',
    resource: 'campaigns',
    label: 'Campaign',
    createSchema: CreateCampaign,
    updateSchema: UpdateCampaign,
    listQuery: CampaignListQuery,
    paged: true,
    listEquals: (query) => ({ status: query.status as string | undefined }),
    prepareCreate: prepareCampaign,
    prepareUpdate: (_ctx, current, patch) => updateCampaign(current, patch),
  });
}
