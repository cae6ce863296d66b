import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { SipMessage } from './message.js';
import { DEFAULT_SIP_LIMITS, type SipParseLimits } from './parser.js';
import { serializeSipMessage } from './serializer.js';
import { SipStreamFramer } from './stream-framer.js';
import { sipHost } from './syntax.js';
import {
  handleInbound,
  newTransportStats,
  type SipMessageHandler,
  type SipTarget,
  type SipTransport,
  type SipTransportStats,
} from './transport.js';

export interface SipTcpOptions {
  readonly host: string;
  /** 0 picks a free port (tests). */
  readonly port: number;
  readonly advertisedHost?: string;
  readonly limits?: SipParseLimits;
  /** Connections open at once, inbound and outbound; more are refused. */
  readonly maxConnections?: number;
  /** A connection quiet this long is closed (keep-alive CRLFs count as traffic). */
  readonly idleTimeoutMs?: number;
  readonly onMessage: SipMessageHandler;
}

interface Connection {
  readonly id: number;
  readonly socket: Socket;
  readonly remoteKey: string;
  readonly framer: SipStreamFramer;
}

const DEFAULT_MAX_CONNECTIONS = 1_024;
const DEFAULT_IDLE_TIMEOUT_MS = 300_000;

/**
 * SIP over TCP: a listening server plus outbound connections opened on demand. Messages are
 * framed by Content-Length; responses go back on the connection their request came on.
 */
export class SipTcpTransport implements SipTransport {
  readonly name = 'TCP' as const;
  readonly reliable = true;
  readonly stats: SipTransportStats = newTransportStats();
  private readonly server: Server;
  private readonly connections = new Map<number, Connection>();
  private readonly byRemote = new Map<string, Connection>();
  private nextId = 1;
  private boundPort = 0;
  private closed = false;

  private constructor(private readonly options: SipTcpOptions) {
    this.server = createServer((socket) => this.adopt(socket));
  }

  static async listen(options: SipTcpOptions): Promise<SipTcpTransport> {
    const transport = new SipTcpTransport(options);
    await new Promise<void>((resolve, reject) => {
      transport.server.once('error', reject);
      transport.server.listen(options.port, options.host, () => {
        transport.server.off('error', reject);
        resolve();
      });
    });
    const address = transport.server.address();
    transport.boundPort = typeof address === 'object' && address !== null ? address.port : 0;
    return transport;
  }

  get port(): number {
    return this.boundPort;
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  get sentBy(): { host: string; port: number } {
    return {
      host: sipHost(this.options.advertisedHost ?? this.options.host),
      port: this.boundPort,
    };
  }

  private adopt(socket: Socket, remoteKey?: string): Connection | undefined {
    if (
      this.closed ||
      this.connections.size >= (this.options.maxConnections ?? DEFAULT_MAX_CONNECTIONS)
    ) {
      socket.destroy();
      return undefined;
    }
    const connection: Connection = {
      id: this.nextId++,
      socket,
      remoteKey: remoteKey ?? `${socket.remoteAddress}|${socket.remotePort}`,
      framer: new SipStreamFramer(this.options.limits ?? DEFAULT_SIP_LIMITS),
    };
    this.connections.set(connection.id, connection);
    this.byRemote.set(connection.remoteKey, connection);
    socket.setNoDelay(true);
    socket.setTimeout(this.options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, () =>
      socket.destroy(),
    );
    socket.on('data', (chunk: Buffer) => this.receive(connection, chunk));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      this.connections.delete(connection.id);
      if (this.byRemote.get(connection.remoteKey) === connection) {
        this.byRemote.delete(connection.remoteKey);
      }
    });
    return connection;
  }

  private receive(connection: Connection, chunk: Buffer): void {
    const source = {
      transport: 'TCP' as const,
      address: connection.socket.remoteAddress ?? '',
      port: connection.socket.remotePort ?? 0,
      connectionId: connection.id,
    };
    for (const event of connection.framer.push(chunk)) {
      if (event.kind === 'ping') {
        this.stats.keepAlives++;
        connection.socket.write('\r\n');
      } else if (event.kind === 'error') {
        this.stats.parseErrors++;
        connection.socket.destroy();
      } else {
        handleInbound(event.data, source, {
          stream: true,
          handler: this.options.onMessage,
          transport: this,
          stats: this.stats,
          reply: (message) => this.write(connection, message),
          ...(this.options.limits !== undefined && { limits: this.options.limits }),
        });
        if (event.last) {
          connection.socket.end();
        }
      }
    }
  }

  private write(connection: Connection, message: SipMessage): void {
    this.stats.messagesOut++;
    connection.socket.write(serializeSipMessage(message));
  }

  send(message: SipMessage, target: SipTarget, onError?: (error: Error) => void): void {
    if (this.closed) {
      onError?.(new Error('the TCP transport is closed'));
      return;
    }
    const existing =
      (target.connectionId !== undefined ? this.connections.get(target.connectionId) : undefined) ??
      this.byRemote.get(`${target.address}|${target.port}`);
    if (existing !== undefined && !existing.socket.destroyed) {
      this.write(existing, message);
      return;
    }
    const socket = createConnection({ host: target.address, port: target.port });
    const connection = this.adopt(socket, `${target.address}|${target.port}`);
    if (connection === undefined) {
      onError?.(new Error('too many SIP TCP connections'));
      return;
    }
    socket.once('error', (error) => onError?.(error));
    // Writes before the connection is up are queued by the socket.
    this.write(connection, message);
  }

  async close(): Promise<void> {
    if (this.closed) {
      return;
    }
    this.closed = true;
    for (const connection of this.connections.values()) {
      connection.socket.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
