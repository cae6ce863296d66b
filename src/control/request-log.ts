import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { LogEntry, LogStore } from '../store/log-store.js';
import { redactSecrets } from '../store/secret-box.js';
import { checkStrings } from './json-body.js';

const MAX_LOGGED_BODY_BYTES = 32 * 1024;
const REDACTED_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-vapi-secret',
  'x-api-key',
  'api-key',
  'x-auth-token',
]);

declare module 'fastify' {
  interface FastifyRequest {
    /** The org the request's key belongs to; empty before authentication. */
    orgId: string;
    /** The serialized response body, kept for the request log. */
    loggedResponse: string | null;
  }
  interface FastifyContextConfig {
    /** No authentication (health, OpenAPI). */
    public?: boolean;
    /** Do not record this route in the request log. */
    noLog?: boolean;
  }
}

function bodyForLog(body: unknown): unknown {
  if (body === undefined || body === null) {
    return undefined;
  }
  if (Buffer.isBuffer(body) || typeof body !== 'object') {
    return undefined;
  }
  const redacted = redactSecrets(body);
  const bytes = JSON.stringify(redacted).length;
  return bytes > MAX_LOGGED_BODY_BYTES ? { truncated: true, bytes } : redacted;
}

function parseResponse(payload: string | null): unknown {
  if (payload === null || payload.length === 0 || payload.length > MAX_LOGGED_BODY_BYTES) {
    return payload === null || payload.length === 0
      ? undefined
      : { truncated: true, bytes: payload.length };
  }
  try {
    return redactSecrets(JSON.parse(payload) as unknown);
  } catch {
    return undefined;
  }
}

function headersForLog(request: FastifyRequest): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    out[name] = REDACTED_HEADERS.has(name) ? '[redacted]' : value;
  }
  return out;
}

/**
 * Records every authenticated API request as a log entry of type `API`. Entries are queued in
 * memory and written in batches by the LogStore, so requests never wait on the log.
 */
export function registerRequestLog(app: FastifyInstance, logs: LogStore): void {
  app.decorateRequest('loggedResponse', null);
  app.addHook('onSend', async (request, _reply, payload) => {
    if (typeof payload === 'string' && request.orgId !== '') {
      request.loggedResponse = payload;
    }
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    if (request.orgId === '' || request.routeOptions.config.noLog === true) {
      return;
    }
    const finishedAt = new Date();
    const durationMs = reply.elapsedTime;
    const startedAt = new Date(finishedAt.getTime() - durationMs);
    const queryIndex = request.url.indexOf('?');
    const params = (request.params ?? {}) as Record<string, string>;
    const path = request.routeOptions.url ?? request.url;
    const entry: LogEntry = {
      time: startedAt.toISOString(),
      orgId: request.orgId,
      type: 'API',
      resource: path.split('/')[1] ?? '',
      requestDurationSeconds: durationMs / 1000,
      requestStartedAt: startedAt.toISOString(),
      requestFinishedAt: finishedAt.toISOString(),
      requestHttpMethod: request.method,
      requestUrl: request.url,
      requestPath: queryIndex === -1 ? request.url : request.url.slice(0, queryIndex),
      requestQuery: queryIndex === -1 ? '' : request.url.slice(queryIndex + 1),
      responseHttpCode: reply.statusCode,
      requestIpAddress: request.ip,
      requestHeaders: headersForLog(request),
    };
    const origin = request.headers.origin;
    if (typeof origin === 'string') {
      entry.requestOrigin = origin;
    }
    const requestBody = bodyForLog(request.body);
    if (requestBody !== undefined) {
      entry.requestBody = requestBody;
    }
    // Reads are reproducible: their bodies are logged only when they fail, which keeps the log
    // (and the store's write load) proportional to what changed.
    const responseBody =
      request.method === 'GET' && reply.statusCode < 400
        ? undefined
        : parseResponse(request.loggedResponse);
    if (responseBody !== undefined) {
      entry.responseBody = responseBody;
    }
    if (reply.statusCode >= 400 && responseBody !== undefined) {
      const message = (responseBody as { message?: unknown }).message;
      entry.error = { message: Array.isArray(message) ? message.join('; ') : String(message) };
    }
    linkIds(entry, path, params, request.body);
    logs.append(entry);
  });
}

/** Fills the ids a log can be filtered by from the route and body. */
function linkIds(
  entry: LogEntry,
  path: string,
  params: Record<string, string>,
  body: unknown,
): void {
  // A rejected request may carry an id PostgreSQL cannot store (NUL): do not link it.
  const id = params.id !== undefined && checkStrings(params.id, 0) === null ? params.id : undefined;
  const resource = path.split('/')[1];
  if (id !== undefined) {
    if (resource === 'call') {
      entry.callId = id;
    } else if (resource === 'assistant') {
      entry.assistantId = id;
    } else if (resource === 'phone-number') {
      entry.phoneNumberId = id;
    } else if (resource === 'squad') {
      entry.squadId = id;
    }
  }
  if (body !== null && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    if (typeof b.assistantId === 'string' && entry.assistantId === undefined) {
      entry.assistantId = b.assistantId;
    }
    if (typeof b.phoneNumberId === 'string' && entry.phoneNumberId === undefined) {
      entry.phoneNumberId = b.phoneNumberId;
    }
    if (typeof b.squadId === 'string' && entry.squadId === undefined) {
      entry.squadId = b.squadId;
    }
  }
}
