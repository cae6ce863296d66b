import type { ModelMessage, ModelToolCall } from '../providers/llm/model-provider.js';
import type { Doc } from '../store/resource-store.js';

/** A message as chats store and return it (OpenAI chat style). */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool' | 'developer';
  content: string | null;
  name?: string;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** A session's history entry: the spec's `{role, message, time, secondsFromStart}` plus `content`. */
export interface SessionMessage extends ChatMessage {
  message: string;
  time: number;
  secondsFromStart: number;
}

export type ChatInput = string | Doc[];

const ROLES = new Set(['system', 'user', 'assistant', 'tool', 'developer']);

/** Text of a `content` that may be a string, null or a list of `{type:'text', text}` parts. */
export function contentText(content: unknown): string | null {
  if (typeof content === 'string' || content === null) {
    return content;
  }
  if (Array.isArray(content)) {
    return content
      .map((part) => (part as { text?: unknown } | null)?.text)
      .filter((text): text is string => typeof text === 'string')
      .join('');
  }
  return null;
}

/**
 * A stored or sent message in chat style. Accepts `message` for `content` (the transcript style
 * sessions use) and `bot` for `assistant`; returns null for kinds a model cannot take.
 */
export function toChatMessage(doc: Doc): ChatMessage | null {
  const role = doc.role === 'bot' ? 'assistant' : doc.role;
  if (typeof role !== 'string' || !ROLES.has(role)) {
    return null;
  }
  const content = doc.content !== undefined ? contentText(doc.content) : contentText(doc.message);
  const out: ChatMessage = { role: role as ChatMessage['role'], content: content ?? null };
  if (typeof doc.name === 'string') {
    out.name = doc.name;
  }
  if (Array.isArray(doc.tool_calls)) {
    out.tool_calls = doc.tool_calls as NonNullable<ChatMessage['tool_calls']>;
  }
  if (typeof doc.tool_call_id === 'string') {
    out.tool_call_id = doc.tool_call_id;
  }
  return out;
}

export function toChatMessages(docs: readonly unknown[]): ChatMessage[] {
  return docs
    .map((doc) => (doc !== null && typeof doc === 'object' ? toChatMessage(doc as Doc) : null))
    .filter((m): m is ChatMessage => m !== null);
}

/** The chat's `input` as messages: a string is one user message. */
export function inputMessages(input: ChatInput): ChatMessage[] {
  return typeof input === 'string' ? [{ role: 'user', content: input }] : toChatMessages(input);
}

export function toModelMessage(message: ChatMessage): ModelMessage {
  const out: ModelMessage = {
    role: message.role === 'developer' ? 'system' : message.role,
    content: message.content,
  };
  if (message.tool_calls !== undefined && message.tool_calls.length > 0) {
    out.toolCalls = message.tool_calls.map((call) => ({
      id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
    }));
  }
  if (message.tool_call_id !== undefined) {
    out.toolCallId = message.tool_call_id;
  }
  return out;
}

/** The assistant's reply as an output message. */
export function outputMessage(text: string, toolCalls: readonly ModelToolCall[]): ChatMessage {
  if (toolCalls.length === 0) {
    return { role: 'assistant', content: text };
  }
  return {
    role: 'assistant',
    content: text === '' ? null : text,
    tool_calls: toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    })),
  };
}

/** Session history entries for messages exchanged now, in a session created at `startedAt`. */
export function sessionEntries(
  messages: readonly ChatMessage[],
  now: Date,
  startedAt: string,
): SessionMessage[] {
  const secondsFromStart = Math.max(0, (now.getTime() - Date.parse(startedAt)) / 1000);
  return messages.map((message) => ({
    ...message,
    message: message.content ?? '',
    time: now.getTime(),
    secondsFromStart,
  }));
}

/** The conversation a stored chat had: its context without system messages, then its output. */
export function chatHistory(chat: Doc): ChatMessage[] {
  const context = Array.isArray(chat.messages) ? toChatMessages(chat.messages) : [];
  const output = Array.isArray(chat.output) ? toChatMessages(chat.output) : [];
  return [...context.filter((m) => m.role !== 'system' && m.role !== 'developer'), ...output];
}
