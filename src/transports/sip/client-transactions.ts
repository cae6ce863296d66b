import { SipHeaders } from './headers.js';
import type { SipRequest, SipResponse } from './message.js';
import { getCSeq } from './message.js';
import { transactionTimeoutMs } from './timers.js';
import { TransactionBase, type TransactionContext } from './transaction-base.js';

/** The transaction user's side of a client transaction. */
export interface ClientTransactionUser {
  /** Every response the TU should see: provisionals, the final one, and 2xx retransmissions. */
  onResponse(response: SipResponse): void;
  /** Timer B or F fired: no final response came (the TU treats it as a 408). */
  onTimeout(): void;
  onTransportError(error: Error): void;
}

export type InviteClientState = 'calling' | 'proceeding' | 'completed' | 'accepted';

/**
 * The INVITE client transaction (RFC 3261 §17.1.1, with the Accepted state of RFC 6026):
 * timer A retransmits over UDP (T1, doubling), timer B gives up after 64·T1, a non-2xx final
 * response is ACKed here and timer D absorbs its retransmissions; a 2xx goes to the TU (which
 * ACKs it end to end), and so do its retransmissions until timer M.
 */
export class InviteClientTransaction extends TransactionBase<InviteClientState> {
  private intervalMs: number;
  private ack: SipRequest | undefined;

  constructor(
    key: string,
    context: TransactionContext,
    readonly request: SipRequest,
    private readonly user: ClientTransactionUser,
  ) {
    super(key, context, 'calling');
    this.intervalMs = context.timers.t1Ms;
  }

  start(): void {
    this.transmit(this.request);
    if (!this.context.reliable) {
      this.startTimer('A', this.intervalMs, () => this.retransmit());
    }
    this.startTimer('B', transactionTimeoutMs(this.context.timers), () => {
      this.terminate();
      this.user.onTimeout();
    });
  }

  private retransmit(): void {
    if (this.currentState !== 'calling') {
      return;
    }
    this.transmit(this.request);
    this.intervalMs *= 2;
    this.startTimer('A', this.intervalMs, () => this.retransmit());
  }

  receiveResponse(response: SipResponse): void {
    if (this.terminated) {
      return;
    }
    const state = this.currentState;
    if (response.status < 200) {
      if (state === 'calling' || state === 'proceeding') {
        this.currentState = 'proceeding';
        this.stopTimer('A');
        this.stopTimer('B');
        this.user.onResponse(response);
      }
      return;
    }
    if (response.status < 300) {
      if (state === 'calling' || state === 'proceeding') {
        this.currentState = 'accepted';
        this.stopTimer('A');
        this.stopTimer('B');
        this.startTimer('M', transactionTimeoutMs(this.context.timers), () => this.terminate());
        this.user.onResponse(response);
      } else if (state === 'accepted') {
        this.user.onResponse(response);
      }
      return;
    }
    if (state === 'calling' || state === 'proceeding') {
      this.currentState = 'completed';
      this.stopTimer('A');
      this.stopTimer('B');
      this.ack = buildNonSuccessAck(this.request, response);
      this.transmit(this.ack);
      this.user.onResponse(response);
      this.startOrTerminate('D', this.context.timers.timerDMs);
    } else if (state === 'completed' && this.ack !== undefined) {
      // A retransmitted final response: our ACK was lost.
      this.transmit(this.ack);
    }
  }

  transportError(error: Error): void {
    if (!this.terminated) {
      this.terminate();
      this.user.onTransportError(error);
    }
  }
}

/**
 * The ACK for a non-2xx final response (§17.1.1.3): same Request-URI, Call-ID, From, CSeq
 * number and top Via as the INVITE, the response's To (with its tag), the INVITE's Route set.
 */
export function buildNonSuccessAck(invite: SipRequest, response: SipResponse): SipRequest {
  const headers = new SipHeaders();
  headers.append('Via', invite.headers.getAll('Via')[0]!);
  for (const route of invite.headers.getAll('Route')) {
    headers.append('Route', route);
  }
  headers.append('Max-Forwards', '70');
  headers.append('From', invite.headers.get('From')!);
  headers.append('To', response.headers.get('To')!);
  headers.append('Call-ID', invite.headers.get('Call-ID')!);
  headers.append('CSeq', `${getCSeq(invite)!.seq} ACK`);
  return { kind: 'request', method: 'ACK', uri: invite.uri, headers, body: Buffer.alloc(0) };
}

export type NonInviteClientState = 'trying' | 'proceeding' | 'completed';

/**
 * The non-INVITE client transaction (§17.1.2): timer E retransmits over UDP (T1 doubling up
 * to T2, then every T2 once a provisional came), timer F gives up after 64·T1, timer K
 * absorbs response retransmissions for T4.
 */
export class NonInviteClientTransaction extends TransactionBase<NonInviteClientState> {
  private intervalMs: number;

  constructor(
    key: string,
    context: TransactionContext,
    readonly request: SipRequest,
    private readonly user: ClientTransactionUser,
  ) {
    super(key, context, 'trying');
    this.intervalMs = context.timers.t1Ms;
  }

  start(): void {
    this.transmit(this.request);
    if (!this.context.reliable) {
      this.startTimer('E', this.intervalMs, () => this.retransmit());
    }
    this.startTimer('F', transactionTimeoutMs(this.context.timers), () => {
      this.terminate();
      this.user.onTimeout();
    });
  }

  private retransmit(): void {
    this.transmit(this.request);
    const { t2Ms } = this.context.timers;
    this.intervalMs =
      this.currentState === 'proceeding' ? t2Ms : Math.min(2 * this.intervalMs, t2Ms);
    this.startTimer('E', this.intervalMs, () => this.retransmit());
  }

  receiveResponse(response: SipResponse): void {
    if (this.terminated || this.currentState === 'completed') {
      return;
    }
    if (response.status < 200) {
      this.currentState = 'proceeding';
      this.user.onResponse(response);
      return;
    }
    this.currentState = 'completed';
    this.stopTimer('E');
    this.stopTimer('F');
    this.user.onResponse(response);
    this.startOrTerminate('K', this.context.timers.t4Ms);
  }

  transportError(error: Error): void {
    if (!this.terminated) {
      this.terminate();
      this.user.onTransportError(error);
    }
  }
}

export type ClientTransaction = InviteClientTransaction | NonInviteClientTransaction;
