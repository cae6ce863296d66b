import { DEFAULT_SERVER_MESSAGES } from '../../core/assistant-vocabulary.js';
import type { Doc } from '../../store/resource-store.js';
import { asServer, type ServerTarget } from './webhook-auth.js';

export const FINAL_TRANSCRIPT_TYPE = 'transcript[transcriptType="final"]';

/** Where a call's webhooks may go, by precedence source. */
export interface ServerSources {
  readonly assistant: Doc;
  readonly phoneNumber?: Doc | null;
  /** The org's server; Parla's store keeps none per org yet, so callers usually pass null. */
  readonly orgServer?: ServerTarget | null;
}

/**
 * The server a message goes to: the tool's own server (tool-calls only), then the assistant's,
 * the phone number's, the org's; null when none is set.
 */
export function chooseServer(sources: ServerSources, tool?: Doc | null): ServerTarget | null {
  return (
    asServer(tool?.server) ??
    asServer(sources.assistant.server) ??
    asServer(sources.phoneNumber?.server) ??
    asServer(sources.orgServer) ??
    null
  );
}

/** The message types an assistant subscribes to (its `serverMessages`, else the defaults). */
export function subscribedTypes(assistant: Doc): ReadonlySet<string> {
  const chosen = assistant.serverMessages;
  const list = Array.isArray(chosen) ? chosen : DEFAULT_SERVER_MESSAGES;
  return new Set(list.filter((type): type is string => typeof type === 'string'));
}

/**
 * The `type` to send a message with, or null when it is not subscribed. Transcripts subscribed
 * only in the final-only form go out as finals with that literal type.
 */
export function sendAs(
  subscribed: ReadonlySet<string>,
  type: string,
  transcriptType?: string,
): string | null {
  if (subscribed.has(type)) {
    return type;
  }
  if (
    type === 'transcript' &&
    transcriptType === 'final' &&
    subscribed.has(FINAL_TRANSCRIPT_TYPE)
  ) {
    return FINAL_TRANSCRIPT_TYPE;
  }
  return null;
}
