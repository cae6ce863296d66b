import { createSocket, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import type { SipMessage } from './message.js';
import type { SipParseLimits } from './parser.js';
import { serializeSipMessage } from './serializer.js';
import { sipHost } from './syntax.js';
import {
  handleInbound,
  newTransportStats,
  type SipMessageHandler,
  type SipTarget,
  type SipTransport,
  type SipTransportStats,
} from './transport.js';

export interface SipUdpOptions {
  /** Address to bind, such as 0.0.0.0 or 127.0.0.1. */
  readonly host: string;
  /** 0 picks a free port (tests). */
  readonly port: number;
  /** Host for Via and Contact when it differs from the bound address (NAT, 0.0.0.0). */
  readonly advertisedHost?: string;
  readonly limits?: SipParseLimits;
  readonly onMessage: SipMessageHandler;
}

/** Largest UDP payload; bigger messages need TCP (§18.1.1 says switch above the path MTU). */
const MAX_DATAGRAM_BYTES = 65_507;

/** SIP over one UDP socket: each datagram holds one message (§18.3). */
export class SipUdpTransport implements SipTransport {
  readonly name = 'UDP' as const;
  readonly reliable = false;
  readonly stats: SipTransportStats = newTransportStats();
  private readonly socket: Socket;
  private boundPort = 0;
  private closed = false;

  private constructor(private readonly options: SipUdpOptions) {
    this.socket = createSocket({ type: isIPv6(options.host) ? 'udp6' : 'udp4' });
    this.socket.on('message', (data, remote) => {
      handleInbound(
        data,
        { transport: 'UDP', address: remote.address, port: remote.port },
        {
          stream: false,
          handler: options.onMessage,
          transport: this,
          stats: this.stats,
          reply: (message, target) => this.send(message, target),
          ...(options.limits !== undefined && { limits: options.limits }),
        },
      );
    });
    // ICMP errors and the like surface here; a UDP server keeps serving through them.
    this.socket.on('error', () => {});
  }

  static async listen(options: SipUdpOptions): Promise<SipUdpTransport> {
    const transport = new SipUdpTransport(options);
    await new Promise<void>((resolve, reject) => {
      transport.socket.once('error', reject);
      transport.socket.bind(options.port, options.host, () => {
        transport.socket.off('error', reject);
        resolve();
      });
    });
    transport.boundPort = transport.socket.address().port;
    return transport;
  }

  get port(): number {
    return this.boundPort;
  }

  get sentBy(): { host: string; port: number } {
    return {
      host: sipHost(this.options.advertisedHost ?? this.options.host),
      port: this.boundPort,
    };
  }

  send(message: SipMessage, target: SipTarget, onError?: (error: Error) => void): void {
    if (this.closed) {
      onError?.(new Error('the UDP transport is closed'));
      return;
    }
    const data = serializeSipMessage(message);
    if (data.length > MAX_DATAGRAM_BYTES) {
      onError?.(new Error(`message of ${data.length} bytes does not fit a datagram`));
      return;
    }
    this.stats.messagesOut++;
    this.socket.send(data, target.port, target.address, (error) => {
      if (error) {
        onError?.(error);
      }
    });
  }

  async close(): Promise<void> {
    if (this.closed) {
      return;
    }
    this.closed = true;
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }
}
