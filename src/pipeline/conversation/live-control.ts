import { ParlaError } from '../../core/errors.js';
import type { ModelMessage, ModelToolCall } from '../../providers/llm/model-provider.js';
import type { ToolCallResult } from './options.js';

/** Options of a live `say` (api-behaviour 1.4). */
export interface SayOptions {
  /** End the call (`assistant-ended-call-after-message-spoken`) once it has played. Default false. */
  readonly endCallAfterSpoken?: boolean | undefined;
  /** The customer may interrupt it. Default false. */
  readonly interruptionsEnabled?: boolean | undefined;
  /** Cut the assistant's current speech and say this at once. Default false: it waits its turn. */
  readonly interruptAssistantEnabled?: boolean | undefined;
}

/** A message an owner adds (`add-message`): OpenAI's shape; `function` counts as `tool`. */
export interface AddedMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool' | 'function';
  readonly content: string | null;
  readonly toolCallId?: string | undefined;
  readonly tool_call_id?: string | undefined;
}

/** Longest text accepted from a live control message. */
export const MAX_CONTROL_TEXT_CHARS = 10_000;

const ROLES = new Set(['system', 'user', 'assistant', 'tool', 'function']);

function invalid(message: string): ParlaError {
  return new ParlaError('ERR_VALIDATION', message);
}

/** The text of a `say`; throws ERR_VALIDATION when it is not a non-empty, bounded string. */
export function checkSayContent(content: unknown): string {
  if (typeof content !== 'string' || content.trim() === '') {
    throw invalid('say content must be a non-empty string');
  }
  if (content.length > MAX_CONTROL_TEXT_CHARS) {
    throw invalid(`say content must be at most ${MAX_CONTROL_TEXT_CHARS} characters`);
  }
  return content;
}

/** Checks an added message and gives it as the model sees it; throws ERR_VALIDATION. */
export function toModelMessage(input: unknown): ModelMessage {
  if (typeof input !== 'object' || input === null) {
    throw invalid('message must be an object');
  }
  const { role, content } = input as Partial<AddedMessage>;
  if (typeof role !== 'string' || !ROLES.has(role)) {
    throw invalid('message.role must be one of system, user, assistant, tool, function');
  }
  if (typeof content !== 'string' && !(content === null && role === 'assistant')) {
    throw invalid('message.content must be a string');
  }
  if (typeof content === 'string' && content.length > MAX_CONTROL_TEXT_CHARS) {
    throw invalid(`message.content must be at most ${MAX_CONTROL_TEXT_CHARS} characters`);
  }
  if (role === 'tool' || role === 'function') {
    const raw = input as Partial<AddedMessage>;
    const id = raw.toolCallId ?? raw.tool_call_id;
    // Model vendors reject a tool message that answers no call.
    if (typeof id !== 'string' || id === '' || id.length > 200) {
      throw invalid(
        `a ${role} message needs toolCallId (tool_call_id), a string of 1–200 characters`,
      );
    }
    return { role: 'tool', content, toolCallId: id };
  }
  return { role, content };
}

/** The text a tool message carries for a result: strings as is, other values as JSON. */
function resultContent(result: ToolCallResult | undefined): string {
  if (result === undefined) {
    return 'Error: no result';
  }
  if (result.error !== undefined) {
    return `Error: ${result.error}`;
  }
  const value = result.result;
  if (typeof value === 'string') {
    return value;
  }
  return value === undefined ? '' : (JSON.stringify(value) ?? '');
}

/** The tool messages answering `calls`, in their order, from results in any order. */
export function toolMessages(
  calls: readonly ModelToolCall[],
  results: readonly ToolCallResult[],
): ModelMessage[] {
  return calls.map((call) => ({
    role: 'tool',
    toolCallId: call.id,
    content: resultContent(results.find((result) => result.toolCallId === call.id)),
  }));
}
