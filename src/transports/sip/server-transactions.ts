import { createResponse, type SipRequest, type SipResponse } from './message.js';
import { transactionTimeoutMs } from './timers.js';
import { TransactionBase, type TransactionContext } from './transaction-base.js';

/** The transaction user's side of a server transaction. */
export interface ServerTransactionEvents {
  /** INVITE: timer H fired before an ACK came for a non-2xx final response. */
  onTimeout?(): void;
  onTransportError?(error: Error): void;
}

export type InviteServerState = 'proceeding' | 'completed' | 'confirmed' | 'accepted';

/**
 * The INVITE server transaction (§17.2.1, with RFC 6026's Accepted state): answers 100 Trying
 * at once, resends the last provisional on a retransmitted INVITE, retransmits a non-2xx final
 * response on timer G (T1 doubling to T2) until the ACK or timer H (64·T1), then absorbs ACKs
 * for timer I (T4). After a 2xx it absorbs INVITE retransmissions until timer L (64·T1); the
 * TU retransmits the 2xx itself and receives its ACK outside the transaction.
 */
export class InviteServerTransaction extends TransactionBase<InviteServerState> {
  private lastResponse: SipResponse | undefined;
  private intervalMs: number;
  events: ServerTransactionEvents = {};

  constructor(
    key: string,
    context: TransactionContext,
    readonly request: SipRequest,
  ) {
    super(key, context, 'proceeding');
    this.intervalMs = context.timers.t1Ms;
  }

  /** Sends 100 Trying (§17.2.1: unless the TU answers within 200 ms; we do not wait). */
  start(): void {
    this.respond(createResponse(this.request, 100));
  }

  respond(response: SipResponse): void {
    if (this.terminated) {
      return;
    }
    const state = this.currentState;
    if (state === 'accepted' && response.status >= 200 && response.status < 300) {
      // RFC 6026: the TU's 2xx retransmissions pass through the Accepted state.
      this.transmit(response);
      return;
    }
    if (state !== 'proceeding') {
      return;
    }
    this.lastResponse = response;
    this.transmit(response);
    if (response.status < 200) {
      return;
    }
    if (response.status < 300) {
      this.currentState = 'accepted';
      this.startTimer('L', transactionTimeoutMs(this.context.timers), () => this.terminate());
      return;
    }
    this.currentState = 'completed';
    if (!this.context.reliable) {
      this.startTimer('G', this.intervalMs, () => this.retransmitFinal());
    }
    this.startTimer('H', transactionTimeoutMs(this.context.timers), () => {
      this.terminate();
      this.events.onTimeout?.();
    });
  }

  private retransmitFinal(): void {
    if (this.currentState !== 'completed' || this.lastResponse === undefined) {
      return;
    }
    this.transmit(this.lastResponse);
    this.intervalMs = Math.min(2 * this.intervalMs, this.context.timers.t2Ms);
    this.startTimer('G', this.intervalMs, () => this.retransmitFinal());
  }

  /** A retransmitted INVITE or an ACK for a non-2xx response, matched to this transaction. */
  receiveRequest(request: SipRequest): void {
    if (this.terminated) {
      return;
    }
    const state = this.currentState;
    if (request.method === 'ACK') {
      if (state === 'completed') {
        this.currentState = 'confirmed';
        this.stopTimer('G');
        this.stopTimer('H');
        this.startOrTerminate('I', this.context.timers.t4Ms);
      }
      return;
    }
    if ((state === 'proceeding' || state === 'completed') && this.lastResponse !== undefined) {
      this.transmit(this.lastResponse);
    }
  }

  transportError(error: Error): void {
    if (!this.terminated) {
      this.terminate();
      this.events.onTransportError?.(error);
    }
  }
}

export type NonInviteServerState = 'trying' | 'proceeding' | 'completed';

/**
 * The non-INVITE server transaction (§17.2.2): retransmitted requests are absorbed in Trying
 * and answered with the last response afterwards; timer J (64·T1 over UDP) keeps the final
 * response around for retransmissions.
 */
export class NonInviteServerTransaction extends TransactionBase<NonInviteServerState> {
  private lastResponse: SipResponse | undefined;
  events: ServerTransactionEvents = {};

  constructor(
    key: string,
    context: TransactionContext,
    readonly request: SipRequest,
  ) {
    super(key, context, 'trying');
  }

  start(): void {}

  respond(response: SipResponse): void {
    if (this.terminated || this.currentState === 'completed') {
      return;
    }
    this.lastResponse = response;
    this.transmit(response);
    if (response.status < 200) {
      this.currentState = 'proceeding';
      return;
    }
    this.currentState = 'completed';
    this.startOrTerminate('J', transactionTimeoutMs(this.context.timers));
  }

  receiveRequest(_request: SipRequest): void {
    if (!this.terminated && this.currentState !== 'trying' && this.lastResponse !== undefined) {
      this.transmit(this.lastResponse);
    }
  }

  transportError(error: Error): void {
    if (!this.terminated) {
      this.terminate();
      this.events.onTransportError?.(error);
    }
  }
}

export type ServerTransaction = InviteServerTransaction | NonInviteServerTransaction;
