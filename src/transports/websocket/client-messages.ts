import { DEFAULT_CLIENT_MESSAGES } from '../../core/assistant-vocabulary.js';
import { toolCallItem, type ToolCallLike } from '../../core/tool-call-item.js';

/**
 * Client messages: the pipeline's events as a client receives them on its socket, bare JSON
 * objects shaped like the platform's `ClientMessage*` schemas, filtered by
 * `assistant.clientMessages`.
 */

const FINAL_TRANSCRIPTS = 'transcript[transcriptType="final"]';

/** An event as it arrives from the call's worker: a type, a media-clock time and fields. */
export interface ClientEvent {
  readonly type: string;
  readonly [field: string]: unknown;
}

interface OpenAiMessage {
  role?: unknown;
  content?: unknown;
  tool_calls?: unknown;
  tool_call_id?: unknown;
}

/** `conversation-update.messages`: the transcript-style form of the OpenAI-style history. */
function transcriptMessages(messages: readonly OpenAiMessage[]): object[] {
  return messages.map((message) => {
    const role = message.role === 'assistant' ? 'bot' : message.role;
    if (Array.isArray(message.tool_calls)) {
      return { role: 'tool_calls', toolCalls: message.tool_calls, message: '' };
    }
    if (message.role === 'tool') {
      return {
        role: 'tool_call_result',
        toolCallId: message.tool_call_id,
        result: message.content,
      };
    }
    return { role, message: typeof message.content === 'string' ? message.content : '' };
  });
}

/** The union shape clients read tool calls in (src/core/tool-call-item.ts). */
function toolCallList(toolCalls: readonly ToolCallLike[]): object[] {
  return toolCalls.map(toolCallItem);
}

/** Picks and shapes the client messages of one call. */
export class ClientMessageSelector {
  private readonly selected: ReadonlySet<string>;

  constructor(clientMessages: unknown) {
    const list = Array.isArray(clientMessages)
      ? clientMessages.filter((value): value is string => typeof value === 'string')
      : DEFAULT_CLIENT_MESSAGES;
    this.selected = new Set(list);
  }

  wants(type: string): boolean {
    return this.selected.has(type);
  }

  /** The client message for `event`, or null when the assistant did not ask for it. */
  select(event: ClientEvent): object | null {
    const { type } = event;
    if (type === 'transcript' && !this.selected.has(type)) {
      return this.selected.has(FINAL_TRANSCRIPTS) && event.transcriptType === 'final'
        ? { ...this.shape(event), type: FINAL_TRANSCRIPTS }
        : null;
    }
    return this.selected.has(type) ? this.shape(event) : null;
  }

  private shape(event: ClientEvent): object {
    const fields: Record<string, unknown> = { ...event };
    delete fields.atMs;
    switch (event.type) {
      case 'conversation-update': {
        const messages = Array.isArray(event.messages) ? (event.messages as OpenAiMessage[]) : [];
        return {
          type: 'conversation-update',
          messages: transcriptMessages(messages),
          messagesOpenAIFormatted: messages,
        };
      }
      case 'tool-calls': {
        const calls = Array.isArray(event.toolCalls) ? (event.toolCalls as ToolCallLike[]) : [];
        const list = toolCallList(calls);
        return {
          type: 'tool-calls',
          toolCallList: list,
          toolWithToolCallList: list.map((toolCall) => ({
            type: 'function',
            function: (toolCall as { function: unknown }).function,
            toolCall,
          })),
        };
      }
      default:
        return fields;
    }
  }
}
