import { Type } from '@sinclair/typebox';
import { AssistantOverrides, CreateAssistant } from './assistant.js';
import { AnyObject, Id, LimitQuery, Name40, Opt, Strict, StringEnum } from './common.js';
import { CreatePhoneNumber, Nullable, PhoneNumberValue } from './phone-number.js';

/** Whom a call or campaign dials (or who called). */
export const Customer = Strict({
  number: Opt(PhoneNumberValue),
  numberE164CheckEnabled: Opt(Type.Boolean({ default: true })),
  sipUri: Opt(Type.String({ pattern: '^sips?:', maxLength: 512 })),
  extension: Opt(Nullable(Type.String({ maxLength: 10, pattern: '^[0-9wW#*]*$' }))),
  name: Opt(Type.String({ maxLength: 40 })),
  email: Opt(Type.String({ maxLength: 320 })),
  externalId: Opt(Type.String({ maxLength: 40 })),
  assistantOverrides: Opt(AssistantOverrides),
});

export const WEBSOCKET_PROVIDERS = ['parla.websocket', 'vapi.websocket'] as const;
export const DEFAULT_AUDIO_FORMAT = { format: 'pcm_s16le', container: 'raw', sampleRate: 16000 };

const AudioFormat = Strict({
  format: StringEnum(['pcm_s16le', 'mulaw'] as const),
  container: Opt(Type.Literal('raw', { default: 'raw' })),
  sampleRate: Type.Integer({
    minimum: 8000,
    maximum: 48000,
    description: 'Hz; usually 16000 for pcm_s16le and 8000 for mulaw',
  }),
});

export const WebsocketTransport = Strict({
  provider: StringEnum(WEBSOCKET_PROVIDERS),
  conversationType: Opt(Type.Literal('voice', { default: 'voice' })),
  audioFormat: Opt(AudioFormat),
});

// Inline squads and workflows are checked loosely here; the call engine validates them on start.
const InlineSquad = Type.Object(
  { name: Opt(Name40), members: Type.Array(AnyObject, { minItems: 1 }) },
  { additionalProperties: true },
);
const InlineWorkflow = Type.Object(
  { name: Opt(Name40), nodes: Type.Array(AnyObject) },
  { additionalProperties: true },
);

/** The fields naming what conducts the call; exactly one must be given. */
export const CALL_HANDLERS = [
  'assistant',
  'assistantId',
  'squad',
  'squadId',
  'workflow',
  'workflowId',
] as const;

export const CreateCall = Strict({
  name: Opt(Name40),
  assistantId: Opt(Id),
  assistant: Opt(CreateAssistant),
  assistantOverrides: Opt(AssistantOverrides),
  squadId: Opt(Id),
  squad: Opt(InlineSquad),
  workflowId: Opt(Id),
  workflow: Opt(InlineWorkflow),
  phoneNumberId: Opt(Id),
  phoneNumber: Opt(CreatePhoneNumber),
  customerId: Opt(Id),
  customer: Opt(Customer),
  transport: Opt(WebsocketTransport),
});

/** Only a call's name can change. */
export const UpdateCall = Strict({ name: Opt(Name40) });

/**
 * The SDK sends `{}` (or `{ids}`) with DELETE; other clients send nothing. Fastify validates an
 * absent body too, so this schema names no `type`: its keywords apply to objects only.
 */
export const DeleteCallBody = Type.Unsafe<{ ids?: string[] }>({
  properties: { ids: Type.Array(Id, { maxItems: 1000 }) },
  additionalProperties: false,
});

export const CallListQuery = Strict({
  ...LimitQuery,
  id: Opt(Id),
  assistantId: Opt(Id),
  phoneNumberId: Opt(Id),
});
