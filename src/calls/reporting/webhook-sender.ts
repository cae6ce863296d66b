import type { LogEntry } from '../../store/log-store.js';
import type { Doc } from '../../store/resource-store.js';
import {
  bearerHeaders,
  hmacHeaders,
  mergeHeaders,
  webhookAuthPlan,
  type OAuth2Plan,
  type ServerTarget,
} from './webhook-auth.js';

export const DEFAULT_TIMEOUT_SECONDS = 20;
const MAX_TIMEOUT_SECONDS = 300;
export const DEFAULT_MAX_REPLY_BYTES = 1024 * 1024;
/** Request bodies larger than this are summarised in the log entry. */
const MAX_LOGGED_BODY_BYTES = 32 * 1024;
/** Longest wait between retries, whatever the backoff plan says. */
const MAX_RETRY_DELAY_MS = 60_000;
/** OAuth2 tokens are refreshed this long before they expire. */
const TOKEN_MARGIN_MS = 30_000;

export interface WebhookOutcome {
  /** A 2xx reply was received. */
  readonly ok: boolean;
  /** HTTP status of the last attempt, or null when none answered. */
  readonly status: number | null;
  /** The parsed JSON reply (2xx only); undefined when empty or not JSON. */
  readonly reply: unknown;
  /** Why the last attempt failed (network, timeout, too large, not JSON…). */
  readonly error?: string;
  readonly attempts: number;
}

/** Fields copied into every Webhook log entry. */
export interface WebhookLogContext {
  readonly orgId: string;
  readonly callId?: string;
  readonly assistantId?: string;
  readonly phoneNumberId?: string;
  readonly customerId?: string;
}

/** The log fields of a call: its id, assistant, phone number and customer number. */
export function webhookLogContext(orgId: string, call: Doc): WebhookLogContext {
  const context: { -readonly [K in keyof WebhookLogContext]: WebhookLogContext[K] } = { orgId };
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const customer = call.customer as Doc | null | undefined;
  const fields = {
    callId: text(call.id),
    assistantId: text(call.assistantId),
    phoneNumberId: text(call.phoneNumberId),
    customerId: text(customer?.number),
  };
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined) {
      context[name as keyof typeof fields] = value;
    }
  }
  return context;
}

export interface WebhookSenderOptions {
  readonly logContext: WebhookLogContext;
  /** A webhook credential by id, secrets opened (null when missing). */
  readonly credential: (id: string) => Promise<Doc | null>;
  readonly logs?: { append(entry: LogEntry): void };
  readonly fetch?: typeof fetch;
  readonly maxReplyBytes?: number;
  /** Epoch ms. */
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

interface CachedToken {
  readonly value: string;
  readonly expiresAtMs: number;
}

/**
 * POSTs server messages: headers, the credential's authentication, the timeout, the backoff
 * plan, a bounded and parsed reply, and one `Webhook` log entry per attempt. Never throws: every
 * failure becomes an outcome with `ok: false`.
 */
export class WebhookSender {
  readonly #options: WebhookSenderOptions;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #maxReplyBytes: number;
  readonly #tokens = new Map<string, CachedToken>();

  constructor(options: WebhookSenderOptions) {
    this.#options = options;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#now = options.now ?? Date.now;
    this.#sleep =
      options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()));
    this.#maxReplyBytes = options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
  }

  async send(server: ServerTarget, payload: Doc, webhookType: string): Promise<WebhookOutcome> {
    let body: string;
    try {
      body = JSON.stringify(payload);
    } catch (error) {
      return { ok: false, status: null, reply: undefined, error: String(error), attempts: 0 };
    }
    const plan = server.backoffPlan;
    const maxRetries = plan === undefined ? 0 : Math.max(0, Math.min(10, plan.maxRetries));
    let outcome: WebhookOutcome = { ok: false, status: null, reply: undefined, attempts: 0 };
    for (let attempt = 0; attempt <= maxRetries; attempt += 1) {
      if (attempt > 0 && plan !== undefined) {
        const baseMs = Math.max(0, plan.baseDelaySeconds) * 1000;
        const delayMs = plan.type === 'exponential' ? baseMs * 2 ** (attempt - 1) : baseMs;
        await this.#sleep(Math.min(MAX_RETRY_DELAY_MS, delayMs));
      }
      const result = await this.#attempt(server, body, webhookType, payload);
      outcome = { ...result, attempts: attempt + 1 };
      if (!isRetryable(result)) {
        break;
      }
    }
    return outcome;
  }

  async #attempt(
    server: ServerTarget,
    body: string,
    webhookType: string,
    payload: Doc,
  ): Promise<Omit<WebhookOutcome, 'attempts'>> {
    const startedMs = this.#now();
    const timeoutMs = timeoutSecondsOf(server) * 1000;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    let result: Omit<WebhookOutcome, 'attempts'>;
    try {
      const headers = await this.#headers(server, body, startedMs);
      const response = await this.#fetch(server.url, {
        method: 'POST',
        headers,
        body,
        signal: controller.signal,
        redirect: 'manual',
      });
      result = await this.#readReply(response);
    } catch (error) {
      result = {
        ok: false,
        status: null,
        reply: undefined,
        error: controller.signal.aborted
          ? `no reply within ${timeoutMs / 1000} s`
          : `request failed: ${errorText(error)}`,
      };
    } finally {
      clearTimeout(timer);
    }
    this.#log(server, webhookType, payload, body, startedMs, result);
    return result;
  }

  async #readReply(response: Response): Promise<Omit<WebhookOutcome, 'attempts'>> {
    const status = response.status;
    const ok = status >= 200 && status < 300;
    const declared = Number(response.headers.get('content-length') ?? '0');
    if (declared > this.#maxReplyBytes) {
      await response.body?.cancel();
      return { ok: false, status, reply: undefined, error: this.#tooLarge() };
    }
    const chunks: Uint8Array[] = [];
    let bytes = 0;
    if (response.body !== null) {
      const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          break;
        }
        bytes += value.byteLength;
        if (bytes > this.#maxReplyBytes) {
          await reader.cancel();
          return { ok: false, status, reply: undefined, error: this.#tooLarge() };
        }
        chunks.push(value);
      }
    }
    // The platform ignores the body of a non-2xx reply.
    if (!ok) {
      return { ok, status, reply: undefined, error: `HTTP ${status}` };
    }
    const text = Buffer.concat(chunks).toString('utf8').trim();
    if (text === '') {
      return { ok, status, reply: undefined };
    }
    try {
      return { ok, status, reply: JSON.parse(text) as unknown };
    } catch {
      return { ok, status, reply: undefined, error: 'the reply is not JSON' };
    }
  }

  #tooLarge(): string {
    return `the reply is larger than ${this.#maxReplyBytes} bytes`;
  }

  async #headers(
    server: ServerTarget,
    body: string,
    nowMs: number,
  ): Promise<Record<string, string>> {
    let auth: Record<string, string> = {};
    if (server.credentialId !== undefined && server.credentialId !== '') {
      const plan = webhookAuthPlan(await this.#options.credential(server.credentialId));
      if (plan === null) {
        throw new Error(`credential ${server.credentialId} is not a webhook credential`);
      }
      if (plan.type === 'bearer') {
        auth = bearerHeaders(plan);
      } else if (plan.type === 'hmac') {
        auth = hmacHeaders(plan, { method: 'POST', url: server.url, body, nowMs });
      } else {
        auth = { Authorization: `Bearer ${await this.#oauthToken(server.credentialId, plan)}` };
      }
    }
    return mergeHeaders(
      { 'content-type': 'application/json', 'user-agent': 'parla-webhook/1' },
      server.secret !== undefined && server.secret !== '' ? { 'x-vapi-secret': server.secret } : {},
      auth,
      server.headers,
    );
  }

  /** OAuth2 client-credentials token, cached per credential until shortly before it expires. */
  async #oauthToken(credentialId: string, plan: OAuth2Plan): Promise<string> {
    const cached = this.#tokens.get(credentialId);
    if (cached !== undefined && cached.expiresAtMs > this.#now()) {
      return cached.value;
    }
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: plan.clientId,
      client_secret: plan.clientSecret,
    });
    if (plan.scope !== undefined && plan.scope !== '') {
      form.set('scope', plan.scope);
    }
    const response = await this.#fetch(plan.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
      signal: AbortSignal.timeout(DEFAULT_TIMEOUT_SECONDS * 1000),
    });
    const text = await response.text();
    if (!response.ok || text.length > this.#maxReplyBytes) {
      throw new Error(`OAuth2 token request answered HTTP ${response.status}`);
    }
    const token = JSON.parse(text) as { access_token?: unknown; expires_in?: unknown };
    if (typeof token.access_token !== 'string' || token.access_token === '') {
      throw new Error('OAuth2 token reply has no access_token');
    }
    const lifetimeMs = typeof token.expires_in === 'number' ? token.expires_in * 1000 : 3_600_000;
    this.#tokens.set(credentialId, {
      value: token.access_token,
      expiresAtMs: this.#now() + Math.max(0, lifetimeMs - TOKEN_MARGIN_MS),
    });
    return token.access_token;
  }

  #log(
    server: ServerTarget,
    webhookType: string,
    payload: Doc,
    body: string,
    startedMs: number,
    result: Omit<WebhookOutcome, 'attempts'>,
  ): void {
    const logs = this.#options.logs;
    if (logs === undefined) {
      return;
    }
    const finishedMs = this.#now();
    const context = this.#options.logContext;
    let path = '';
    try {
      path = new URL(server.url).pathname;
    } catch {
      path = '';
    }
    const entry: LogEntry = {
      time: new Date(startedMs).toISOString(),
      type: 'Webhook',
      webhookType,
      requestHttpMethod: 'POST',
      requestUrl: server.url,
      requestPath: path,
      requestStartedAt: new Date(startedMs).toISOString(),
      requestFinishedAt: new Date(finishedMs).toISOString(),
      requestDurationSeconds: (finishedMs - startedMs) / 1000,
      requestBody:
        body.length <= MAX_LOGGED_BODY_BYTES
          ? payload
          : { summary: `${body.length} bytes`, message: { type: webhookType } },
      ...context,
    };
    if (result.status !== null) {
      entry.responseHttpCode = result.status;
    }
    if (result.reply !== undefined) {
      entry.responseBody = result.reply;
    }
    if (result.error !== undefined) {
      entry.error = { message: result.error };
    }
    logs.append(entry);
  }
}

/** `server.timeoutSeconds` within the schema's 1–300 s; the default when absent or not a number. */
function timeoutSecondsOf(server: ServerTarget): number {
  const value = server.timeoutSeconds;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return DEFAULT_TIMEOUT_SECONDS;
  }
  return Math.min(MAX_TIMEOUT_SECONDS, Math.max(1, value));
}

/** Network failures, timeouts, 429 and 5xx are worth another try; other replies are final. */
function isRetryable(result: Omit<WebhookOutcome, 'attempts'>): boolean {
  if (result.ok) {
    return false;
  }
  return result.status === null || result.status === 429 || result.status >= 500;
}

function errorText(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}
