import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the receiver got it. */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The body exactly as sent (for signature checks). */
  readonly rawBody: string;
  /** The parsed JSON body, or undefined when it is not JSON. */
  readonly body: any;
  /** `body.message.type` when present. */
  readonly type: string | undefined;
}

/** What to answer: a status and a body (objects are sent as JSON), optionally late. */
export interface Reply {
  readonly status?: number;
  readonly body?: unknown;
  /** Raw bytes or text sent as is (takes precedence over `body`). */
  readonly raw?: string | Buffer;
  readonly delayMs?: number;
  readonly headers?: Record<string, string>;
}

export type Responder = (request: ReceivedRequest, index: number) => Reply | Promise<Reply>;

/**
 * A real HTTP server on 127.0.0.1 that records every request and answers through a responder
 * (200 `{}` by default). Tests use it as the webhook target of assistants, phone numbers, tools
 * and OAuth2 token endpoints.
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  #server: Server | null = null;
  #responder: Responder = () => ({ status: 200, body: {} });
  #waiters: { count: number; resolve: () => void }[] = [];
  readonly #pending = new Set<NodeJS.Timeout>();

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    await receiver.#listen();
    return receiver;
  }

  get url(): string {
    const address = this.#server?.address() as AddressInfo | null;
    if (address === null || address === undefined) {
      throw new Error('webhook receiver is not listening');
    }
    return `http://127.0.0.1:${address.port}`;
  }

  respond(responder: Responder): void {
    this.#responder = responder;
  }

  /** Requests whose message type is one of `types` (all when none given). */
  messages(...types: string[]): ReceivedRequest[] {
    return this.requests.filter(
      (request) =>
        types.length === 0 || (request.type !== undefined && types.includes(request.type)),
    );
  }

  /** Resolves once `count` requests have arrived; rejects after `timeoutMs`. */
  waitForCount(count: number, timeoutMs = 10_000): Promise<void> {
    if (this.requests.length >= count) {
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(
          new Error(`waited ${timeoutMs} ms for ${count} requests, got ${this.requests.length}`),
        );
      }, timeoutMs);
      this.#waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  clear(): void {
    this.requests.length = 0;
  }

  async close(): Promise<void> {
    for (const timer of this.#pending) {
      clearTimeout(timer);
    }
    const server = this.#server;
    this.#server = null;
    if (server !== null) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  async #listen(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        let body: any;
        try {
          body = JSON.parse(rawBody);
        } catch {
          body = undefined;
        }
        const request: ReceivedRequest = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          rawBody,
          body,
          type: typeof body?.message?.type === 'string' ? body.message.type : undefined,
        };
        const index = this.requests.length;
        this.requests.push(request);
        this.#waiters = this.#waiters.filter((waiter) => {
          if (this.requests.length >= waiter.count) {
            waiter.resolve();
            return false;
          }
          return true;
        });
        void Promise.resolve(this.#responder(request, index)).then((reply) => {
          const send = () => {
            if (res.writableEnded || res.destroyed) {
              return;
            }
            const payload =
              reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
            res.writeHead(reply.status ?? 200, {
              'content-type': 'application/json',
              ...reply.headers,
            });
            res.end(payload);
          };
          if (reply.delayMs !== undefined && reply.delayMs > 0) {
            const timer = setTimeout(() => {
              this.#pending.delete(timer);
              send();
            }, reply.delayMs);
            this.#pending.add(timer);
          } else {
            send();
          }
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.#server = server;
  }
}
