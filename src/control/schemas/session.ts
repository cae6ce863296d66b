import { Type } from '@sinclair/typebox';
import { AssistantOverrides, CreateAssistant } from './assistant.js';
import { Customer } from './call.js';
import { ToolCall } from './chat.js';
import { AnyObject, Id, IdList, Name40, Opt, PageQuery, Strict, StringEnum } from './common.js';
import { CreateSquad } from './squad.js';

export const SESSION_STATUSES = ['active', 'completed'] as const;

/** A history entry: the transcript style `{role, message, time, secondsFromStart}` or chat style. */
export const SessionMessageBody = Strict({
  role: StringEnum(['system', 'user', 'assistant', 'bot', 'tool', 'developer'] as const),
  message: Opt(Type.String()),
  content: Opt(Type.Union([Type.String(), Type.Null(), Type.Array(AnyObject)])),
  time: Opt(Type.Number()),
  secondsFromStart: Opt(Type.Number()),
  name: Opt(Type.String({ maxLength: 64 })),
  tool_calls: Opt(Type.Array(ToolCall)),
  tool_call_id: Opt(Type.String()),
});

const expiration = {
  minimum: 60,
  maximum: 2_592_000,
  description: 'Seconds after creation when the session expires (default one day)',
};

/** One of assistantId, assistant, squadId or squad at most (checked by the routes). */
export const CreateSession = Strict({
  name: Opt(Name40),
  status: Opt(StringEnum(SESSION_STATUSES, { default: 'active' })),
  expirationSeconds: Opt(Type.Number({ ...expiration, default: 86_400 })),
  assistantId: Opt(Id),
  assistant: Opt(CreateAssistant),
  assistantOverrides: Opt(AssistantOverrides),
  squadId: Opt(Id),
  squad: Opt(CreateSquad),
  customer: Opt(Customer),
  phoneNumberId: Opt(Id),
  messages: Opt(Type.Array(SessionMessageBody)),
});

export const UpdateSession = Strict({
  name: Opt(Name40),
  status: Opt(StringEnum(SESSION_STATUSES)),
  expirationSeconds: Opt(Type.Number(expiration)),
  messages: Opt(Type.Array(SessionMessageBody)),
});

export const SessionListQuery = Strict({
  ...PageQuery,
  id: Opt(Id),
  name: Opt(Type.String({ maxLength: 40 })),
  assistantId: Opt(Id),
  squadId: Opt(Id),
  phoneNumberId: Opt(Id),
  idAny: Opt(IdList),
  assistantIdAny: Opt(IdList),
});
