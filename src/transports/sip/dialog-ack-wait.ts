import type { SipResponse } from './message.js';
import type { ServerTransaction } from './server-transactions.js';
import {
  transactionTimeoutMs,
  type SipTimerConfig,
  type TimerHandle,
  type TimerScheduler,
} from './timers.js';

/**
 * A UAS 2xx waiting for its ACK (§13.3.1.4): over UDP the 2xx is resent at T1, 2·T1, … capped
 * at T2; over any transport, no ACK by 64·T1 calls `onGiveUp` (the dialog layer sends a BYE).
 */
export class DialogAckWait {
  private retransmit: TimerHandle | undefined;
  private readonly giveUp: TimerHandle;
  private done = false;

  constructor(
    /** The CSeq number of the INVITE the 2xx answers; its ACK carries the same. */
    readonly seq: number,
    transaction: ServerTransaction,
    ok: SipResponse,
    reliable: boolean,
    private readonly scheduler: TimerScheduler,
    timers: SipTimerConfig,
    onGiveUp: () => void,
  ) {
    this.giveUp = scheduler.set(transactionTimeoutMs(timers), () => {
      this.stop();
      onGiveUp();
    });
    if (reliable) {
      return;
    }
    let intervalMs = timers.t1Ms;
    const resend = (): void => {
      // The transaction's Accepted state (RFC 6026) passes 2xx retransmissions through.
      transaction.respond(ok);
      intervalMs = Math.min(2 * intervalMs, timers.t2Ms);
      this.retransmit = scheduler.set(intervalMs, resend);
    };
    this.retransmit = scheduler.set(intervalMs, resend);
  }

  stop(): void {
    if (this.done) {
      return;
    }
    this.done = true;
    if (this.retransmit !== undefined) {
      this.scheduler.clear(this.retransmit);
    }
    this.scheduler.clear(this.giveUp);
  }
}
