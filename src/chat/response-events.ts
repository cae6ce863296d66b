/**
 * The OpenAI Responses-style view of a chat (POST /chat/responses): the ResponseObject and the
 * server-sent events of a streamed reply, in the order the OpenAI client expects them.
 */

export type ResponseStatus = 'in_progress' | 'completed' | 'failed';

export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  error: string | null;
  output: OutputMessage[];
}

interface OutputMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  status: 'in_progress' | 'completed';
  content: { type: 'output_text'; text: string; annotations: [] }[];
}

/** One SSE event, as written on the wire. */
export function sseEvent(data: unknown, event?: string): string {
  return `${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`;
}

/** The output item's id, derived from the chat's so the stream and the stored chat agree. */
export function outputItemId(chatId: string): string {
  return `msg_${chatId.replace(/-/g, '')}`;
}

export function responseObject(
  chatId: string,
  createdAt: Date | string,
  text: string | null,
  status: ResponseStatus = 'completed',
): ResponseObject {
  return {
    id: chatId,
    object: 'response',
    created_at: Math.floor(new Date(createdAt).getTime() / 1000),
    status,
    error: null,
    output:
      text === null
        ? []
        : [
            {
              id: outputItemId(chatId),
              type: 'message',
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text, annotations: [] }],
            },
          ],
  };
}

/** Builds the events of one streamed response, numbering them as it goes. */
export class ResponseEventWriter {
  readonly #id: string;
  readonly #itemId: string;
  readonly #createdAt: Date;
  #sequence = 0;

  constructor(chatId: string, createdAt: Date) {
    this.#id = chatId;
    this.#itemId = outputItemId(chatId);
    this.#createdAt = createdAt;
  }

  /** `response.created` … `response.content_part.added`: sent before the model answers. */
  opening(): string {
    const response = responseObject(this.#id, this.#createdAt, null, 'in_progress');
    const item = { id: this.#itemId, type: 'message', role: 'assistant', status: 'in_progress' };
    return [
      this.#event('response.created', { response }),
      this.#event('response.in_progress', { response }),
      this.#event('response.output_item.added', {
        output_index: 0,
        item: { ...item, content: [] },
      }),
      this.#event('response.content_part.added', {
        ...this.#position(),
        part: { type: 'output_text', text: '', annotations: [] },
      }),
    ].join('');
  }

  delta(text: string): string {
    return this.#event('response.output_text.delta', { ...this.#position(), delta: text });
  }

  /** The text and item are done, then `response.completed` with the whole response. */
  closing(text: string): string {
    const response = responseObject(this.#id, this.#createdAt, text);
    const part = { type: 'output_text', text, annotations: [] };
    return [
      this.#event('response.output_text.done', { ...this.#position(), text }),
      this.#event('response.content_part.done', { ...this.#position(), part }),
      this.#event('response.output_item.done', { output_index: 0, item: response.output[0] }),
      this.#event('response.completed', { response }),
    ].join('');
  }

  error(code: string, message: string): string {
    return this.#event('error', { code, message, param: null });
  }

  #position(): { item_id: string; output_index: number; content_index: number } {
    return { item_id: this.#itemId, output_index: 0, content_index: 0 };
  }

  #event(type: string, fields: Record<string, unknown>): string {
    return sseEvent({ type, ...fields, sequence_number: this.#sequence++ }, type);
  }
}
