import { parseSdp, serializeSdp } from '../../../../src/transports/sip/sdp.js';
import { PCMA, PCMU, answerOffer } from '../../../../src/transports/sip/sdp-offer-answer.js';
import {
  SipDialogLayer,
  type IncomingInvite,
} from '../../../../src/transports/sip/dialog-layer.js';
import { SipUdpTransport } from '../../../../src/transports/sip/transport-udp.js';
import { RtpPortAllocator } from '../../../../src/transports/rtp/rtp-port-allocator.js';
import { RtpSession } from '../../../../src/transports/rtp/rtp-session.js';

/** What one call saw, recorded when it ends. */
export interface CallRecord {
  codec: string;
  audioFrames: number;
  framesPulled: number;
  packetsSent: number;
  digits: string[];
  endReason: string;
  latched: boolean;
}

/**
 * A tiny UAS on the dialog layer and RtpSession: answers each INVITE with an SDP answer on a
 * fresh RTP port, plays what it receives back to the caller (pulled from the jitter buffer
 * every 20 ms and sent again), counts the audio frames and DTMF digits, and records each call
 * when it ends.
 */
export class RtpTestUas {
  readonly calls: CallRecord[] = [];
  private readonly waiters: (() => void)[] = [];
  private constructor(
    readonly transport: SipUdpTransport,
    readonly layer: SipDialogLayer,
    private readonly allocator: RtpPortAllocator,
  ) {}

  static async start(minPort: number): Promise<RtpTestUas> {
    const ref: { uas?: RtpTestUas } = {};
    const transport = await SipUdpTransport.listen({
      host: '127.0.0.1',
      port: 0,
      onMessage: (message, source) => ref.uas?.layer.receive(message, source),
    });
    const allocator = new RtpPortAllocator({ minPort, maxPort: minPort + 99 });
    const sessions = new Map<string, { end: (reason: string) => void }>();
    const layer = new SipDialogLayer({
      transports: [transport],
      onInvite: (invite) => void ref.uas!.answer(invite, sessions),
      onDialogRequest: (dialog, request, transaction) =>
        layer.respond(dialog, request, transaction, request.method === 'INVITE' ? 488 : 200),
      onDialogEnded: (dialog, reason) => sessions.get(dialog.id)?.end(reason),
    });
    ref.uas = new RtpTestUas(transport, layer, allocator);
    return ref.uas;
  }

  get port(): number {
    return this.transport.sentBy.port;
  }

  /** Resolves once `count` calls have ended. */
  waitForCalls(count: number): Promise<void> {
    return new Promise((resolve) => {
      const check = (): void => {
        if (this.calls.length >= count) {
          resolve();
        } else {
          this.waiters.push(check);
        }
      };
      check();
    });
  }

  private async answer(
    invite: IncomingInvite,
    sessions: Map<string, { end: (reason: string) => void }>,
  ): Promise<void> {
    const offer = parseSdp(invite.request.body.toString('utf8'));
    const local = {
      address: '127.0.0.1',
      codecs: [PCMU, PCMA],
      telephoneEvent: true,
      ptimeMs: 20,
      sessionId: '1',
      sessionVersion: 1,
    };
    const probe = offer.ok ? answerOffer(offer.session, { ...local, port: 9 }) : undefined;
    if (probe === undefined || !probe.ok || !offer.ok) {
      this.layer.reject(invite, 488);
      return;
    }
    const { negotiated } = probe;
    const digits: string[] = [];
    const session = await RtpSession.open({
      allocator: this.allocator,
      bindAddress: '127.0.0.1',
      remote: { address: negotiated.remoteAddress, port: negotiated.remotePort },
      codec: negotiated.codec.encoding === 'PCMA' ? 'PCMA' : 'PCMU',
      payloadType: negotiated.payloadType,
      ...(negotiated.telephoneEventPayloadType === undefined
        ? {}
        : { telephoneEventPayloadType: negotiated.telephoneEventPayloadType }),
      onDtmf: (event) => digits.push(event.digit),
    });
    const result = answerOffer(offer.session, { ...local, port: session.localPort });
    if (!result.ok) {
      await session.close();
      this.layer.reject(invite, 488);
      return;
    }
    this.layer.provisional(invite, 180);
    const dialog = this.layer.accept(invite, { body: Buffer.from(serializeSdp(result.answer!)) });
    if (dialog === undefined) {
      await session.close();
      return;
    }
    let audioFrames = 0;
    // Echo: every 20 ms, play back what the jitter buffer yields.
    const ticker = setInterval(() => {
      const frame = session.pullFrame();
      if (frame.kind === 'audio') {
        audioFrames++;
      }
      session.sendFrame(frame.samples);
    }, 20);
    sessions.set(dialog.id, {
      end: (reason) => {
        clearInterval(ticker);
        sessions.delete(dialog.id);
        void session.close(reason).then(() => {
          this.calls.push({
            codec: negotiated.codec.encoding,
            audioFrames,
            framesPulled: session.stats.framesPulled,
            packetsSent: session.stats.packetsSent,
            digits,
            endReason: reason,
            latched: session.isLatched,
          });
          this.waiters.splice(0).forEach((waiter) => waiter());
        });
      },
    });
  }

  async close(): Promise<void> {
    this.layer.close();
    await this.transport.close();
  }
}
