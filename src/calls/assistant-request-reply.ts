/**
 * What a server's reply to `assistant-request` asks for (api-behaviour.md §3.2): an error to end
 * the call with, a destination to forward it to, or the handler the call runs on. Every reply is
 * checked as the API checks the same fields on `POST /call`, so a bad inline assistant cannot
 * reach the pipeline.
 */
import type { TSchema } from '@sinclair/typebox';
import { checkReferences } from '../control/routes/assistants.js';
import { AssistantOverrides, CreateAssistant } from '../control/schemas/assistant.js';
import { TransferDestination } from '../control/schemas/common.js';
import { checkNumber } from '../control/schemas/phone-number.js';
import { CreateSquad } from '../control/schemas/squad.js';
import { CreateWorkflow } from '../control/schemas/workflow.js';
import { validateBody } from '../control/validation.js';
import type { Doc } from '../store/resource-store.js';
import type { ResourceName, Store } from '../store/store.js';

export const ENDED_REASON_REQUEST_FAILED = 'assistant-request-failed';
export const ENDED_REASON_RETURNED_ERROR = 'assistant-request-returned-error';
export const ENDED_REASON_UNSPEAKABLE_ERROR = 'assistant-request-returned-unspeakable-error';
export const ENDED_REASON_INVALID_ASSISTANT = 'assistant-request-returned-invalid-assistant';
export const ENDED_REASON_NO_ASSISTANT = 'assistant-request-returned-no-assistant';
export const ENDED_REASON_FORWARDING = 'assistant-request-returned-forwarding-phone-number';

/** The longest error text kept from a reply (it becomes the call's endedMessage). */
const MAX_ERROR_LENGTH = 1000;

export type AssistantRequestOutcome =
  /** Fields to store on the call (`assistant`, `assistantId`, `squad`…, their overrides). */
  | { readonly kind: 'handler'; readonly fields: Doc }
  /** Forward the caller at once (a validated transfer destination). */
  | { readonly kind: 'destination'; readonly destination: Doc }
  /** The server answered `{error}`: the call ends, without fallback. */
  | { readonly kind: 'error'; readonly endedReason: string; readonly message: string }
  /** No usable answer: the number's fallbackDestination applies. */
  | { readonly kind: 'failed'; readonly endedReason: string; readonly message: string };

interface HandlerKind {
  readonly field: string;
  /** Stored resource an id names, or the schema an inline definition must meet. */
  readonly resource?: ResourceName;
  readonly schema?: TSchema;
}

/** In the order a reply naming several is reported. */
const HANDLERS: readonly HandlerKind[] = [
  { field: 'assistantId', resource: 'assistants' },
  { field: 'assistant', schema: CreateAssistant },
  { field: 'squadId', resource: 'squads' },
  { field: 'squad', schema: CreateSquad },
  { field: 'workflowId', resource: 'workflows' },
  { field: 'workflow', schema: CreateWorkflow },
];

function isObject(value: unknown): value is Doc {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function invalid(message: string): AssistantRequestOutcome {
  return { kind: 'failed', endedReason: ENDED_REASON_INVALID_ASSISTANT, message };
}

/** Validates a copy (validation fills defaults in place) and returns it, or the problems. */
function validated(schema: TSchema, value: unknown, path: string): Doc | string {
  const copy = structuredClone(value);
  try {
    return validateBody<Doc>(schema, copy, path);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Reads a reply: `{error}` wins over everything, then `{destination}` (assistant fields are
 * then ignored), then exactly one of assistantId, assistant, squadId, squad, workflowId or
 * workflow with its optional overrides. `reply` is undefined for an empty 2xx body.
 */
export async function interpretReply(
  store: Store,
  orgId: string,
  reply: unknown,
): Promise<AssistantRequestOutcome> {
  if (reply === undefined || reply === null) {
    return {
      kind: 'failed',
      endedReason: ENDED_REASON_NO_ASSISTANT,
      message: 'The assistant-request reply was empty',
    };
  }
  if (!isObject(reply)) {
    return invalid('The assistant-request reply is not a JSON object');
  }
  if (reply.error !== undefined && reply.error !== null) {
    const text = typeof reply.error === 'string' ? reply.error.trim() : '';
    return text === ''
      ? {
          kind: 'error',
          endedReason: ENDED_REASON_UNSPEAKABLE_ERROR,
          message: 'The assistant-request reply carried an error that is not text',
        }
      : {
          kind: 'error',
          endedReason: ENDED_REASON_RETURNED_ERROR,
          message: text.slice(0, MAX_ERROR_LENGTH),
        };
  }
  if (reply.destination !== undefined && reply.destination !== null) {
    const destination = validated(TransferDestination, reply.destination, 'destination');
    if (typeof destination === 'string') {
      return invalid(`The assistant-request reply has an invalid destination: ${destination}`);
    }
    try {
      checkNumber(
        'destination.number',
        destination.number,
        destination.numberE164CheckEnabled ?? true,
      );
    } catch (error) {
      return invalid(`The assistant-request reply has an invalid destination: ${String(error)}`);
    }
    return { kind: 'destination', destination };
  }
  return handlerOf(store, orgId, reply);
}

async function handlerOf(
  store: Store,
  orgId: string,
  reply: Doc,
): Promise<AssistantRequestOutcome> {
  const given = HANDLERS.filter(({ field }) => reply[field] !== undefined && reply[field] !== null);
  if (given.length === 0) {
    return {
      kind: 'failed',
      endedReason: ENDED_REASON_NO_ASSISTANT,
      message: 'The assistant-request reply names no assistant, squad, workflow or destination',
    };
  }
  if (given.length > 1) {
    return invalid(
      `The assistant-request reply names more than one handler: ${given.map((kind) => kind.field).join(', ')}`,
    );
  }
  const kind = given[0]!;
  const value = reply[kind.field];
  const fields: Doc = {};
  if (kind.resource !== undefined) {
    if (typeof value !== 'string' || value === '' || value.length > 100) {
      return invalid(`The assistant-request reply's ${kind.field} is not an id`);
    }
    if ((await store.resources[kind.resource].get(orgId, value)) === null) {
      return invalid(`The assistant-request reply's ${kind.field} ${value} was not found`);
    }
    fields[kind.field] = value;
  } else {
    const definition = validated(kind.schema!, value, kind.field);
    if (typeof definition === 'string') {
      return invalid(`The assistant-request reply's ${kind.field} is invalid: ${definition}`);
    }
    try {
      await checkReferences(store, orgId, definition);
    } catch (error) {
      return invalid(
        `The assistant-request reply's ${kind.field} is invalid: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    fields[kind.field] = definition;
  }
  if (reply.assistantOverrides !== undefined && reply.assistantOverrides !== null) {
    const overrides = validated(AssistantOverrides, reply.assistantOverrides, 'assistantOverrides');
    if (typeof overrides === 'string') {
      return invalid(`The assistant-request reply's assistantOverrides are invalid: ${overrides}`);
    }
    fields.assistantOverrides = overrides;
  }
  for (const field of ['squadOverrides', 'workflowOverrides']) {
    if (isObject(reply[field])) {
      fields[field] = reply[field];
    }
  }
  return { kind: 'handler', fields };
}
