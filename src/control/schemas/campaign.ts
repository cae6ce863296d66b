import { Type } from '@sinclair/typebox';
import { Customer } from './call.js';
import { Id, Name40, Opt, PageQuery, Strict, StringEnum } from './common.js';

export const CAMPAIGN_STATUSES = ['scheduled', 'in-progress', 'ended'] as const;
export const MAX_CAMPAIGN_CUSTOMERS = 10_000;

export const CreateCampaign = Strict({
  name: Name40,
  phoneNumberId: Id,
  customers: Type.Array(Customer, { minItems: 1, maxItems: MAX_CAMPAIGN_CUSTOMERS }),
  assistantId: Opt(Id),
  workflowId: Opt(Id),
  squadId: Opt(Id),
  schedulePlan: Opt(
    Strict({
      earliestAt: Type.String({ format: 'date-time' }),
      latestAt: Opt(Type.String({ format: 'date-time', description: 'Not before earliestAt' })),
    }),
  ),
});

/** Name, or cancel with status `ended` (`cancelled` is the SDK's newer spelling of the same). */
export const UpdateCampaign = Strict({
  name: Opt(Name40),
  status: Opt(StringEnum(['ended', 'cancelled'] as const)),
});

export const CampaignListQuery = Strict({
  ...PageQuery,
  status: Opt(StringEnum(CAMPAIGN_STATUSES)),
});
