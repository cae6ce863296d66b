/**
 * RFC 3261 timer values (§17, table 4). T1 is the round-trip estimate, T2 the cap on
 * retransmission intervals of non-INVITE requests and INVITE responses, T4 the time a message
 * may linger in the network. Timer D is "at least 32 s" over unreliable transports.
 */
export interface SipTimerConfig {
  readonly t1Ms: number;
  readonly t2Ms: number;
  readonly t4Ms: number;
  readonly timerDMs: number;
}

export const DEFAULT_SIP_TIMERS: SipTimerConfig = {
  t1Ms: 500,
  t2Ms: 4_000,
  t4Ms: 5_000,
  timerDMs: 32_000,
};

/** 64·T1: timers B, F, H, J and (RFC 6026) L and M. */
export function transactionTimeoutMs(timers: SipTimerConfig): number {
  return 64 * timers.t1Ms;
}

export type TimerHandle = { readonly id: number };

/** Where transactions schedule their timers: real time in production, a manual clock in tests. */
export interface TimerScheduler {
  set(delayMs: number, callback: () => void): TimerHandle;
  clear(handle: TimerHandle): void;
}

/** setTimeout-backed scheduler. */
export class SystemTimerScheduler implements TimerScheduler {
  private nextId = 1;
  private readonly timers = new Map<number, NodeJS.Timeout>();

  set(delayMs: number, callback: () => void): TimerHandle {
    const id = this.nextId++;
    const timer = setTimeout(() => {
      this.timers.delete(id);
      callback();
    }, delayMs);
    this.timers.set(id, timer);
    return { id };
  }

  clear(handle: TimerHandle): void {
    const timer = this.timers.get(handle.id);
    if (timer !== undefined) {
      clearTimeout(timer);
      this.timers.delete(handle.id);
    }
  }
}
