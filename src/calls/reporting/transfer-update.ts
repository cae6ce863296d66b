/**
 * The `transfer-update` message (reference 3.2: `{destination, toAssistant?, fromAssistant?,
 * toStepRecord?, fromStepRecord?}`): sent when a transfer to a number or SIP destination
 * starts, to the client (in the default `clientMessages`) and to the server when subscribed.
 * The transfer reports it as an event of the call, so both paths shape it from one place.
 */
import type { Doc } from '../../store/resource-store.js';
import type { ObservedEvent } from '../call-observer.js';
import type { EventMessage } from './server-messages.js';

export const TRANSFER_UPDATE = 'transfer-update';

/**
 * The event for a transfer that starts, at media-clock time `atMs`; undefined for destinations
 * other than `number` and `sip` (an assistant handoff reports its assistants, not done here).
 */
export function transferUpdateEvent(destination: Doc, atMs: number): ObservedEvent | undefined {
  if (destination.type !== 'number' && destination.type !== 'sip') {
    return undefined;
  }
  return { type: TRANSFER_UPDATE, atMs, destination };
}

/** The server message of a transfer-update event (kept when a slow server backs up). */
export function transferUpdateMessage(event: ObservedEvent): EventMessage {
  const destination = event.destination;
  return {
    type: TRANSFER_UPDATE,
    fields: destination !== null && typeof destination === 'object' ? { destination } : {},
    keep: true,
  };
}
