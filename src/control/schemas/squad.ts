import { Type } from '@sinclair/typebox';
import { AssistantOverrides, CreateAssistant } from './assistant.js';
import { ForUpdate, Name40, Opt, Strict } from './common.js';

export const SquadAssistantDestination = Strict({
  type: Type.Literal('assistant'),
  assistantName: Name40,
  message: Opt(Type.String({ maxLength: 1000 })),
  description: Opt(Type.String({ maxLength: 1000 })),
});

/** One of `assistantId` or `assistant` is required; the squad routes check that. */
export const SquadMember = Strict({
  assistantId: Opt(Type.String({ minLength: 1 })),
  assistant: Opt(CreateAssistant),
  assistantOverrides: Opt(AssistantOverrides),
  assistantDestinations: Opt(Type.Array(SquadAssistantDestination)),
});

export const CreateSquad = Strict({
  name: Opt(Name40),
  members: Type.Array(SquadMember, { minItems: 1 }),
  membersOverrides: Opt(AssistantOverrides),
});

export const UpdateSquad = ForUpdate(CreateSquad);
