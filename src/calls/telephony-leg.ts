import type { Doc } from '../store/resource-store.js';

/**
 * What a phone call's transport can do beyond carrying audio: hand the caller to another
 * destination and send DTMF. A SIP call implements it (src/calls/sip-telephony-leg.ts); a
 * websocket call has none, and transfers on it are refused with a clear error.
 */
export interface TelephonyLeg {
  /**
   * Blind transfer of the far end to `destination` (a `TransferDestination` of the spec: type
   * `number` or `sip`, with `number`/`extension` or `sipUri`, and its `transferPlan`). Resolves
   * once the outcome is known: the far end accepted (the call is over for us) or why not.
   */
  transfer(destination: Doc): Promise<TransferOutcome>;
  /** Sends the digits (0-9, *, #, A-D; `w` waits 500 ms, `W` 1 s) in order; resolves when sent. */
  sendDtmf(digits: string): Promise<void>;
}

export type TransferOutcome =
  | { readonly ok: true }
  /** `code` is stable (`transfer-refused`, `transfer-timeout`, `transfer-failed`, …). */
  | { readonly ok: false; readonly code: string; readonly message: string };

/** Why a call ended with a transfer: the far end took it. */
export const ENDED_REASON_FORWARDED = 'assistant-forwarded-call';
