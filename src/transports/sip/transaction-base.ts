import type { SipMessage } from './message.js';
import type { SipTimerConfig, TimerHandle, TimerScheduler } from './timers.js';

/** What every transaction is given by the transaction layer. */
export interface TransactionContext {
  readonly timers: SipTimerConfig;
  readonly scheduler: TimerScheduler;
  /** TCP: no retransmissions, and timers D, I, J, K are zero. */
  readonly reliable: boolean;
  /** Hands a message to the transport towards the transaction's peer. */
  readonly send: (message: SipMessage) => void;
  /** Called once, when the transaction reaches Terminated, so the layer can forget it. */
  readonly onTerminated: () => void;
}

/** RFC 3261 timer names, so a trace reads like the RFC's state diagrams. */
export type TimerName = 'A' | 'B' | 'D' | 'E' | 'F' | 'K' | 'G' | 'H' | 'I' | 'J' | 'L' | 'M';

/** Timer bookkeeping and the Terminated state shared by the four transaction machines. */
export abstract class TransactionBase<State extends string> {
  protected currentState: State;
  private readonly running = new Map<TimerName, TimerHandle>();
  private ended = false;

  constructor(
    readonly key: string,
    protected readonly context: TransactionContext,
    initial: State,
  ) {
    this.currentState = initial;
  }

  get state(): State | 'terminated' {
    return this.ended ? 'terminated' : this.currentState;
  }

  get terminated(): boolean {
    return this.ended;
  }

  /** The names of the timers now running (for tests and traces). */
  get runningTimers(): TimerName[] {
    return [...this.running.keys()].sort();
  }

  protected startTimer(name: TimerName, delayMs: number, fire: () => void): void {
    this.stopTimer(name);
    const handle = this.context.scheduler.set(delayMs, () => {
      this.running.delete(name);
      if (!this.ended) {
        fire();
      }
    });
    this.running.set(name, handle);
  }

  protected stopTimer(name: TimerName): void {
    const handle = this.running.get(name);
    if (handle !== undefined) {
      this.context.scheduler.clear(handle);
      this.running.delete(name);
    }
  }

  /** A timer that is zero on reliable transports ends the state at once instead of waiting. */
  protected startOrTerminate(name: TimerName, unreliableDelayMs: number): void {
    if (this.context.reliable || unreliableDelayMs <= 0) {
      this.terminate();
    } else {
      this.startTimer(name, unreliableDelayMs, () => this.terminate());
    }
  }

  protected transmit(message: SipMessage): void {
    this.context.send(message);
  }

  /** Stops every timer and enters Terminated; safe to call more than once. */
  terminate(): void {
    if (this.ended) {
      return;
    }
    this.ended = true;
    for (const handle of this.running.values()) {
      this.context.scheduler.clear(handle);
    }
    this.running.clear();
    this.context.onTerminated();
  }
}
