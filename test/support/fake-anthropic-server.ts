import { once } from 'node:events';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeToolUse {
  id: string;
  name: string;
  /** The input JSON, sent in these pieces as `input_json_delta`s. */
  inputChunks: string[];
}

/** One scripted answer of the fake Anthropic Messages API. */
export interface FakeAnthropicReply {
  /** Text, one `text_delta` per piece, in one text block. */
  chunks?: string[];
  toolUses?: FakeToolUse[];
  /** Reported in message_start (input) and message_delta (output). */
  usage?: { input_tokens: number; output_tokens: number };
  stopReason?: string;
  /** Answer with this HTTP status and an Anthropic-style error body instead. */
  status?: number;
  errorType?: string;
  errorMessage?: string;
  /** Wait this long before answering at all (headers included). */
  delayMs?: number;
  /** Wait this long between events. */
  chunkDelayMs?: number;
  /** Send these SSE events verbatim (each followed by a blank line) instead of the generated ones. */
  rawEvents?: string[];
}

export interface AnthropicWireBody {
  model?: string;
  system?: unknown;
  messages?: { role: string; content: unknown }[];
  tools?: unknown[];
  [field: string]: unknown;
}

export interface RecordedAnthropicRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: AnthropicWireBody | undefined;
  /** The client went away before the reply was complete. */
  aborted: boolean;
}

/** A local server speaking the Anthropic Messages SSE protocol, replying from a script. */
export class FakeAnthropicServer {
  readonly requests: RecordedAnthropicRequest[] = [];
  fallback: (request: RecordedAnthropicRequest) => FakeAnthropicReply = () => ({ chunks: ['Hi'] });
  readonly #queue: FakeAnthropicReply[] = [];
  readonly #server: Server = createServer((req, res) => void this.#handle(req, res));
  #url = '';

  /** Base URL to configure, e.g. `http://127.0.0.1:1234/v1`. */
  get url(): string {
    return this.#url;
  }

  sentBody(index: number): AnthropicWireBody {
    const body = this.requests.at(index)?.body;
    if (body === undefined) {
      throw new Error(`no request body at ${index} (${this.requests.length} recorded)`);
    }
    return body;
  }

  enqueue(...replies: FakeAnthropicReply[]): void {
    this.#queue.push(...replies);
  }

  reset(): void {
    this.requests.length = 0;
    this.#queue.length = 0;
  }

  async start(): Promise<void> {
    this.#server.listen(0, '127.0.0.1');
    await once(this.#server, 'listening');
    this.#url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1`;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parts: Buffer[] = [];
    for await (const part of req) {
      parts.push(part as Buffer);
    }
    const text = Buffer.concat(parts).toString('utf8');
    const recorded: RecordedAnthropicRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body: text === '' ? undefined : (JSON.parse(text) as AnthropicWireBody),
      aborted: false,
    };
    this.requests.push(recorded);
    let closed = false;
    res.on('close', () => {
      closed = true;
      recorded.aborted = !res.writableFinished;
    });
    if (recorded.method !== 'POST' || recorded.path !== '/v1/messages') {
      writeError(res, 404, 'not_found_error', `no route ${recorded.path}`);
      return;
    }
    const reply = this.#queue.shift() ?? this.fallback(recorded);
    await sleep(reply.delayMs ?? 0);
    if (closed) {
      return;
    }
    if (reply.status !== undefined && reply.status >= 400) {
      writeError(
        res,
        reply.status,
        reply.errorType ?? 'api_error',
        reply.errorMessage ?? `fake error ${reply.status}`,
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const event of reply.rawEvents ?? sseEvents(recorded, reply)) {
      if (closed) {
        return;
      }
      res.write(`${event}\n\n`);
      await sleep(reply.chunkDelayMs ?? 0);
    }
    res.end();
  }
}

/** One SSE event as Anthropic sends it: an `event:` line naming the type, then the data. */
export function sseEvent(data: { type: string; [field: string]: unknown }): string {
  return `event: ${data.type}\ndata: ${JSON.stringify(data)}`;
}

function writeError(res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ type: 'error', error: { type, message } }));
}

function sseEvents(request: RecordedAnthropicRequest, reply: FakeAnthropicReply): string[] {
  const usage = reply.usage ?? { input_tokens: 12, output_tokens: 7 };
  const events = [
    sseEvent({
      type: 'message_start',
      message: {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        model: request.body?.model ?? 'fake',
        content: [],
        stop_reason: null,
        usage: { input_tokens: usage.input_tokens, output_tokens: 1 },
      },
    }),
    sseEvent({ type: 'ping' }),
  ];
  let index = 0;
  if (reply.chunks !== undefined) {
    events.push(
      sseEvent({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
    );
    for (const text of reply.chunks) {
      events.push(
        sseEvent({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }),
      );
    }
    events.push(sseEvent({ type: 'content_block_stop', index }));
    index++;
  }
  for (const tool of reply.toolUses ?? []) {
    events.push(
      sseEvent({
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: tool.id, name: tool.name, input: {} },
      }),
    );
    for (const partial_json of tool.inputChunks) {
      events.push(
        sseEvent({
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json },
        }),
      );
    }
    events.push(sseEvent({ type: 'content_block_stop', index }));
    index++;
  }
  const stop = reply.stopReason ?? ((reply.toolUses ?? []).length > 0 ? 'tool_use' : 'end_turn');
  events.push(
    sseEvent({
      type: 'message_delta',
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    }),
    sseEvent({ type: 'message_stop' }),
  );
  return events;
}

function sleep(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
}
