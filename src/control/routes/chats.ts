import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ChatService, type ChatRequest, type PreparedChat } from '../../chat/chat-service.js';
import { ResponseEventWriter, responseObject, sseEvent } from '../../chat/response-events.js';
import { badRequest, ParlaError } from '../../core/errors.js';
import { registerCrud } from '../crud.js';
import { splitIds } from '../schemas/common.js';
import { errorBody, type ErrorBody } from '../errors.js';
import { ChatListQuery, CreateChat, CreateChatResponse } from '../schemas/chat.js';
import type { RouteDeps } from './index.js';

type ChatBody = ChatRequest & { stream?: boolean };
type ResponsesBody = ChatBody & { model?: string; previous_response_id?: string };

const tags = ['Chat'];

/** Chats: POST /chat (Chat or `{path, delta}` stream), POST /chat/responses, list, get, delete. */
export function registerChatRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const service = new ChatService(deps.store, deps.models);

  app.post(
    '/chat',
    { schema: { tags, summary: 'Create Chat', body: CreateChat } },
    async (request, reply) => {
      const { stream, ...body } = request.body as ChatBody;
      const prepared = await service.prepare(request.orgId, body);
      const signal = abortWhenClosed(reply);
      if (stream === true) {
        return sendEvents(reply, chatStream(service, prepared, signal, request));
      }
      return reply.code(201).send(await service.complete(prepared, signal));
    },
  );

  app.post(
    '/chat/responses',
    {
      schema: { tags, summary: 'Create Chat (OpenAI Responses format)', body: CreateChatResponse },
    },
    async (request, reply) => {
      const { stream, previous_response_id, ...body } = request.body as ResponsesBody;
      delete body.model; // the assistant decides the model
      if (previous_response_id !== undefined) {
        if (body.previousChatId !== undefined) {
          throw badRequest('previousChatId and previous_response_id cannot be used together');
        }
        body.previousChatId = previous_response_id;
      }
      const prepared = await service.prepare(request.orgId, body);
      const signal = abortWhenClosed(reply);
      if (stream !== false) {
        return sendEvents(reply, responseStream(service, prepared, signal, request));
      }
      const chat = await service.complete(prepared, signal);
      return reply.send(responseObject(chat.id, chat.createdAt, replyText(chat)));
    },
  );

  registerCrud(app, deps.store, {
    path: '/chat',
    resource: 'chats',
    label: 'Chat',
    createSchema: CreateChat,
    updateSchema: CreateChat,
    listQuery: ChatListQuery,
    paged: true,
    without: ['create', 'update'],
    listEquals: (query) => ({
      id: (query.id as string | undefined) ?? splitIds(query.idAny),
      assistantId: (query.assistantId as string | undefined) ?? splitIds(query.assistantIdAny),
      squadId: query.squadId as string | undefined,
      sessionId: query.sessionId as string | undefined,
      previousChatId: query.previousChatId as string | undefined,
    }),
  });
}

/** `/chat` stream: `data: {id, sessionId?, path, delta}` lines; an `error` event on failure. */
async function* chatStream(
  service: ChatService,
  prepared: PreparedChat,
  signal: AbortSignal,
  request: FastifyRequest,
): AsyncGenerator<string> {
  const head = {
    id: prepared.id,
    ...(prepared.sessionId === undefined ? {} : { sessionId: prepared.sessionId }),
  };
  try {
    for await (const event of service.stream(prepared, signal)) {
      if (event.type === 'delta') {
        yield sseEvent({ ...head, path: 'chat.output[0].content', delta: event.text });
      }
    }
  } catch (error) {
    if (!signal.aborted) {
      yield sseEvent({ ...head, error: failureBody(error, request) }, 'error');
    }
  }
}

/** `/chat/responses` stream: the OpenAI Responses event sequence, or an `error` event. */
async function* responseStream(
  service: ChatService,
  prepared: PreparedChat,
  signal: AbortSignal,
  request: FastifyRequest,
): AsyncGenerator<string> {
  const writer = new ResponseEventWriter(prepared.id, prepared.createdAt);
  yield writer.opening();
  let text = '';
  try {
    for await (const event of service.stream(prepared, signal)) {
      if (event.type === 'delta') {
        text += event.text;
        yield writer.delta(event.text);
      }
    }
    yield writer.closing(text);
  } catch (error) {
    if (!signal.aborted) {
      const body = failureBody(error, request);
      const code = error instanceof ParlaError ? error.code : 'ERR_INTERNAL';
      yield writer.error(
        code,
        Array.isArray(body.message) ? body.message.join('; ') : body.message,
      );
    }
  }
}

function replyText(chat: Record<string, unknown>): string {
  const first = (chat.output as { content?: unknown }[] | undefined)?.[0];
  return typeof first?.content === 'string' ? first.content : '';
}

/** Errors after the stream started cannot change the status; they become an event instead. */
function failureBody(error: unknown, request: FastifyRequest): ErrorBody {
  if (error instanceof ParlaError && error.statusCode < 500) {
    return errorBody(error.statusCode, error.details);
  }
  request.log.error({ err: error }, 'chat stream failed');
  return error instanceof ParlaError
    ? errorBody(error.statusCode, error.details)
    : errorBody(500, 'Internal server error');
}

function sendEvents(reply: FastifyReply, events: AsyncGenerator<string>): FastifyReply {
  return reply
    .code(200)
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-cache')
    .header('x-accel-buffering', 'no')
    .send(Readable.from(events, { objectMode: false }));
}

/** Aborts the model request when the client goes away before the reply is complete. */
function abortWhenClosed(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableEnded) {
      controller.abort(new Error('the client closed the connection'));
    }
  });
  return controller.signal;
}
