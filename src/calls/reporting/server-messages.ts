import { toolCallItem as sharedToolCallItem } from '../../core/tool-call-item.js';
import type { Doc } from '../../store/resource-store.js';
import type { ObservedEvent, ToolCallRequest, ToolCallResult } from '../call-observer.js';
import { TRANSFER_UPDATE, transferUpdateMessage } from './transfer-update.js';
import type { WebhookOutcome } from './webhook-sender.js';

/** The part of a server message that depends on the event (the envelope adds the rest). */
export interface EventMessage {
  readonly type: string;
  readonly fields: Doc;
  /** Kept when a slow server backs the queue up. */
  readonly keep: boolean;
}

/** Longest result or error text taken from a tool server's reply. */
const MAX_RESULT_CHARS = 100_000;

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/**
 * The server message a pipeline event becomes (without `type` filtering), or null for events
 * that are not sent as such (metrics, call-ended: the status-update and report cover the end).
 * `conversation-update` is built by the reporter, which owns the timed history.
 */
export function eventMessage(event: ObservedEvent): EventMessage | null {
  switch (event.type) {
    case 'speech-update':
      return {
        type: 'speech-update',
        fields: { status: text(event.status), role: text(event.role), turn: num(event.turn) },
        keep: false,
      };
    case 'transcript':
      return {
        type: 'transcript',
        fields: {
          role: text(event.role),
          transcriptType: text(event.transcriptType),
          transcript: text(event.transcript),
        },
        keep: false,
      };
    case 'model-output':
      return {
        type: 'model-output',
        fields: { output: text(event.output), turnId: num(event.turnId) },
        keep: false,
      };
    case 'voice-input':
      return { type: 'voice-input', fields: { input: text(event.input) }, keep: false };
    case 'user-interrupted':
      return { type: 'user-interrupted', fields: { turnId: num(event.turnId) }, keep: false };
    case TRANSFER_UPDATE:
      return transferUpdateMessage(event);
    case 'hang':
      return { type: 'hang', fields: {}, keep: false };
    default:
      return null;
  }
}

/** A tool definition by the name the model calls it (`function.name`, else `name`). */
export function toolName(tool: Doc): string | null {
  const fn = tool.function as Doc | undefined;
  const name = typeof fn?.name === 'string' ? fn.name : tool.name;
  return typeof name === 'string' && name !== '' ? name : null;
}

/** `toolCallList` items in the union shape (src/core/tool-call-item.ts). */
export function toolCallItem(call: ToolCallRequest): Doc {
  return sharedToolCallItem(call);
}

/** The fields of a `tool-calls` message for the calls going to one server. */
export function toolCallsFields(
  calls: readonly ToolCallRequest[],
  tools: ReadonlyMap<string, Doc>,
): Doc {
  const toolCallList = calls.map(toolCallItem);
  const toolWithToolCallList = calls.map((call, index) => {
    const tool = tools.get(call.name) ?? { type: 'function', function: { name: call.name } };
    return { ...tool, toolCall: toolCallList[index] };
  });
  return { toolCallList, toolWithToolCallList };
}

function clip(value: string): string {
  return value.length <= MAX_RESULT_CHARS ? value : value.slice(0, MAX_RESULT_CHARS);
}

/** A result or error as text: strings as they are, anything else as its JSON. */
function asText(value: unknown): string | undefined {
  if (value === undefined || value === null) {
    return undefined;
  }
  return clip(typeof value === 'string' ? value : JSON.stringify(value));
}

/**
 * One result per call from a tool server's reply `{results: [{toolCallId, result|error}]}`.
 * A failed request, a non-2xx reply, a reply without `results`, or a call the reply does not
 * answer each become an error result, so the model always hears back about every call.
 */
export function parseToolCallsReply(
  calls: readonly ToolCallRequest[],
  outcome: WebhookOutcome,
): ToolCallResult[] {
  const failed = (error: string): ToolCallResult[] =>
    calls.map((call) => ({ toolCallId: call.id, name: call.name, error }));
  if (!outcome.ok) {
    return failed(`the tool server failed: ${outcome.error ?? `HTTP ${String(outcome.status)}`}`);
  }
  const reply = outcome.reply as Doc | undefined;
  if (reply === undefined || reply === null || typeof reply !== 'object') {
    return failed(
      `the tool server's reply is not ${outcome.error === undefined ? 'an object' : 'JSON'}`,
    );
  }
  const results = reply.results;
  if (!Array.isArray(results)) {
    const topError = asText(reply.error);
    return failed(topError ?? 'the tool server replied without results');
  }
  const byId = new Map<string, Doc>();
  for (const item of results) {
    if (item !== null && typeof item === 'object' && typeof (item as Doc).toolCallId === 'string') {
      byId.set((item as Doc).toolCallId as string, item as Doc);
    }
  }
  return calls.map((call) => {
    const item = byId.get(call.id);
    if (item === undefined) {
      return { toolCallId: call.id, name: call.name, error: `no result for tool call ${call.id}` };
    }
    const error = asText(item.error);
    if (error !== undefined) {
      return { toolCallId: call.id, name: call.name, error };
    }
    return { toolCallId: call.id, name: call.name, result: asText(item.result) ?? '' };
  });
}

/**
 * The fields of a legacy `function-call` message: `{functionCall: {name, parameters}}`, the
 * arguments parsed (`{}` when the model's text is not a JSON object).
 */
export function functionCallFields(call: ToolCallRequest): Doc {
  let parameters: unknown = {};
  try {
    parameters = JSON.parse(call.arguments) as unknown;
  } catch {
    parameters = {};
  }
  if (parameters === null || typeof parameters !== 'object' || Array.isArray(parameters)) {
    parameters = {};
  }
  return { functionCall: { name: call.name, parameters } };
}

/** A `function-call` reply `{result}` (or `{error}`) as the call's result. */
export function parseFunctionCallReply(
  call: ToolCallRequest,
  outcome: WebhookOutcome,
): ToolCallResult {
  const failed = (error: string): ToolCallResult => ({
    toolCallId: call.id,
    name: call.name,
    error,
  });
  if (!outcome.ok) {
    return failed(
      `the function server failed: ${outcome.error ?? `HTTP ${String(outcome.status)}`}`,
    );
  }
  const reply = outcome.reply as Doc | undefined;
  if (reply === undefined || reply === null || typeof reply !== 'object' || Array.isArray(reply)) {
    return failed(
      `the function server's reply is not ${outcome.error === undefined ? 'an object' : 'JSON'}`,
    );
  }
  const error = asText(reply.error);
  if (error !== undefined) {
    return failed(error);
  }
  const result = asText(reply.result);
  return result === undefined
    ? failed('the function server replied without a result')
    : { toolCallId: call.id, name: call.name, result };
}
