import { once } from 'node:events';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createModelRegistry } from '../../src/providers/llm/registry.js';
import type { HarnessOptions } from './app-harness.js';

export interface FakeToolCall {
  id: string;
  name: string;
  /** The arguments JSON, sent in these pieces across deltas. */
  argumentChunks: string[];
}

/** One scripted answer of the fake vendor. */
export interface FakeReply {
  /** Text, one delta per piece. */
  chunks?: string[];
  toolCalls?: FakeToolCall[];
  /** Sent in a last chunk with empty `choices` (as with `include_usage`); null leaves it out. */
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  finishReason?: string;
  /** Answer with this HTTP status and an OpenAI-style error body instead. */
  status?: number;
  errorMessage?: string;
  /** Wait this long before answering at all (headers included). */
  delayMs?: number;
  /** Wait this long between deltas. */
  chunkDelayMs?: number;
  /** Answer 200 with this JSON body (a server that does not stream) instead. */
  json?: object;
  /** Send these body lines verbatim (each followed by a blank line) instead of the generated ones. */
  rawLines?: string[];
}

/** The JSON a client sent; the fields the tests look at are named. */
export interface WireRequestBody {
  model?: string;
  messages?: { role: string; content: unknown; [field: string]: unknown }[];
  tools?: unknown[];
  [field: string]: unknown;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: WireRequestBody | undefined;
  /** The client went away before the reply was complete. */
  aborted: boolean;
}

/** The last user message's text, for echo replies. */
export function lastUserText(request: RecordedRequest): string {
  const last = (request.body?.messages ?? []).filter((m) => m.role === 'user').at(-1);
  return typeof last?.content === 'string' ? last.content : '';
}

/**
 * A local server speaking the OpenAI chat-completions SSE protocol. Replies come from the
 * `enqueue`d script in order, then from `fallback` (by default an echo of the last user message).
 */
export class FakeOpenAiServer {
  readonly requests: RecordedRequest[] = [];
  fallback: (request: RecordedRequest) => FakeReply = (request) => ({
    chunks: ['You said: ', lastUserText(request)],
  });
  readonly #queue: FakeReply[] = [];
  readonly #server: Server = createServer((req, res) => void this.#handle(req, res));
  #url = '';

  /** Base URL to configure, e.g. `http://127.0.0.1:1234/v1`. */
  get url(): string {
    return this.#url;
  }

  /** The JSON body of the `index`th recorded request (negative counts from the end). */
  sentBody(index: number): WireRequestBody {
    const body = this.requests.at(index)?.body;
    if (body === undefined) {
      throw new Error(`no request body at ${index} (${this.requests.length} recorded)`);
    }
    return body;
  }

  enqueue(...replies: FakeReply[]): void {
    this.#queue.push(...replies);
  }

  /** Forgets recorded requests and pending scripted replies. */
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
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body: text === '' ? undefined : (JSON.parse(text) as WireRequestBody),
      aborted: false,
    };
    this.requests.push(recorded);
    let closed = false;
    res.on('close', () => {
      closed = true;
      recorded.aborted = !res.writableFinished;
    });
    if (recorded.method !== 'POST' || recorded.path !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `no route ${recorded.path}` } }));
      return;
    }
    const reply = this.#queue.shift() ?? this.fallback(recorded);
    await sleep(reply.delayMs ?? 0);
    if (closed) {
      return;
    }
    if (reply.status !== undefined && reply.status >= 400) {
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { message: reply.errorMessage ?? `fake error ${reply.status}`, type: 'fake' },
        }),
      );
      return;
    }
    if (reply.json !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.json));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const line of reply.rawLines ?? sseLines(recorded, reply)) {
      if (closed) {
        return;
      }
      res.write(`${line}\n\n`);
      await sleep(reply.chunkDelayMs ?? 0);
    }
    res.end();
  }
}

/**
 * A fake vendor for one describe block: started in beforeAll, where it also gives `options` a
 * model registry pointing at it (register this before useHarness, whose beforeAll builds the app
 * from `options`), reset before each test and closed after.
 */
export function useFakeVendor(apiKey: string): { fake: FakeOpenAiServer; options: HarnessOptions } {
  const fake = new FakeOpenAiServer();
  const options: HarnessOptions = {};
  beforeAll(async () => {
    await fake.start();
    options.models = createModelRegistry({ openaiBaseUrl: fake.url, openaiApiKey: apiKey });
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());
  return { fake, options };
}

function sseLines(request: RecordedRequest, reply: FakeReply): string[] {
  const base = {
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: request.body?.model ?? 'fake',
  };
  const chunk = (choice: object | null, extra: object = {}): string =>
    `data: ${JSON.stringify({ ...base, choices: choice === null ? [] : [{ index: 0, ...choice }], ...extra })}`;
  const lines = [chunk({ delta: { role: 'assistant', content: '' }, finish_reason: null })];
  for (const piece of reply.chunks ?? []) {
    lines.push(chunk({ delta: { content: piece }, finish_reason: null }));
  }
  (reply.toolCalls ?? []).forEach((call, index) => {
    lines.push(
      chunk({
        delta: {
          tool_calls: [
            { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
          ],
        },
        finish_reason: null,
      }),
    );
    for (const piece of call.argumentChunks) {
      lines.push(
        chunk({
          delta: { tool_calls: [{ index, function: { arguments: piece } }] },
          finish_reason: null,
        }),
      );
    }
  });
  const finish = reply.finishReason ?? ((reply.toolCalls ?? []).length > 0 ? 'tool_calls' : 'stop');
  lines.push(chunk({ delta: {}, finish_reason: finish }));
  const usage =
    reply.usage === undefined ? { prompt_tokens: 12, completion_tokens: 7 } : reply.usage;
  if (usage !== null) {
    lines.push(
      chunk(null, {
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      }),
    );
  }
  lines.push('data: [DONE]');
  return lines;
}

function sleep(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
}
