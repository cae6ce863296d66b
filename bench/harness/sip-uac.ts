import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { SipHeaders } from '../../src/transports/sip/headers.js';
import { getCSeq, getCallId, type SipMessage } from '../../src/transports/sip/message.js';
import { parseSipMessage } from '../../src/transports/sip/parser.js';
import { serializeSipMessage } from '../../src/transports/sip/serializer.js';
import { HarnessError } from './caller-transport.js';

/**
 * A minimal SIP user agent client over UDP for the harness's SIP caller (RFC 3261): one INVITE
 * with an SDP offer (retransmitted on timer A until a response), provisional responses, the ACK
 * of the 2xx (again for each retransmitted 2xx), the ACK of a failure, a BYE (retransmitted on
 * timer E until its final response), and answers to the far side's BYE and other in-dialog
 * requests. No authentication, no Record-Route (Parla's inbound calls use none), no forking.
 */
export interface SipUacOptions {
  /** Parla's SIP address: an IPv4 literal and port. */
  serverHost: string;
  serverPort: number;
  /** The dialled number (Request-URI and To user). */
  number: string;
  /** The caller's number (From user): Parla stores it as the call's customer number. */
  fromUser: string;
  /** The address our socket binds to and advertises. Default 127.0.0.1. */
  localHost?: string;
  /** Called when the far side ends the dialog with a BYE. */
  onRemoteBye?: () => void;
}

const T1_MS = 500;
const T2_MS = 4000;
const INVITE_TIMEOUT_MS = 64 * T1_MS;
const BYE_TIMEOUT_MS = 8000;

interface Pending {
  method: string;
  resolve: (response: SipMessage & { kind: 'response' }) => void;
  /** Stops the timers and rejects (the caller gave up). */
  cancel: () => void;
}

export class SipUac {
  readonly #o: SipUacOptions;
  readonly #socket: Socket;
  readonly #localHost: string;
  readonly #callId = `${token(12)}@bench`;
  readonly #fromTag = token(8);
  #localPort = 0;
  #cseq = 0;
  #toHeader: string;
  #remoteTarget: string;
  #inviteCseq = 0;
  #ackFor2xx: Buffer | null = null;
  #pending: Pending | null = null;
  #established = false;
  #ended = false;

  private constructor(options: SipUacOptions, socket: Socket) {
    this.#o = options;
    this.#socket = socket;
    this.#localHost = options.localHost ?? '127.0.0.1';
    this.#remoteTarget = `sip:${options.number}@${options.serverHost}:${options.serverPort}`;
    this.#toHeader = `<${this.#remoteTarget}>`;
    socket.on('message', (data) => this.#receive(data));
    socket.on('error', () => undefined);
  }

  static async open(options: SipUacOptions): Promise<SipUac> {
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(options.serverHost)) {
      throw new HarnessError('ERR_BENCH_USAGE', 'the SIP server host must be an IPv4 address');
    }
    if (!/^\+?[0-9]{1,32}$/.test(options.number) || !/^\+?[0-9]{1,32}$/.test(options.fromUser)) {
      throw new HarnessError('ERR_BENCH_USAGE', 'SIP numbers must be digits with an optional +');
    }
    const socket = createSocket('udp4');
    const uac = new SipUac(options, socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, uac.#localHost, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    uac.#localPort = socket.address().port;
    return uac;
  }

  /** The SIP Call-ID of this call. */
  get callId(): string {
    return this.#callId;
  }

  /** Sends the INVITE and resolves with the 2xx's SDP answer once it is ACKed. */
  async invite(sdpOffer: string): Promise<string> {
    this.#inviteCseq = ++this.#cseq;
    const branch = newBranch();
    const request = this.#request('INVITE', this.#inviteCseq, branch, sdpOffer);
    const response = await this.#transact('INVITE', request, INVITE_TIMEOUT_MS, true);
    if (response.status >= 300) {
      // The ACK of a failure reuses the INVITE's branch and To (§17.1.1.3).
      this.#toHeader = response.headers.get('To') ?? this.#toHeader;
      this.#send(this.#request('ACK', this.#inviteCseq, branch));
      throw new HarnessError(
        'ERR_BENCH_CONNECT',
        `INVITE answered ${response.status} ${response.reason}`,
      );
    }
    this.#toHeader = response.headers.get('To') ?? this.#toHeader;
    const contact = /<([^>]+)>/.exec(response.headers.get('Contact') ?? '')?.[1];
    if (contact !== undefined && /^sips?:/i.test(contact)) {
      this.#remoteTarget = contact;
    }
    this.#ackFor2xx = this.#request('ACK', this.#inviteCseq, newBranch());
    this.#send(this.#ackFor2xx);
    this.#established = true;
    return response.body.toString('utf8');
  }

  /** Ends the dialog with a BYE (when it is up and not already ended) and closes the socket. */
  async close(): Promise<void> {
    if (this.#established && !this.#ended) {
      this.#ended = true;
      const request = this.#request('BYE', ++this.#cseq, newBranch());
      await this.#transact('BYE', request, BYE_TIMEOUT_MS, false).catch(() => undefined);
    }
    this.#ended = true;
    this.#pending?.cancel();
    await new Promise<void>((resolve) => {
      try {
        this.#socket.close(() => resolve());
      } catch {
        resolve();
      }
    });
  }

  /** Sends `request` until a final response (resolved) or `timeoutMs` (rejected). */
  #transact(
    method: string,
    request: Buffer,
    timeoutMs: number,
    stopOnProvisional: boolean,
  ): Promise<SipMessage & { kind: 'response' }> {
    return new Promise((resolve, reject) => {
      let intervalMs = T1_MS;
      let retransmit: NodeJS.Timeout | null = null;
      const schedule = (): void => {
        retransmit = setTimeout(() => {
          this.#send(request);
          intervalMs = method === 'INVITE' ? intervalMs * 2 : Math.min(intervalMs * 2, T2_MS);
          schedule();
        }, intervalMs);
      };
      const stop = (message: string): void => {
        clearTimeout(retransmit ?? undefined);
        clearTimeout(giveUp);
        this.#pending = null;
        reject(new HarnessError('ERR_BENCH_TIMEOUT', message));
      };
      const giveUp = setTimeout(() => stop(`no final answer to ${method}`), timeoutMs);
      this.#pending = {
        method,
        cancel: () => stop(`${method} given up: the call was closed`),
        resolve: (response) => {
          if (response.status < 200) {
            if (stopOnProvisional && retransmit !== null) {
              clearTimeout(retransmit);
              retransmit = null;
            }
            return;
          }
          clearTimeout(retransmit ?? undefined);
          clearTimeout(giveUp);
          this.#pending = null;
          resolve(response);
        },
      };
      this.#send(request);
      schedule();
    });
  }

  #receive(data: Buffer): void {
    const parsed = parseSipMessage(data);
    if (!parsed.ok || getCallId(parsed.message) !== this.#callId) {
      return;
    }
    const message = parsed.message;
    if (message.kind === 'response') {
      const cseq = getCSeq(message);
      if (this.#pending !== null && cseq?.method === this.#pending.method) {
        this.#pending.resolve(message);
      } else if (cseq?.method === 'INVITE' && message.status < 300 && this.#ackFor2xx !== null) {
        // A retransmitted 2xx: our ACK was lost.
        this.#send(this.#ackFor2xx);
      }
      return;
    }
    if (message.method === 'ACK') {
      return;
    }
    this.#answer(message);
    if (message.method === 'BYE' && !this.#ended) {
      this.#ended = true;
      this.#o.onRemoteBye?.();
    }
  }

  /** 200 to the far side's in-dialog requests (BYE, OPTIONS, INFO, NOTIFY…). */
  #answer(request: SipMessage & { kind: 'request' }): void {
    const headers = new SipHeaders();
    for (const via of request.headers.getAll('Via')) {
      headers.append('Via', via);
    }
    for (const name of ['From', 'To', 'Call-ID', 'CSeq']) {
      headers.append(name, request.headers.get(name) ?? '');
    }
    this.#send(
      serializeSipMessage({
        kind: 'response',
        status: 200,
        reason: 'OK',
        headers,
        body: Buffer.alloc(0),
      }),
    );
  }

  #request(method: string, cseq: number, branch: string, sdp?: string): Buffer {
    const local = `${this.#localHost}:${this.#localPort}`;
    const headers = new SipHeaders([
      ['Via', `SIP/2.0/UDP ${local};branch=${branch};rport`],
      ['Max-Forwards', '70'],
      ['From', `<sip:${this.#o.fromUser}@${this.#localHost}>;tag=${this.#fromTag}`],
      ['To', this.#toHeader],
      ['Call-ID', this.#callId],
      ['CSeq', `${cseq} ${method}`],
      ['Contact', `<sip:bench@${local}>`],
      ['User-Agent', 'parla-bench'],
    ]);
    if (sdp !== undefined) {
      headers.append('Content-Type', 'application/sdp');
    }
    const uri = method === 'INVITE' ? `sip:${this.#o.number}@${this.#o.serverHost}` : '';
    return serializeSipMessage({
      kind: 'request',
      method,
      uri: uri !== '' ? `${uri}:${this.#o.serverPort}` : this.#remoteTarget,
      headers,
      body: Buffer.from(sdp ?? '', 'utf8'),
    });
  }

  #send(bytes: Buffer): void {
    try {
      this.#socket.send(bytes, this.#o.serverPort, this.#o.serverHost);
    } catch {
      // The socket is closed: nothing more to send.
    }
  }
}

function token(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

function newBranch(): string {
  return `z9hG4bK${token(8)}`;
}
