import type { Doc } from '../../store/resource-store.js';
import type { TransferDestinationReply } from '../call-observer.js';
import type { WebhookOutcome } from './webhook-sender.js';

/** Longest `message` or `error` taken from a transfer-destination reply (spoken to the caller). */
const MAX_SPOKEN_CHARS = 1000;
/** Largest destination taken from a reply, as JSON. */
const MAX_DESTINATION_BYTES = 16 * 1024;
const E164 = /^\+[1-9]\d{1,14}$/;

/** Why a destination cannot be used, or null when it can. */
function destinationProblem(destination: Doc): string | null {
  const text = (value: unknown, max: number): boolean =>
    typeof value === 'string' && value.trim() !== '' && value.length <= max;
  switch (destination.type) {
    case 'number': {
      const number = destination.number;
      if (!text(number, 40) || (number as string).length < 3) {
        return 'a number destination needs a number of 3 to 40 characters';
      }
      if (destination.numberE164CheckEnabled !== false && !E164.test(number as string)) {
        return 'the destination number is not E.164 (set numberE164CheckEnabled to false to allow it)';
      }
      return null;
    }
    case 'sip':
      return text(destination.sipUri, 2048) && /^sips?:/i.test(destination.sipUri as string)
        ? null
        : 'a sip destination needs a sipUri starting with sip: or sips:';
    case 'assistant':
      return text(destination.assistantName, 200)
        ? null
        : 'an assistant destination needs an assistantName';
    default:
      return 'the destination type is not number, sip or assistant';
  }
}

/** The spoken text of a reply's `message` (a string or a ToolMessage with `content`). */
function spokenText(value: unknown): string | undefined {
  const content =
    typeof value === 'string'
      ? value
      : value !== null && typeof value === 'object'
        ? (value as Doc).content
        : undefined;
  return typeof content === 'string' && content.trim() !== ''
    ? content.slice(0, MAX_SPOKEN_CHARS)
    : undefined;
}

export interface ParsedTransferReply {
  readonly destination?: Doc;
  readonly message?: string;
  readonly error?: string;
  /** Why the reply gave neither a usable destination nor an error (for logs and tests). */
  readonly problem?: string;
}

/**
 * A `transfer-destination-request` reply `{destination, message?, error?}`: an `error` wins (it
 * is spoken to the caller); a destination is checked (type, number, sipUri or assistantName, its
 * size); anything else gives neither, with the problem named.
 */
export function parseTransferDestinationReply(outcome: WebhookOutcome): ParsedTransferReply {
  if (!outcome.ok) {
    return { problem: `the server failed: ${outcome.error ?? `HTTP ${String(outcome.status)}`}` };
  }
  const reply = outcome.reply;
  if (reply === undefined || reply === null || typeof reply !== 'object' || Array.isArray(reply)) {
    return { problem: `the reply is not ${outcome.error === undefined ? 'an object' : 'JSON'}` };
  }
  const fields = reply as Doc;
  const error = spokenText(fields.error);
  if (error !== undefined) {
    return { error };
  }
  const destination = fields.destination;
  if (destination === null || typeof destination !== 'object' || Array.isArray(destination)) {
    return { problem: 'the reply has no destination' };
  }
  const problem = destinationProblem(destination as Doc);
  if (problem !== null) {
    return { problem };
  }
  if (JSON.stringify(destination).length > MAX_DESTINATION_BYTES) {
    return { problem: `the destination is larger than ${MAX_DESTINATION_BYTES} bytes` };
  }
  const message = spokenText(fields.message);
  return { destination: destination as Doc, ...(message === undefined ? {} : { message }) };
}

/**
 * Sends a `transfer-destination-request` and resolves with what the call may use: the checked
 * destination (and message), or the error to speak, or neither. Never rejects.
 */
export async function askTransferDestination(
  send: () => Promise<WebhookOutcome>,
): Promise<TransferDestinationReply> {
  try {
    const { destination, message, error } = parseTransferDestinationReply(await send());
    return {
      ...(destination !== undefined ? { destination } : {}),
      ...(message !== undefined ? { message } : {}),
      ...(error !== undefined ? { error } : {}),
    };
  } catch {
    return {};
  }
}
