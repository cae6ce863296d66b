/**
 * What happens to an inbound INVITE once its number is known, before any media: forwarded by a
 * `call.ringing` hook, run on the number's handler, run on what `assistant-request` returns,
 * forwarded to what it returns or to the number's `fallbackDestination`, answered only to speak
 * the error it returns, or refused.
 */
import type { Doc, Resource } from '../store/resource-store.js';
import type { Store } from '../store/store.js';
import {
  ENDED_REASON_FORWARDING,
  ENDED_REASON_INVALID_ASSISTANT,
  ENDED_REASON_RETURNED_ERROR,
} from './assistant-request-reply.js';
import {
  ENDED_REASON_NO_SERVER,
  assistantRequestServer,
  requestAssistant,
  type AssistantRequestOutcome,
} from './assistant-request.js';
import { ringingTransfer } from './sip-inbound-hooks.js';
import { describeDestination, headerText, redirectTarget } from './sip-inbound-redirect.js';
import { ENDED_REASON_FORWARDED } from './telephony-leg.js';

/** A final refusal with a Reason header (RFC 3326, Q.850 cause); the call ends. */
export interface InboundRefusal {
  readonly action: 'reject';
  readonly status: number;
  readonly reason: string;
  readonly endedReason: string;
  readonly endedMessage: string;
}

export type InboundDecision =
  /** Answer and run the call; `fields` go onto the stored call first (a returned handler). */
  | { readonly action: 'answer'; readonly fields: Doc }
  /** 302 to `contact`; the call ends with the reason. */
  | {
      readonly action: 'redirect';
      readonly contact: string;
      readonly destination: Doc;
      readonly endedReason: string;
      readonly endedMessage: string;
    }
  | InboundRefusal
  /**
   * Answer only to speak `text` (the server's error), then hang up; `unspoken` is what the
   * caller gets instead when no voice can speak it. The call ends with unspoken.endedReason.
   */
  | { readonly action: 'announce'; readonly text: string; readonly unspoken: InboundRefusal };

export interface InboundDecisionInput {
  readonly store: Store;
  readonly orgId: string;
  /** The stored inbound call. */
  readonly call: Resource;
  /** The number as the API shows it. */
  readonly phoneNumber: Resource;
  /** The number's byo-sip-trunk credential (its gateways dial forwarded numbers). */
  readonly trunk: Doc | null;
  /** Where the INVITE came from: forwarded numbers go back there without an outbound gateway. */
  readonly sourceAddress: string;
  readonly assistantRequestDeadlineMs?: number;
  readonly fetch?: typeof fetch;
}

const HANDLER_FIELDS = ['assistantId', 'squadId', 'workflowId'] as const;
/** Q.850 causes for the Reason header: 21 call rejected, 41 temporary failure. */
const CAUSE_REJECTED = 21;
const CAUSE_TEMPORARY_FAILURE = 41;

function isObject(value: unknown): value is Doc {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function reasonHeader(cause: number, text: string): string {
  return `Q.850;cause=${cause};text="${headerText(text)}"`;
}

function redirect(
  input: InboundDecisionInput,
  destination: Doc,
  endedReason: string,
  why: string,
): InboundDecision | undefined {
  const contact = redirectTarget(destination, input.trunk, input.sourceAddress);
  if (contact === undefined) {
    return undefined;
  }
  return {
    action: 'redirect',
    contact,
    destination,
    endedReason,
    endedMessage: `${why}; forwarded to ${describeDestination(destination)}`,
  };
}

/** A failed assistant-request: the fallbackDestination if the number has one, else 480. */
function failed(
  input: InboundDecisionInput,
  endedReason: string,
  message: string,
): InboundDecision {
  const fallback = input.phoneNumber.fallbackDestination;
  if (isObject(fallback)) {
    const forwarded = redirect(
      input,
      fallback,
      ENDED_REASON_FORWARDED,
      `${endedReason}: ${message}`,
    );
    if (forwarded !== undefined) {
      return forwarded;
    }
  }
  return {
    action: 'reject',
    status: 480,
    reason: reasonHeader(CAUSE_TEMPORARY_FAILURE, endedReason),
    endedReason,
    endedMessage: message,
  };
}

function fromOutcome(
  input: InboundDecisionInput,
  outcome: AssistantRequestOutcome,
): InboundDecision {
  switch (outcome.kind) {
    case 'handler':
      return { action: 'answer', fields: outcome.fields };
    case 'destination':
      return (
        redirect(
          input,
          outcome.destination,
          ENDED_REASON_FORWARDING,
          'assistant-request returned a destination',
        ) ??
        failed(
          input,
          ENDED_REASON_INVALID_ASSISTANT,
          'The destination assistant-request returned cannot be dialled',
        )
      );
    case 'error': {
      // Declined with the text in a Reason header when it cannot be spoken (not text, no voice).
      const declined: InboundRefusal = {
        action: 'reject',
        status: 603,
        reason: reasonHeader(CAUSE_REJECTED, outcome.message),
        endedReason: outcome.endedReason,
        endedMessage: outcome.message,
      };
      return outcome.endedReason === ENDED_REASON_RETURNED_ERROR
        ? { action: 'announce', text: outcome.message, unspoken: declined }
        : declined;
    }
    case 'failed':
      return failed(input, outcome.endedReason, outcome.message);
  }
}

export async function decideInbound(input: InboundDecisionInput): Promise<InboundDecision> {
  const { store, orgId, call, phoneNumber } = input;
  const hooked = ringingTransfer(phoneNumber, call);
  if (hooked !== undefined) {
    const forwarded = redirect(input, hooked, ENDED_REASON_FORWARDED, 'a call.ringing hook');
    if (forwarded !== undefined) {
      return forwarded;
    }
  }
  if (HANDLER_FIELDS.some((field) => typeof phoneNumber[field] === 'string')) {
    return { action: 'answer', fields: {} };
  }
  const internal = await store.resources.phoneNumbers.getInternal(orgId, phoneNumber.id);
  const server = assistantRequestServer(internal);
  if (server === null) {
    return failed(
      input,
      ENDED_REASON_NO_SERVER,
      'The number has no assistant, squad or workflow, and no server to send assistant-request to',
    );
  }
  const outcome = await requestAssistant({
    store,
    orgId,
    call,
    phoneNumber,
    server,
    ...(input.assistantRequestDeadlineMs !== undefined && {
      deadlineMs: input.assistantRequestDeadlineMs,
    }),
    ...(input.fetch !== undefined && { fetch: input.fetch }),
  });
  return fromOutcome(input, outcome);
}
