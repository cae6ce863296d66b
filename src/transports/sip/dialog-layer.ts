import { DialogAckWait } from './dialog-ack-wait.js';
import {
  DIALOG_ALLOW,
  addBody,
  allowsUpdate,
  dialogSuccess,
  sendInDialog,
} from './dialog-messages.js';
import { placeCall, type OutgoingInvite, type OutgoingInviteOptions } from './dialog-uac.js';
import { SipDialog, dialogKey, type SipDialogRequestOptions } from './dialog.js';
import {
  createResponse,
  getCSeq,
  getCallId,
  getFromTag,
  getToTag,
  type SipMessage,
  type SipRequest,
  type SipResponse,
} from './message.js';
import { newTag } from './name-addr.js';
import type { InviteServerTransaction, ServerTransaction } from './server-transactions.js';
import { DialogSessionTimers, type SessionTimedDialog } from './dialog-session-timers.js';
import type { SessionTimerPolicy } from './session-timer.js';
import {
  DEFAULT_SIP_TIMERS,
  SystemTimerScheduler,
  type SipTimerConfig,
  type TimerScheduler,
} from './timers.js';
import { SipTransactionLayer } from './transaction-layer.js';
import type { SipSource, SipTransport } from './transport.js';

export { DIALOG_ALLOW } from './dialog-messages.js';

export type DialogEndReason = 'remote-bye' | 'local-bye' | 'ack-timeout' | 'session-expired';

/** A new INVITE outside any dialog, waiting for the TU's answer. */
export interface IncomingInvite {
  readonly request: SipRequest;
  readonly transaction: InviteServerTransaction;
  readonly source: SipSource;
  /** The To tag every response to this INVITE carries. */
  readonly localTag: string;
}

export interface SipDialogLayerOptions {
  readonly transports: readonly SipTransport[];
  readonly timers?: SipTimerConfig;
  readonly scheduler?: TimerScheduler;
  readonly maxServerTransactions?: number;
  /** User part of our Contact. Default `parla`. */
  readonly contactUser?: string;
  /** Session timer policy (RFC 4028), or false to ignore Session-Expires. */
  readonly sessionTimer?: SessionTimerPolicy | false;
  /** A new INVITE: answer with provisional/accept/reject. */
  readonly onInvite: (invite: IncomingInvite) => void;
  /** An in-dialog request other than ACK and BYE: answer with `respond`. */
  readonly onDialogRequest: (
    dialog: SipDialog,
    request: SipRequest,
    transaction: ServerTransaction,
  ) => void;
  /** A request outside any dialog other than INVITE. Default: OPTIONS 200, others 405. */
  readonly onRequest?: (request: SipRequest, transaction: ServerTransaction) => void;
  /** The caller cancelled an INVITE not yet answered; the layer has answered it 487. */
  readonly onCancel?: (invite: IncomingInvite) => void;
  readonly onAck?: (dialog: SipDialog, ack: SipRequest) => void;
  readonly onDialogEnded?: (dialog: SipDialog, reason: DialogEndReason) => void;
}

interface DialogEntry extends SessionTimedDialog {
  /** A 2xx to an INVITE awaiting its ACK (§13.3.1.4). */
  pending?: DialogAckWait | undefined;
}

/**
 * The dialog layer (§12, §13.3.1.4, §15, RFC 4028) over SipTransactionLayer: creates UAS
 * dialogs from INVITE/2xx, retransmits each 2xx until its ACK (T1 doubling to T2; after 64·T1
 * a BYE ends the dialog), matches in-dialog requests (481 when no dialog matches, 500 when out
 * of order), builds and sends in-dialog requests, and runs session timers when the peer asks.
 */
export class SipDialogLayer {
  readonly transactions: SipTransactionLayer;
  private readonly timers: SipTimerConfig;
  private readonly scheduler: TimerScheduler;
  private readonly dialogs = new Map<string, DialogEntry>();
  private readonly pendingInvites = new Map<InviteServerTransaction, IncomingInvite>();
  private readonly sessionTimers: DialogSessionTimers;

  constructor(private readonly options: SipDialogLayerOptions) {
    this.timers = options.timers ?? DEFAULT_SIP_TIMERS;
    this.scheduler = options.scheduler ?? new SystemTimerScheduler();
    this.sessionTimers = new DialogSessionTimers({
      scheduler: this.scheduler,
      policy: options.sessionTimer,
      send: (dialog, method, request) => this.request(dialog, method, request),
      expire: (dialog) => void this.bye(dialog, 'session-expired'),
    });
    this.transactions = new SipTransactionLayer({
      transports: options.transports,
      timers: this.timers,
      scheduler: this.scheduler,
      ...(options.maxServerTransactions === undefined
        ? {}
        : { maxServerTransactions: options.maxServerTransactions }),
      onRequest: (request, transaction, source) => this.onRequest(request, transaction, source),
      onAck: (ack) => this.onAck(ack),
      onCancel: (transaction) => this.onCancel(transaction),
      onStrayResponse: (response) => this.onStrayResponse(response),
    });
  }

  get dialogCount(): number {
    return this.dialogs.size;
  }

  /**
   * Out-of-dialog requests (no To tag) for which this returns true are dropped before any
   * transaction exists, so they get no answer at all, not even 100 Trying (flood protection).
   */
  ignoreRequest: ((request: SipRequest, source: SipSource) => boolean) | undefined = undefined;

  /** Entry point for every parsed message a transport delivers. */
  receive(message: SipMessage, source: SipSource): void {
    if (
      message.kind === 'request' &&
      this.ignoreRequest !== undefined &&
      getToTag(message) === undefined &&
      this.ignoreRequest(message, source)
    ) {
      return;
    }
    this.transactions.receive(message, source);
  }

  find(callId: string, localTag: string, remoteTag: string): SipDialog | undefined {
    return this.dialogs.get(dialogKey(callId, localTag, remoteTag))?.dialog;
  }

  /** Sends a provisional response (180, 183 with early media SDP) to a pending INVITE. */
  provisional(invite: IncomingInvite, status: number, options: SipDialogRequestOptions = {}): void {
    const response = createResponse(invite.request, status, { toTag: invite.localTag });
    addBody(response, options);
    invite.transaction.respond(response);
  }

  /** Answers a pending INVITE with a final non-2xx (486, 488, 603…). */
  reject(invite: IncomingInvite, status: number, headers: [string, string][] = []): void {
    this.pendingInvites.delete(invite.transaction);
    const response = createResponse(invite.request, status, { toTag: invite.localTag });
    headers.forEach(([name, value]) => response.headers.append(name, value));
    invite.transaction.respond(response);
  }

  /**
   * Answers a pending INVITE with 200 (and the SDP answer in `options.body`) and creates the
   * dialog. Returns undefined (after answering 400 or 422) when it cannot be accepted.
   */
  accept(invite: IncomingInvite, options: SipDialogRequestOptions = {}): SipDialog | undefined {
    const { request, transaction, source } = invite;
    const decision = this.sessionTimers.negotiate(request);
    if (decision.kind === 'reject') {
      this.reject(invite, decision.status, decision.headers);
      return undefined;
    }
    const dialog = SipDialog.asUas(request, {
      localTag: invite.localTag,
      localContact: this.contactFor(source.transport),
      transport: source.transport,
    });
    if (dialog === undefined) {
      this.reject(invite, 400);
      return undefined;
    }
    this.pendingInvites.delete(transaction);
    const ok = dialogSuccess(request, dialog, options);
    for (const [name, value] of decision.kind === 'timer' ? decision.headers : []) {
      ok.headers.append(name, value);
    }
    const entry: DialogEntry = {
      dialog,
      peerAllowsUpdate: allowsUpdate(request),
      ...(options.body === undefined ? {} : { localSdp: options.body }),
    };
    this.dialogs.set(dialog.id, entry);
    transaction.respond(ok);
    this.awaitAck(entry, transaction, ok, getCSeq(request)!.seq);
    this.sessionTimers.startUas(entry, decision);
    return dialog;
  }

  /**
   * Answers an in-dialog request handed to onDialogRequest. A 2xx to a re-INVITE or UPDATE
   * carries our Contact and renewed session-timer terms; a 2xx to a re-INVITE is retransmitted
   * until its ACK.
   */
  respond(
    dialog: SipDialog,
    request: SipRequest,
    transaction: ServerTransaction,
    status: number,
    options: SipDialogRequestOptions = {},
  ): void {
    const entry = this.dialogs.get(dialog.id);
    const refresh = request.method === 'INVITE' || request.method === 'UPDATE';
    if (status < 200 || status >= 300 || !refresh || entry === undefined) {
      const response = createResponse(request, status);
      addBody(response, options);
      transaction.respond(response);
      return;
    }
    const ok = dialogSuccess(request, dialog, options);
    if (options.body !== undefined) {
      entry.localSdp = options.body;
    }
    this.sessionTimers.onPeerRefresh(entry, request, ok);
    transaction.respond(ok);
    if (request.method === 'INVITE') {
      this.awaitAck(entry, transaction, ok, getCSeq(request)!.seq);
    }
  }

  /**
   * Sends an in-dialog request (BYE, re-INVITE, INFO, REFER, OPTIONS, UPDATE) and resolves
   * with the final response: a synthetic 408 on timeout, 503 on a transport error. A 2xx to
   * a re-INVITE is ACKed; a 481 or 408 ends the dialog (§12.2.1.2).
   */
  request(
    dialog: SipDialog,
    method: string,
    options: SipDialogRequestOptions = {},
  ): Promise<SipResponse> {
    return sendInDialog(this.transactions, dialog, method, options, () =>
      this.end(dialog, method === 'BYE' ? 'local-bye' : 'remote-bye'),
    );
  }

  /**
   * Places a call (§13.2): sends an INVITE to `options.target` and resolves with the dialog
   * its first 2xx creates (ACKed here, and re-ACKed on 2xx retransmissions), or the failure.
   * A 2xx from another fork is ACKed and then ended with a BYE (§13.2.2.4). `onProgress` sees
   * the provisional responses (180, 183 with early media). The INVITE asks for our session
   * timer terms unless `options.sessionTimer` names others; the 2xx's terms start the timer.
   */
  invite(
    options: OutgoingInviteOptions,
    onProgress?: (response: SipResponse) => void,
  ): OutgoingInvite {
    const transport = options.target.transport;
    const sessionTimer = options.sessionTimer ?? this.sessionTimers.uacTerms();
    const register = (dialog: SipDialog, response: SipResponse): void => {
      const entry: DialogEntry = { dialog, peerAllowsUpdate: allowsUpdate(response) };
      if (options.body !== undefined) {
        entry.localSdp = options.body;
      }
      this.dialogs.set(dialog.id, entry);
      this.sessionTimers.startUac(entry, response);
    };
    return placeCall(
      {
        transactions: this.transactions,
        contact: this.contactFor(transport),
        callIdHost:
          this.options.transports.find((t) => t.name === transport)?.sentBy.host ?? 'parla.invalid',
        register,
      },
      { ...options, ...(sessionTimer !== undefined && { sessionTimer }) },
      onProgress,
    );
  }

  /** Ends the dialog with a BYE (idempotent); resolves with the BYE's final response. */
  async bye(
    dialog: SipDialog,
    reason: DialogEndReason = 'local-bye',
  ): Promise<SipResponse | undefined> {
    if (dialog.state === 'terminated' || !this.dialogs.has(dialog.id)) {
      return undefined;
    }
    const response = this.request(dialog, 'BYE');
    this.end(dialog, reason);
    return response;
  }

  close(): void {
    for (const entry of this.dialogs.values()) {
      this.stopTimers(entry);
    }
    this.dialogs.clear();
    this.transactions.close();
  }

  private onRequest(request: SipRequest, transaction: ServerTransaction, source: SipSource): void {
    const toTag = getToTag(request);
    if (toTag !== undefined) {
      this.onInDialogRequest(request, transaction, toTag);
      return;
    }
    if (request.method === 'INVITE') {
      const invite: IncomingInvite = {
        request,
        transaction: transaction as InviteServerTransaction,
        source,
        localTag: newTag(),
      };
      this.pendingInvites.set(invite.transaction, invite);
      this.options.onInvite(invite);
      return;
    }
    if (this.options.onRequest !== undefined) {
      this.options.onRequest(request, transaction);
      return;
    }
    const response = createResponse(request, request.method === 'OPTIONS' ? 200 : 405, {
      toTag: newTag(),
    });
    response.headers.append('Allow', DIALOG_ALLOW).append('Supported', 'timer');
    if (request.method === 'OPTIONS') {
      response.headers.append('Accept', 'application/sdp');
    }
    transaction.respond(response);
  }

  private onInDialogRequest(
    request: SipRequest,
    transaction: ServerTransaction,
    toTag: string,
  ): void {
    const entry = this.dialogs.get(
      dialogKey(getCallId(request)!, toTag, getFromTag(request) ?? ''),
    );
    if (entry === undefined) {
      transaction.respond(createResponse(request, 481));
      return;
    }
    const { dialog } = entry;
    if (dialog.receiveRequest(request) === 'out-of-order') {
      transaction.respond(createResponse(request, 500, { reason: 'CSeq Out Of Order' }));
      return;
    }
    if (request.method === 'BYE') {
      transaction.respond(createResponse(request, 200));
      this.end(dialog, 'remote-bye');
      return;
    }
    if (request.method === 'INVITE' && entry.pending !== undefined) {
      // §14.2: a re-INVITE while our 2xx still waits for its ACK.
      const response = createResponse(request, 491);
      transaction.respond(response);
      return;
    }
    this.options.onDialogRequest(dialog, request, transaction);
  }

  private onAck(ack: SipRequest): void {
    const toTag = getToTag(ack);
    const entry =
      toTag === undefined
        ? undefined
        : this.dialogs.get(dialogKey(getCallId(ack)!, toTag, getFromTag(ack) ?? ''));
    if (entry === undefined) {
      return; // an ACK for nothing we know: dropped (§17.2.3 has no answer for it)
    }
    if (entry.pending !== undefined && getCSeq(ack)?.seq === entry.pending.seq) {
      entry.pending?.stop();
      entry.pending = undefined;
    }
    this.options.onAck?.(entry.dialog, ack);
  }

  /** A 2xx retransmitted after the INVITE transaction ended: ACK it again (§13.2.2.4). */
  private onStrayResponse(response: SipResponse): void {
    const cseq = getCSeq(response);
    const toTag = getToTag(response);
    const fromTag = getFromTag(response);
    if (cseq?.method !== 'INVITE' || response.status >= 300 || toTag === undefined) {
      return;
    }
    const dialog = this.dialogs.get(dialogKey(getCallId(response)!, fromTag ?? '', toTag))?.dialog;
    const target = dialog?.nextHop();
    if (dialog?.role === 'uac' && target !== undefined) {
      this.transactions.sendStateless(dialog.createAck(cseq.seq), target);
    }
  }

  private onCancel(transaction: InviteServerTransaction): void {
    const invite = this.pendingInvites.get(transaction);
    this.pendingInvites.delete(transaction);
    transaction.respond(
      createResponse(transaction.request, 487, { toTag: invite?.localTag ?? newTag() }),
    );
    if (invite !== undefined) {
      this.options.onCancel?.(invite);
    }
  }

  /** §13.3.1.4: resend the 2xx at T1, 2·T1… capped at T2 until the ACK; BYE after 64·T1. */
  private awaitAck(
    entry: DialogEntry,
    transaction: ServerTransaction,
    ok: SipResponse,
    seq: number,
  ): void {
    entry.pending?.stop();
    const transport = this.options.transports.find((t) => t.name === entry.dialog.transport);
    entry.pending = new DialogAckWait(
      seq,
      transaction,
      ok,
      transport?.reliable === true,
      this.scheduler,
      this.timers,
      () => {
        entry.pending = undefined;
        void this.bye(entry.dialog, 'ack-timeout');
      },
    );
  }

  private end(dialog: SipDialog, reason: DialogEndReason): void {
    const entry = this.dialogs.get(dialog.id);
    if (entry === undefined) {
      return;
    }
    this.stopTimers(entry);
    this.dialogs.delete(dialog.id);
    dialog.state = 'terminated';
    this.options.onDialogEnded?.(dialog, reason);
  }

  private stopTimers(entry: DialogEntry): void {
    entry.pending?.stop();
    entry.pending = undefined;
    entry.sessionTimer?.stop();
  }

  private contactFor(transportName: SipSource['transport']): string {
    const transport = this.options.transports.find((t) => t.name === transportName)!;
    const { host, port } = transport.sentBy;
    const param = transportName === 'TCP' ? ';transport=tcp' : '';
    return `<sip:${this.options.contactUser ?? 'parla'}@${host}:${port}${param}>`;
  }
}
