/**
 * The websocket audio transport: a uWebSockets.js server beside Fastify on its own port.
 *
 *   /call/<callId>/transport?token=…  a call's audio (binary) and control messages (text)
 *   /call/<callId>/listen?token=…     the call's live mixed audio, for monitoring
 *
 * Upgrades are checked before a websocket exists: a refused one gets an HTTP error with a JSON
 * body. Which calls exist and what their tokens are is the registry's business (src/calls).
 */
import uWS from 'uWebSockets.js';
import { statusText } from '../../core/errors.js';
import {
  DEFAULT_BACKPRESSURE,
  TransportConnection,
  type BackpressureLimits,
} from './transport-connection.js';
import {
  errorFrame,
  isRefusal,
  type ListenPeer,
  type ListenSink,
  type TransportPeer,
  type UpgradeRefusal,
  type WebsocketCallRegistry,
} from './types.js';

export interface WebsocketServerOptions {
  registry: WebsocketCallRegistry;
  /** Largest frame a client may send (binary audio or text); larger closes the socket (1009). */
  maxMessageBytes?: number;
  /** Largest text (control) frame; larger ones are answered with an error frame. */
  maxTextBytes?: number;
  backpressure?: Partial<BackpressureLimits>;
  /** A socket with no traffic at all for this long is closed (uWS rounds to 4 s; 0 = never). */
  idleTimeoutSeconds?: number;
}

interface TransportData {
  kind: 'transport';
  peer: TransportPeer;
  connection: TransportConnection | undefined;
}

interface ListenData {
  kind: 'listen';
  peer: ListenPeer;
  sink: ListenConnection | undefined;
}

type SocketData = TransportData | ListenData;

const LISTEN_SOFT_LIMIT_BYTES = 256 * 1024;

function refuse(res: uWS.HttpResponse, refusal: UpgradeRefusal): void {
  const body = JSON.stringify({
    statusCode: refusal.statusCode,
    error: statusText(refusal.statusCode),
    message: refusal.message,
  });
  res
    .writeStatus(`${refusal.statusCode} ${statusText(refusal.statusCode)}`)
    .writeHeader('content-type', 'application/json; charset=utf-8')
    .end(body, true);
}

/** uWS returns '' or undefined for a missing query parameter depending on the version. */
function queryParam(req: uWS.HttpRequest, name: string): string {
  const value: string | undefined = req.getQuery(name);
  return value ?? '';
}

/** A server must pick one of the subprotocols a client offers; Parla takes the first. */
function firstProtocol(header: string): string {
  return header.split(',')[0]?.trim() ?? '';
}

export class WebsocketServer {
  private readonly app: uWS.TemplatedApp;
  private listenSocket: uWS.us_listen_socket | undefined;
  private readonly sockets = new Set<uWS.WebSocket<SocketData>>();
  private readonly textDecoder = new TextDecoder('utf-8', { fatal: true });
  private readonly maxTextBytes: number;
  private readonly limits: BackpressureLimits;

  constructor(private readonly options: WebsocketServerOptions) {
    const maxMessageBytes = options.maxMessageBytes ?? 256 * 1024;
    this.maxTextBytes = Math.min(options.maxTextBytes ?? 64 * 1024, maxMessageBytes);
    this.limits = { ...DEFAULT_BACKPRESSURE, ...options.backpressure };
    const common = {
      compression: uWS.DISABLED,
      maxPayloadLength: maxMessageBytes,
      // Our own limits decide; uWS must not drop text frames silently before they do.
      maxBackpressure: this.limits.hardLimitBytes * 4,
      closeOnBackpressureLimit: 0,
      idleTimeout: options.idleTimeoutSeconds ?? 120,
      sendPingsAutomatically: true,
    };
    this.app = uWS.App();
    this.app.ws<SocketData>('/call/:id/transport', {
      ...common,
      upgrade: (res, req, context) => this.upgradeTransport(res, req, context),
      open: (ws) => this.onOpen(ws),
      message: (ws, message, isBinary) => this.onMessage(ws, message, isBinary),
      close: (ws, code) => this.onClose(ws, code),
    });
    this.app.ws<SocketData>('/call/:id/listen', {
      ...common,
      maxPayloadLength: 4096,
      upgrade: (res, req, context) => this.upgradeListen(res, req, context),
      open: (ws) => this.onOpen(ws),
      close: (ws, code) => this.onClose(ws, code),
    });
    this.app.any('/*', (res) => {
      refuse(res, { statusCode: 404, message: 'Not a websocket endpoint of this server' });
    });
  }

  /** Starts listening; resolves with the port (useful with port 0). */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(host, port, (socket) => {
        if (socket === false) {
          reject(new Error(`websocket server cannot listen on ${host}:${port}`));
          return;
        }
        this.listenSocket = socket;
        resolve(uWS.us_socket_local_port(socket));
      });
    });
  }

  get openSockets(): number {
    return this.sockets.size;
  }

  /** Stops listening and closes every socket still open. */
  close(): void {
    if (this.listenSocket !== undefined) {
      uWS.us_listen_socket_close(this.listenSocket);
      this.listenSocket = undefined;
    }
    for (const ws of [...this.sockets]) {
      ws.end(1001, 'server shutting down');
    }
  }

  private upgradeTransport(
    res: uWS.HttpResponse,
    req: uWS.HttpRequest,
    context: uWS.us_socket_context_t,
  ): void {
    const claim = this.options.registry.claimTransport(
      req.getParameter(0) ?? '',
      queryParam(req, 'token'),
    );
    if (isRefusal(claim)) {
      refuse(res, claim);
      return;
    }
    const data: TransportData = { kind: 'transport', peer: claim, connection: undefined };
    res.upgrade<SocketData>(
      data,
      req.getHeader('sec-websocket-key'),
      firstProtocol(req.getHeader('sec-websocket-protocol')),
      req.getHeader('sec-websocket-extensions'),
      context,
    );
  }

  private upgradeListen(
    res: uWS.HttpResponse,
    req: uWS.HttpRequest,
    context: uWS.us_socket_context_t,
  ): void {
    // The request object is only valid now: read everything before waiting.
    const callId = req.getParameter(0) ?? '';
    const token = queryParam(req, 'token');
    const authorization = req.getHeader('authorization');
    const key = req.getHeader('sec-websocket-key');
    const protocol = firstProtocol(req.getHeader('sec-websocket-protocol'));
    const extensions = req.getHeader('sec-websocket-extensions');
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    void this.options.registry.claimListen(callId, token, authorization).then(
      (claim) => {
        if (aborted) {
          return;
        }
        res.cork(() => {
          if (isRefusal(claim)) {
            refuse(res, claim);
            return;
          }
          const data: ListenData = { kind: 'listen', peer: claim, sink: undefined };
          res.upgrade<SocketData>(data, key, protocol, extensions, context);
        });
      },
      () => {
        if (!aborted) {
          res.cork(() => refuse(res, { statusCode: 500, message: 'Listen check failed' }));
        }
      },
    );
  }

  private onOpen(ws: uWS.WebSocket<SocketData>): void {
    this.sockets.add(ws);
    const data = ws.getUserData();
    if (data.kind === 'transport') {
      data.connection = new TransportConnection(ws, data.peer, this.limits);
      data.peer.onOpen(data.connection);
      return;
    }
    const sink = new ListenConnection(ws);
    data.sink = sink;
    data.peer.onOpen(sink);
  }

  private onMessage(ws: uWS.WebSocket<SocketData>, message: ArrayBuffer, isBinary: boolean): void {
    const data = ws.getUserData();
    if (data.kind !== 'transport' || data.connection === undefined) {
      return;
    }
    const connection = data.connection;
    if (isBinary) {
      connection.receiveAudio(message);
      return;
    }
    if (message.byteLength > this.maxTextBytes) {
      connection.sendJson(
        errorFrame(
          'message-too-large',
          `Text frames are limited to ${this.maxTextBytes} bytes; got ${message.byteLength}`,
        ),
      );
      return;
    }
    let text: string;
    try {
      text = this.textDecoder.decode(message);
    } catch {
      connection.sendJson(errorFrame('invalid-utf8', 'Text frames must be valid UTF-8'));
      return;
    }
    data.peer.onText(text);
  }

  private onClose(ws: uWS.WebSocket<SocketData>, code: number): void {
    this.sockets.delete(ws);
    const data = ws.getUserData();
    if (data.kind === 'transport') {
      data.connection?.markClosed();
      data.peer.onClose(code);
      return;
    }
    if (data.sink !== undefined) {
      data.sink.markClosed();
      data.peer.onClose(data.sink);
    }
  }
}

/** A monitor listener's socket: audio is dropped while the listener is not reading. */
class ListenConnection implements ListenSink {
  private closed = false;

  constructor(private readonly ws: uWS.WebSocket<SocketData>) {}

  sendAudio(samples: Int16Array): boolean {
    if (this.closed || this.ws.getBufferedAmount() > LISTEN_SOFT_LIMIT_BYTES) {
      return false;
    }
    this.ws.send(samples, true);
    return true;
  }

  sendJson(message: object): void {
    if (!this.closed) {
      this.ws.send(JSON.stringify(message), false);
    }
  }

  close(code: number, reason: string): void {
    if (!this.closed) {
      this.closed = true;
      this.ws.end(code, reason.slice(0, 123));
    }
  }

  markClosed(): void {
    this.closed = true;
  }
}
