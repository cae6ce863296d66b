import { Type } from '@sinclair/typebox';
import { AssistantOverrides, CreateAssistant } from './assistant.js';
import { AnyObject, Id, IdList, Name40, Opt, PageQuery, Strict, StringEnum } from './common.js';
import { CreateSquad } from './squad.js';

export const ToolCall = Strict({
  id: Type.String({ minLength: 1 }),
  type: Type.Literal('function'),
  function: Strict({ name: Type.String({ minLength: 1 }), arguments: Type.String() }),
});

/** A chat-style message; `message` is accepted for `content` (the transcript style). */
export const ChatMessageBody = Strict({
  role: StringEnum(['system', 'user', 'assistant', 'tool', 'developer'] as const),
  content: Opt(Type.Union([Type.String(), Type.Null(), Type.Array(AnyObject)])),
  message: Opt(Type.String()),
  name: Opt(Type.String({ maxLength: 64 })),
  tool_calls: Opt(Type.Array(ToolCall)),
  tool_call_id: Opt(Type.String()),
});

const ChatInput = Type.Union([
  Type.String({ minLength: 1 }),
  Type.Array(ChatMessageBody, { minItems: 1 }),
]);

const chatProperties = {
  input: ChatInput,
  assistantId: Opt(Id),
  assistant: Opt(CreateAssistant),
  squadId: Opt(Id),
  squad: Opt(CreateSquad),
  assistantOverrides: Opt(AssistantOverrides),
  name: Opt(Name40),
  sessionId: Opt(Id),
  previousChatId: Opt(Id),
};

/** POST /chat. `sessionId` and `previousChatId` exclude each other (checked by the service). */
export const CreateChat = Strict({
  ...chatProperties,
  stream: Opt(Type.Boolean({ default: false })),
});

/** POST /chat/responses: streams unless told otherwise; OpenAI client spellings are accepted. */
export const CreateChatResponse = Strict({
  ...chatProperties,
  stream: Opt(Type.Boolean({ default: true })),
  model: Opt(Type.String({ description: 'Ignored: the assistant decides the model' })),
  previous_response_id: Opt(Id),
});

export const ChatListQuery = Strict({
  ...PageQuery,
  id: Opt(Id),
  assistantId: Opt(Id),
  squadId: Opt(Id),
  sessionId: Opt(Id),
  previousChatId: Opt(Id),
  idAny: Opt(IdList),
  assistantIdAny: Opt(IdList),
});
