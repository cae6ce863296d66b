/**
 * The `assistant-request` server message of an inbound call whose number names no assistant,
 * squad or workflow: sent to the phone number's server (the org has no server of its own in
 * this store), answered within a fixed end-to-end deadline, and the reply read.
 */
import type { Doc, Resource } from '../store/resource-store.js';
import type { Store } from '../store/store.js';
import {
  ENDED_REASON_REQUEST_FAILED,
  interpretReply,
  type AssistantRequestOutcome,
} from './assistant-request-reply.js';
import { chooseServer } from './reporting/server-routing.js';
import type { ServerTarget } from './reporting/webhook-auth.js';
import {
  WebhookSender,
  webhookLogContext,
  type WebhookOutcome,
} from './reporting/webhook-sender.js';

export type { AssistantRequestOutcome } from './assistant-request-reply.js';

/** The platform's end-to-end deadline for an assistant-request reply, retries included. */
export const ASSISTANT_REQUEST_DEADLINE_MS = 7500;
export const ENDED_REASON_NO_SERVER = 'call-start-error-neither-assistant-nor-server-set';

export interface AssistantRequestInput {
  readonly store: Store;
  readonly orgId: string;
  /** The stored inbound call (sent as `call`). */
  readonly call: Resource;
  /** The number as the API shows it (sent as `phoneNumber`). */
  readonly phoneNumber: Resource;
  /** Where to send it (see assistantRequestServer); secrets open. */
  readonly server: ServerTarget;
  /** Default ASSISTANT_REQUEST_DEADLINE_MS (tests shorten it). */
  readonly deadlineMs?: number;
  readonly fetch?: typeof fetch;
  /** Epoch ms, for the message timestamp. */
  readonly now?: () => number;
}

/**
 * The server an assistant-request goes to: the phone number's (read with its secrets open),
 * then the org's, which this store does not keep; null when neither is set.
 */
export function assistantRequestServer(phoneNumberInternal: Doc | null): ServerTarget | null {
  return chooseServer({ assistant: {}, phoneNumber: phoneNumberInternal, orgServer: null });
}

/**
 * The deadline: 7.5 s end to end, or the server's own `timeoutSeconds` when shorter (a server
 * that asks to be given up on sooner is given up on sooner).
 */
export function assistantRequestDeadlineMs(server: ServerTarget, deadlineMs?: number): number {
  const limit = deadlineMs ?? ASSISTANT_REQUEST_DEADLINE_MS;
  const own = server.timeoutSeconds;
  return typeof own === 'number' && Number.isFinite(own) && own > 0
    ? Math.min(limit, own * 1000)
    : limit;
}

/** Sends the message and reads the reply. Never throws: failures are `failed` outcomes. */
export async function requestAssistant(
  input: AssistantRequestInput,
): Promise<AssistantRequestOutcome> {
  const { store, orgId, call, server } = input;
  const deadlineMs = assistantRequestDeadlineMs(server, input.deadlineMs);
  const deadline = new AbortController();
  const baseFetch = input.fetch ?? globalThis.fetch;
  const sender = new WebhookSender({
    logContext: webhookLogContext(orgId, call),
    credential: (id) => store.resources.credentials.getInternal(orgId, id),
    logs: store.logs,
    // Every attempt also stops at the overall deadline, so no request outlives the call set-up.
    fetch: (url, init) =>
      baseFetch(url, {
        ...init,
        signal:
          init?.signal === undefined || init.signal === null
            ? deadline.signal
            : AbortSignal.any([init.signal, deadline.signal]),
      }),
  });
  const payload = {
    message: {
      type: 'assistant-request',
      timestamp: (input.now ?? Date.now)(),
      call,
      phoneNumber: input.phoneNumber,
      customer: call.customer ?? {},
    },
  };
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<WebhookOutcome>((resolve) => {
    timer = setTimeout(() => {
      deadline.abort();
      resolve({
        ok: false,
        status: null,
        reply: undefined,
        error: `no reply within ${deadlineMs / 1000} s`,
        attempts: 0,
      });
    }, deadlineMs);
  });
  let outcome: WebhookOutcome;
  try {
    outcome = await Promise.race([sender.send(server, payload, 'assistant-request'), late]);
  } finally {
    clearTimeout(timer);
  }
  if (!outcome.ok) {
    return {
      kind: 'failed',
      endedReason: ENDED_REASON_REQUEST_FAILED,
      message: `assistant-request to ${server.url} failed: ${outcome.error ?? `HTTP ${String(outcome.status)}`}`,
    };
  }
  if (outcome.error !== undefined) {
    // A 2xx whose body is not JSON.
    return {
      kind: 'failed',
      endedReason: ENDED_REASON_REQUEST_FAILED,
      message: `assistant-request to ${server.url} failed: ${outcome.error}`,
    };
  }
  try {
    return await interpretReply(store, orgId, outcome.reply);
  } catch (error) {
    return {
      kind: 'failed',
      endedReason: ENDED_REASON_REQUEST_FAILED,
      message: `assistant-request reply could not be checked: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}
