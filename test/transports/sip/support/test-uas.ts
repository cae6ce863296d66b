import {
  createResponse,
  getCSeq,
  getCallId,
  type SipRequest,
  type SipResponse,
} from '../../../../src/transports/sip/message.js';
import { newTag } from '../../../../src/transports/sip/name-addr.js';
import { PCMA, PCMU, answerOffer } from '../../../../src/transports/sip/sdp-offer-answer.js';
import { parseSdp, serializeSdp } from '../../../../src/transports/sip/sdp.js';
import type { ServerTransaction } from '../../../../src/transports/sip/server-transactions.js';
import { DEFAULT_SIP_TIMERS } from '../../../../src/transports/sip/timers.js';
import { SipTransactionLayer } from '../../../../src/transports/sip/transaction-layer.js';
import type { SipSource, SipTransport } from '../../../../src/transports/sip/transport.js';
import { SipTcpTransport } from '../../../../src/transports/sip/transport-tcp.js';
import { SipUdpTransport } from '../../../../src/transports/sip/transport-udp.js';

const ALLOW = 'INVITE, ACK, CANCEL, BYE, OPTIONS';

/**
 * A minimal user agent server on the parser, transports and transaction layer, standing in for
 * the dialog and call layers still to come: OPTIONS → 200; INVITE to `busy@` → 486, to
 * `ring@` → 180 and nothing more (until a CANCEL); other
 * INVITEs → 180 then 200 with an SDP answer, the 2xx retransmitted until its ACK (§13.3.1.4);
 * BYE in a known dialog → 200, otherwise 481.
 */
export class TestUas {
  readonly log: string[] = [];
  private readonly dialogs = new Map<string, { stopRetransmit: () => void }>();
  private layer!: SipTransactionLayer;
  private transports: SipTransport[] = [];
  udp!: SipUdpTransport;
  tcp!: SipTcpTransport;

  static async start(): Promise<TestUas> {
    const uas = new TestUas();
    const onMessage = (message: Parameters<SipTransactionLayer['receive']>[0], source: SipSource) =>
      uas.layer.receive(message, source);
    uas.udp = await SipUdpTransport.listen({ host: '127.0.0.1', port: 0, onMessage });
    uas.tcp = await SipTcpTransport.listen({ host: '127.0.0.1', port: 0, onMessage });
    uas.transports = [uas.udp, uas.tcp];
    uas.layer = new SipTransactionLayer({
      transports: uas.transports,
      onRequest: (request, transaction, source) => uas.onRequest(request, transaction, source),
      onAck: (ack) => uas.onAck(ack),
    });
    return uas;
  }

  private onRequest(request: SipRequest, transaction: ServerTransaction, source: SipSource): void {
    this.log.push(`${source.transport} ${request.method}`);
    if (request.method === 'OPTIONS') {
      const ok = createResponse(request, 200, { toTag: newTag() });
      ok.headers.append('Allow', ALLOW).append('Accept', 'application/sdp');
      transaction.respond(ok);
    } else if (request.method === 'INVITE') {
      this.onInvite(request, transaction, source);
    } else if (request.method === 'BYE') {
      const dialog = this.dialogs.get(getCallId(request)!);
      this.dialogs.delete(getCallId(request)!);
      dialog?.stopRetransmit();
      transaction.respond(createResponse(request, dialog === undefined ? 481 : 200));
    } else {
      const refused = createResponse(request, 405, { toTag: newTag() });
      refused.headers.append('Allow', ALLOW);
      transaction.respond(refused);
    }
  }

  private onInvite(request: SipRequest, transaction: ServerTransaction, source: SipSource): void {
    const toTag = newTag();
    if (request.uri.startsWith('sip:busy@')) {
      transaction.respond(createResponse(request, 486, { toTag }));
      return;
    }
    if (request.uri.startsWith('sip:ring@')) {
      // Rings until cancelled: the transaction layer answers the CANCEL and the INVITE (487).
      transaction.respond(createResponse(request, 180, { toTag }));
      return;
    }
    const offer = parseSdp(request.body.toString('utf8'));
    const result = offer.ok
      ? answerOffer(offer.session, {
          address: '127.0.0.1',
          port: 40000,
          codecs: [PCMU, PCMA],
          telephoneEvent: true,
          ptimeMs: 20,
          sessionId: '1',
          sessionVersion: 1,
        })
      : undefined;
    if (result === undefined || !result.ok) {
      transaction.respond(createResponse(request, 488, { toTag }));
      return;
    }
    this.log.push(`negotiated ${result.negotiated.codec.encoding}`);
    transaction.respond(createResponse(request, 180, { toTag }));
    const transport = this.transports.find((candidate) => candidate.name === source.transport)!;
    const ok: SipResponse = {
      ...createResponse(request, 200, { toTag }),
      body: Buffer.from(serializeSdp(result.answer!)),
    };
    const contactTransport = source.transport === 'TCP' ? ';transport=tcp' : '';
    ok.headers
      .append(
        'Contact',
        `<sip:parla@${transport.sentBy.host}:${transport.sentBy.port}${contactTransport}>`,
      )
      .append('Content-Type', 'application/sdp');
    transaction.respond(ok);
    const stopRetransmit = transport.reliable ? () => {} : this.retransmit2xx(transaction, ok);
    this.dialogs.set(getCallId(request)!, { stopRetransmit });
  }

  /** §13.3.1.4: the UAS core resends its 2xx every T1, doubling to T2, until the ACK. */
  private retransmit2xx(transaction: ServerTransaction, ok: SipResponse): () => void {
    let intervalMs = DEFAULT_SIP_TIMERS.t1Ms;
    let timer: NodeJS.Timeout | undefined;
    const resend = () => {
      transaction.respond(ok);
      intervalMs = Math.min(2 * intervalMs, DEFAULT_SIP_TIMERS.t2Ms);
      timer = setTimeout(resend, intervalMs);
    };
    timer = setTimeout(resend, intervalMs);
    return () => clearTimeout(timer);
  }

  private onAck(ack: SipRequest): void {
    this.log.push(`ACK ${getCSeq(ack)!.seq}`);
    this.dialogs.get(getCallId(ack)!)?.stopRetransmit();
  }

  async close(): Promise<void> {
    for (const dialog of this.dialogs.values()) {
      dialog.stopRetransmit();
    }
    this.layer.close();
    await Promise.all(this.transports.map((transport) => transport.close()));
  }
}
