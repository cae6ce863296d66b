/**
 * DTMF out on one leg of a bridged transfer: keys relayed from the other leg and the dial
 * string of a destination's extension. RFC 4733 events go on the leg's own RTP stream when the
 * leg negotiated telephone-event; otherwise each key is a SIP INFO (application/dtmf-relay,
 * the Cisco format trunks read), one at a time, as the `dtmf` tool does.
 *
 * Both paths keep the order keys were given in: events share the RTP sender's DTMF queue (an
 * extension queued at the answer goes out before any key relayed after it), INFOs share one
 * chain of requests.
 */
import { DTMF_GAP_MS, DTMF_TONE_MS, type DtmfStep } from '../transports/rtp/dtmf-sender.js';
import type { RtpSession } from '../transports/rtp/rtp-session.js';
import type { SipDialog } from '../transports/sip/dialog.js';
import type { SipResponse } from '../transports/sip/message.js';
import type { SipUserAgent } from '../transports/sip/sip-user-agent.js';

/** A relayed key lasts at least what a detector needs (Q.24) and at most 5 s. */
const MIN_KEY_MS = 40;
const MAX_KEY_MS = 5000;
/** INFO keys waiting beyond this are dropped (a stuck key or a flood must not pile up). */
const MAX_PENDING_INFO = 32;

/** What happened to the keys relayed across bridges (SipBridges.dtmfStats). */
export interface BridgeDtmfStats {
  /** Keys sent on as RFC 4733 events. */
  relayedAsEvents: number;
  /** Keys sent on as SIP INFO. */
  relayedAsInfo: number;
  /** Keys not sent on: a full queue, an INFO refused or unanswered, the leg gone. */
  dropped: number;
}

export function newBridgeDtmfStats(): BridgeDtmfStats {
  return { relayedAsEvents: 0, relayedAsInfo: 0, dropped: 0 };
}

type Dialogs = Pick<SipUserAgent['dialogs'], 'request'>;

/** One DTMF key as SIP INFO (`Signal=`, `Duration=` in ms). */
export function sendInfoDigit(
  dialogs: Dialogs,
  dialog: SipDialog,
  digit: string,
  durationMs: number,
): Promise<SipResponse> {
  return dialogs.request(dialog, 'INFO', {
    body: Buffer.from(`Signal=${digit}\r\nDuration=${Math.round(durationMs)}\r\n`),
    contentType: 'application/dtmf-relay',
  });
}

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms).unref());

/** The DTMF sent to one bridged leg. */
export class BridgedLegDtmf {
  /** Whether the leg negotiated telephone-event (a re-INVITE may change it). */
  eventsOut: boolean;
  private infoChain: Promise<void> = Promise.resolve();
  private pendingInfo = 0;
  private closed = false;

  constructor(
    private readonly dialogs: Dialogs,
    private readonly dialog: SipDialog,
    private readonly rtp: Pick<RtpSession, 'sendDtmf' | 'sendDtmfSteps'>,
    eventsOut: boolean,
    private readonly stats: BridgeDtmfStats,
  ) {
    this.eventsOut = eventsOut;
  }

  /** A key from the other leg, of the length it was held there. */
  key(digit: string, heldMs: number): void {
    const durationMs = Math.min(MAX_KEY_MS, Math.max(MIN_KEY_MS, heldMs));
    if (this.closed || this.dialog.state === 'terminated') {
      this.stats.dropped++;
      return;
    }
    if (this.eventsOut) {
      if (this.rtp.sendDtmf(digit, durationMs)) {
        this.stats.relayedAsEvents++;
      } else {
        this.stats.dropped++;
      }
      return;
    }
    if (this.pendingInfo >= MAX_PENDING_INFO) {
      this.stats.dropped++;
      return;
    }
    this.pendingInfo++;
    this.chain(async () => {
      this.pendingInfo--;
      if (await this.info(digit, durationMs)) {
        this.stats.relayedAsInfo++;
      } else {
        this.stats.dropped++;
      }
    });
  }

  /**
   * Keys a dial string (an extension after the answer): resolves true once every key went
   * out, false when one could not (the leg closed, an INFO refused).
   */
  dial(steps: readonly DtmfStep[]): Promise<boolean> {
    if (this.eventsOut) {
      return this.rtp.sendDtmfSteps(steps);
    }
    return new Promise((resolve) => {
      this.chain(async () => {
        for (const step of steps) {
          if (step.kind === 'wait') {
            await sleep(step.durationMs);
          } else if (!(await this.info(step.digit, DTMF_TONE_MS))) {
            resolve(false);
            return;
          }
        }
        resolve(true);
      });
    });
  }

  /** The bridge ended: INFO keys still waiting are dropped. */
  close(): void {
    this.closed = true;
  }

  private chain(task: () => Promise<void>): void {
    this.infoChain = this.infoChain.then(task).catch(() => undefined);
  }

  /** One INFO, then the tone's length and the gap before the next key. */
  private async info(digit: string, durationMs: number): Promise<boolean> {
    if (this.closed || this.dialog.state === 'terminated') {
      return false;
    }
    const response = await sendInfoDigit(this.dialogs, this.dialog, digit, durationMs).catch(
      () => undefined,
    );
    if (response === undefined || response.status < 200 || response.status >= 300) {
      return false;
    }
    await sleep(durationMs + DTMF_GAP_MS);
    return true;
  }
}
