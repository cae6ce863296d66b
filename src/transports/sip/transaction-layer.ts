import {
  InviteClientTransaction,
  NonInviteClientTransaction,
  type ClientTransaction,
  type ClientTransactionUser,
} from './client-transactions.js';
import { SipHeaders } from './headers.js';
import { newTag } from './name-addr.js';
import {
  createResponse,
  getCSeq,
  getCallId,
  getFromTag,
  getTopVia,
  type SipMessage,
  type SipRequest,
  type SipResponse,
} from './message.js';
import {
  InviteServerTransaction,
  NonInviteServerTransaction,
  type ServerTransaction,
} from './server-transactions.js';
import {
  DEFAULT_SIP_TIMERS,
  SystemTimerScheduler,
  type SipTimerConfig,
  type TimerScheduler,
} from './timers.js';
import type { TransactionContext } from './transaction-base.js';
import {
  responseTarget,
  type SipSource,
  type SipTransport,
  type SipTransportName,
} from './transport.js';
import { MAGIC_COOKIE, formatVia, newBranch, viaBranch, viaSentBy } from './via.js';

export interface SipRequestTarget {
  readonly transport: SipTransportName;
  readonly address: string;
  readonly port: number;
}

export interface SipTransactionLayerOptions {
  readonly transports: readonly SipTransport[];
  readonly timers?: SipTimerConfig;
  readonly scheduler?: TimerScheduler;
  /** Server transactions alive at once; requests beyond get a stateless 503. */
  readonly maxServerTransactions?: number;
  /** A new request (not ACK, not a retransmission): the TU answers through `transaction`. */
  readonly onRequest: (
    request: SipRequest,
    transaction: ServerTransaction,
    source: SipSource,
  ) => void;
  /** An ACK no server transaction absorbed: the ACK for a 2xx, which belongs to a dialog. */
  readonly onAck?: (ack: SipRequest, source: SipSource) => void;
  /**
   * A CANCEL matched a pending INVITE; the layer has answered the CANCEL with 200. Without
   * this callback the layer answers the INVITE with 487 itself (§9.2).
   */
  readonly onCancel?: (invite: InviteServerTransaction, cancel: SipRequest) => void;
  /** A response no client transaction matched (a 2xx retransmission after Accepted ends). */
  readonly onStrayResponse?: (response: SipResponse, source: SipSource) => void;
}

const DEFAULT_MAX_SERVER_TRANSACTIONS = 10_000;

/**
 * The transaction layer (§17): creates client and server transactions, matches incoming
 * messages to them by branch (§17.1.3, §17.2.3) and hands everything else to the TU.
 */
export class SipTransactionLayer {
  private readonly timers: SipTimerConfig;
  private readonly scheduler: TimerScheduler;
  private readonly transports = new Map<SipTransportName, SipTransport>();
  private readonly clients = new Map<string, ClientTransaction>();
  private readonly servers = new Map<string, ServerTransaction>();
  /** CANCELs asked for before any provisional response (§9.1): sent when one arrives. */
  private readonly pendingCancels = new Map<
    InviteClientTransaction,
    { target: SipRequestTarget; user?: ClientTransactionUser }
  >();

  constructor(private readonly options: SipTransactionLayerOptions) {
    this.timers = options.timers ?? DEFAULT_SIP_TIMERS;
    this.scheduler = options.scheduler ?? new SystemTimerScheduler();
    for (const transport of options.transports) {
      this.transports.set(transport.name, transport);
    }
  }

  get serverTransactionCount(): number {
    return this.servers.size;
  }

  get clientTransactionCount(): number {
    return this.clients.size;
  }

  /** Entry point for every parsed message a transport delivers. */
  receive(message: SipMessage, source: SipSource): void {
    if (message.kind === 'response') {
      const key = clientKeyOf(message);
      const transaction = key === undefined ? undefined : this.clients.get(key);
      if (transaction === undefined) {
        // §18.1.2: a response whose top Via we did not write is discarded.
        if (this.sentByUs(message)) {
          this.options.onStrayResponse?.(message, source);
        }
      } else {
        transaction.receiveResponse(message);
      }
      return;
    }
    const key = serverKeyOf(message);
    const existing = this.servers.get(key);
    if (message.method === 'ACK') {
      if (existing instanceof InviteServerTransaction && existing.state === 'completed') {
        existing.receiveRequest(message);
      } else if (!(existing instanceof InviteServerTransaction && existing.state === 'confirmed')) {
        this.options.onAck?.(message, source);
      }
      return;
    }
    if (existing !== undefined) {
      existing.receiveRequest(message);
      return;
    }
    const transport = this.transports.get(source.transport);
    if (transport === undefined) {
      return;
    }
    if (
      this.servers.size >= (this.options.maxServerTransactions ?? DEFAULT_MAX_SERVER_TRANSACTIONS)
    ) {
      const busy = createResponse(message, 503);
      busy.headers.append('Retry-After', '5');
      transport.send(busy, responseTarget(message, source));
      return;
    }
    const transaction = this.createServer(key, message, source, transport);
    if (message.method === 'CANCEL') {
      this.handleCancel(message, transaction);
      return;
    }
    this.options.onRequest(message, transaction, source);
  }

  private createServer(
    key: string,
    request: SipRequest,
    source: SipSource,
    transport: SipTransport,
  ): ServerTransaction {
    const context: TransactionContext = {
      timers: this.timers,
      scheduler: this.scheduler,
      reliable: transport.reliable,
      send: (message) => {
        transport.send(message, responseTarget(request, source), (error) =>
          transaction.transportError(error),
        );
      },
      onTerminated: () => {
        if (this.servers.get(key) === transaction) {
          this.servers.delete(key);
        }
      },
    };
    const transaction: ServerTransaction =
      request.method === 'INVITE'
        ? new InviteServerTransaction(key, context, request)
        : new NonInviteServerTransaction(key, context, request);
    this.servers.set(key, transaction);
    transaction.start();
    return transaction;
  }

  /** §9.2: 200 to a CANCEL that matches a pending INVITE, 481 otherwise. */
  private handleCancel(cancel: SipRequest, transaction: ServerTransaction): void {
    const inviteKey = serverKeyOf(cancel, 'INVITE');
    const invite = this.servers.get(inviteKey);
    if (!(invite instanceof InviteServerTransaction)) {
      transaction.respond(createResponse(cancel, 481));
      return;
    }
    transaction.respond(createResponse(cancel, 200));
    if (invite.state !== 'proceeding') {
      return;
    }
    if (this.options.onCancel !== undefined) {
      this.options.onCancel(invite, cancel);
    } else {
      invite.respond(createResponse(invite.request, 487, { toTag: newTag() }));
    }
  }

  /**
   * Sends a request (not ACK) in a new client transaction: adds our Via on top with a fresh
   * branch and `rport`, then runs the INVITE or non-INVITE machine.
   */
  sendRequest(
    request: SipRequest,
    target: SipRequestTarget,
    user: ClientTransactionUser,
  ): ClientTransaction {
    if (request.method === 'ACK' || request.method === 'CANCEL') {
      throw new Error(`${request.method} is sent with sendStateless or cancel`);
    }
    const transport = this.transportFor(target);
    request.headers.prepend('Via', this.ourVia(transport, newBranch()));
    return this.startClient(request, target, transport, user);
  }

  /** Sends a request outside any transaction (the ACK for a 2xx), with a fresh Via. */
  sendStateless(
    request: SipRequest,
    target: SipRequestTarget,
    onError?: (error: Error) => void,
  ): void {
    const transport = this.transportFor(target);
    request.headers.prepend('Via', this.ourVia(transport, newBranch()));
    transport.send(request, target, onError);
  }

  /**
   * Cancels a pending INVITE (§9.1): a CANCEL with the INVITE's top Via, Request-URI, Call-ID,
   * From, To, CSeq number and Route set. Before any provisional response the CANCEL waits for
   * one; after a final response there is nothing to cancel.
   */
  cancel(invite: ClientTransaction, target: SipRequestTarget, user?: ClientTransactionUser): void {
    if (!(invite instanceof InviteClientTransaction)) {
      throw new Error('only an INVITE can be cancelled');
    }
    if (invite.state === 'calling') {
      this.pendingCancels.set(invite, { target, ...(user !== undefined && { user }) });
      return;
    }
    if (invite.state !== 'proceeding') {
      return;
    }
    const source = invite.request;
    const headers = new SipHeaders();
    headers.append('Via', source.headers.getAll('Via')[0]!);
    for (const route of source.headers.getAll('Route')) {
      headers.append('Route', route);
    }
    headers.append('Max-Forwards', '70');
    for (const name of ['From', 'To', 'Call-ID']) {
      headers.append(name, source.headers.get(name)!);
    }
    headers.append('CSeq', `${getCSeq(source)!.seq} CANCEL`);
    const cancel: SipRequest = {
      kind: 'request',
      method: 'CANCEL',
      uri: source.uri,
      headers,
      body: Buffer.alloc(0),
    };
    this.startClient(cancel, target, this.transportFor(target), user ?? IGNORE_RESPONSES);
  }

  private startClient(
    request: SipRequest,
    target: SipRequestTarget,
    transport: SipTransport,
    user: ClientTransactionUser,
  ): ClientTransaction {
    const key = clientKeyOf(request)!;
    let transaction: ClientTransaction;
    const context: TransactionContext = {
      timers: this.timers,
      scheduler: this.scheduler,
      reliable: transport.reliable,
      send: (message) =>
        transport.send(message, target, (error) => transaction.transportError(error)),
      onTerminated: () => {
        if (this.clients.get(key) === transaction) {
          this.clients.delete(key);
        }
        if (transaction instanceof InviteClientTransaction) {
          this.pendingCancels.delete(transaction);
        }
      },
    };
    if (request.method === 'INVITE') {
      const invite = new InviteClientTransaction(key, context, request, {
        ...bind(user),
        onResponse: (response) => {
          const pending = this.pendingCancels.get(invite);
          if (response.status < 200 && pending !== undefined) {
            this.pendingCancels.delete(invite);
            this.cancel(invite, pending.target, pending.user);
          }
          user.onResponse(response);
        },
      });
      transaction = invite;
    } else {
      transaction = new NonInviteClientTransaction(key, context, request, user);
    }
    this.clients.set(key, transaction);
    transaction.start();
    return transaction;
  }

  private sentByUs(response: SipResponse): boolean {
    const via = getTopVia(response);
    if (via === undefined) {
      return false;
    }
    const sentBy = viaSentBy(via);
    return [...this.transports.values()].some(
      (transport) => `${transport.sentBy.host.toLowerCase()}:${transport.sentBy.port}` === sentBy,
    );
  }

  private transportFor(target: SipRequestTarget): SipTransport {
    const transport = this.transports.get(target.transport);
    if (transport === undefined) {
      throw new Error(`no ${target.transport} transport`);
    }
    return transport;
  }

  private ourVia(transport: SipTransport, branch: string): string {
    const params = new Map<string, string | null>([
      ['branch', branch],
      ['rport', null],
    ]);
    return formatVia({
      transport: transport.name,
      host: transport.sentBy.host,
      port: transport.sentBy.port,
      params,
    });
  }

  /** Terminates every transaction and stops their timers. */
  close(): void {
    for (const transaction of [...this.clients.values(), ...this.servers.values()]) {
      transaction.terminate();
    }
  }
}

const IGNORE_RESPONSES: ClientTransactionUser = {
  onResponse: () => {},
  onTimeout: () => {},
  onTransportError: () => {},
};

function bind(user: ClientTransactionUser): ClientTransactionUser {
  return {
    onResponse: (response) => user.onResponse(response),
    onTimeout: () => user.onTimeout(),
    onTransportError: (error) => user.onTransportError(error),
  };
}

/** §17.1.3: the top Via branch and the CSeq method. */
export function clientKeyOf(message: SipMessage): string | undefined {
  const via = getTopVia(message);
  const branch = via === undefined ? undefined : viaBranch(via);
  const cseq = getCSeq(message);
  return branch === undefined || cseq === undefined ? undefined : `${branch}|${cseq.method}`;
}

/**
 * §17.2.3: branch, sent-by and method (ACK matches its INVITE) for RFC 3261 branches; for
 * RFC 2543 peers without the magic cookie, Call-ID, From tag, CSeq number and top Via.
 */
export function serverKeyOf(request: SipRequest, method?: string): string {
  const via = getTopVia(request)!;
  const branch = viaBranch(via);
  const matchMethod = method ?? (request.method === 'ACK' ? 'INVITE' : request.method);
  if (branch !== undefined && branch.startsWith(MAGIC_COOKIE)) {
    return `${branch}|${viaSentBy(via)}|${matchMethod}`;
  }
  const cseq = getCSeq(request)!;
  return `2543|${getCallId(request)}|${getFromTag(request) ?? ''}|${cseq.seq}|${viaSentBy(via)}|${matchMethod}`;
}
