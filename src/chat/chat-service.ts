import { newId } from '../core/ids.js';
import { badRequest, ParlaError } from '../core/errors.js';
import type {
  ModelProviderRegistry,
  ModelRequest,
  ModelToolCall,
} from '../providers/llm/model-provider.js';
import type { Doc, Resource } from '../store/resource-store.js';
import type { Store } from '../store/store.js';
import {
  countSources,
  deepMerge,
  defaultVariables,
  resolveAssistant,
  sourceFields,
  substituteVariables,
  type AssistantSource,
} from './assistant-config.js';
import { modelCost } from './chat-cost.js';
import {
  chatHistory,
  inputMessages,
  outputMessage,
  sessionEntries,
  toChatMessages,
  toModelMessage,
  type ChatInput,
  type ChatMessage,
} from './chat-messages.js';
import { findModelKey } from './model-key.js';
import { isSessionExpired } from './session-state.js';

/** The fields of POST /chat (and /chat/responses) that decide what is sent to the model. */
export interface ChatRequest extends Doc {
  input: ChatInput;
  assistantId?: string;
  assistant?: Doc;
  squadId?: string;
  squad?: Doc;
  assistantOverrides?: Doc;
  name?: string;
  sessionId?: string;
  previousChatId?: string;
}

/** A checked chat, ready to run: everything but the vendor key and the reply. */
export interface PreparedChat {
  id: string;
  orgId: string;
  sessionId?: string;
  createdAt: Date;
  provider: string;
  /** The assistant with overrides applied, secrets open: for the key lookup only. */
  assistant: Doc;
  request: Omit<ModelRequest, 'apiKey'>;
  /** This turn's input messages (appended to the session with the reply). */
  input: ChatMessage[];
  session: Resource | null;
  /** The chat document to store, without its result fields. */
  doc: Doc;
}

interface ChatContext {
  source: AssistantSource;
  history: ChatMessage[];
  session: Resource | null;
  /** Ids the stored chat records (session, previous chat, assistant or squad). */
  links: Doc;
  /** The overrides the stored chat records. */
  overrides: Doc | undefined;
}

function requireSource(context: ChatContext): ChatContext {
  if (countSources(context.source as unknown as Doc) === 0) {
    throw badRequest(
      'one of assistantId, assistant, squadId or squad is required (or a sessionId)',
    );
  }
  return context;
}

export type ChatEvent = { type: 'delta'; text: string } | { type: 'done'; chat: Resource };

const isObject = (value: unknown): value is Doc =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Runs text chats: resolves the assistant and history, calls the model, stores the chat. */
export class ChatService {
  readonly #store: Store;
  readonly #models: ModelProviderRegistry | undefined;
  readonly #now: () => Date;

  constructor(store: Store, models: ModelProviderRegistry | undefined, now = () => new Date()) {
    this.#store = store;
    this.#models = models;
    this.#now = now;
  }

  /** Checks the request against the store; throws 400s for anything wrong with it. */
  async prepare(orgId: string, body: ChatRequest): Promise<PreparedChat> {
    const now = this.#now();
    if (body.sessionId !== undefined && body.previousChatId !== undefined) {
      throw badRequest('sessionId and previousChatId cannot be used together');
    }
    if (countSources(body) > 1) {
      throw badRequest('only one of assistantId, assistant, squadId or squad can be given');
    }
    const { source, history, session, links, overrides } = await this.#context(orgId, body, now);
    const { assistant, variables } = await resolveAssistant(this.#store, orgId, source);
    const model = assistant.model;
    if (!isObject(model) || typeof model.provider !== 'string') {
      throw badRequest('the assistant has no model');
    }
    const provider = model.provider;
    if (typeof model.model !== 'string' || model.model === '') {
      throw badRequest('assistant.model.model should not be empty');
    }
    if (this.#models?.get(provider) === undefined) {
      throw badRequest(`model provider ${provider} is not available for chats on this server`);
    }
    if (provider === 'custom-llm' && typeof model.url !== 'string') {
      throw badRequest('assistant.model.url is required for the custom-llm provider');
    }

    const allVariables = deepMerge(
      {
        ...defaultVariables(now),
        ...(isObject(session?.customer) ? { customer: session.customer } : {}),
      },
      variables,
    );
    const configured = toChatMessages(Array.isArray(model.messages) ? model.messages : []).map(
      (m) =>
        m.content === null ? m : { ...m, content: substituteVariables(m.content, allVariables) },
    );
    const input = inputMessages(body.input);
    const messages = [...configured, ...history, ...input];
    const id = newId();
    return {
      id,
      orgId,
      ...(session === null ? {} : { sessionId: session.id }),
      createdAt: now,
      provider,
      assistant,
      request: {
        model: model.model,
        messages: messages.map(toModelMessage),
        ...(typeof model.temperature === 'number' ? { temperature: model.temperature } : {}),
        ...(typeof model.maxTokens === 'number' ? { maxTokens: model.maxTokens } : {}),
        ...(provider === 'custom-llm' ? { baseUrl: model.url as string } : {}),
      },
      input,
      session,
      doc: {
        ...links,
        ...(overrides === undefined ? {} : { assistantOverrides: overrides }),
        ...(body.name === undefined ? {} : { name: body.name }),
        input: body.input,
        messages,
      },
    };
  }

  /**
   * Calls the model, yielding text as it arrives, then stores the chat (and extends the
   * session) and yields it. Throws 400 without a key, ProviderError when the vendor fails.
   */
  async *stream(prepared: PreparedChat, signal: AbortSignal): AsyncGenerator<ChatEvent> {
    const provider = this.#models?.get(prepared.provider);
    if (provider === undefined) {
      throw badRequest(`model provider ${prepared.provider} is not available for chats`);
    }
    const apiKey = await findModelKey(
      this.#store,
      prepared.orgId,
      prepared.assistant,
      prepared.provider,
      this.#models,
    );
    if (apiKey === null && prepared.provider !== 'custom-llm') {
      throw new ParlaError(
        'ERR_BAD_REQUEST',
        `no API key for model provider ${prepared.provider}: add one to the assistant's credentials, create a ${prepared.provider} credential, or configure the server's default key`,
      );
    }
    let text = '';
    const toolCalls: ModelToolCall[] = [];
    let promptTokens = 0;
    let completionTokens = 0;
    for await (const event of provider.stream({ ...prepared.request, apiKey }, signal)) {
      if (event.type === 'text') {
        text += event.delta;
        yield { type: 'delta', text: event.delta };
      } else if (event.type === 'tool-call') {
        toolCalls.push(event.call);
      } else if (event.type === 'usage') {
        promptTokens = event.promptTokens;
        completionTokens = event.completionTokens;
      }
    }
    const output = [outputMessage(text, toolCalls)];
    const cost = modelCost(
      prepared.provider,
      prepared.request.model,
      promptTokens,
      completionTokens,
    );
    const chat = await this.#store.resources.chats.create(
      prepared.orgId,
      { ...prepared.doc, output, cost: cost.cost, costs: [cost] },
      prepared.id,
    );
    if (prepared.session !== null) {
      await this.#appendToSession(prepared.session, [...prepared.input, ...output]);
    }
    yield { type: 'done', chat };
  }

  /** The whole reply at once: the stored chat. */
  async complete(prepared: PreparedChat, signal: AbortSignal): Promise<Resource> {
    for await (const event of this.stream(prepared, signal)) {
      if (event.type === 'done') {
        return event.chat;
      }
    }
    throw new ParlaError('ERR_INTERNAL', 'the chat ended without a result');
  }

  /** Where the assistant and the history come from: the session, the previous chat or the body. */
  async #context(orgId: string, body: ChatRequest, now: Date): Promise<ChatContext> {
    const given = countSources(body);
    const own = body.assistantOverrides === undefined ? [] : [body.assistantOverrides];
    if (body.sessionId !== undefined) {
      if (given > 0) {
        throw badRequest(
          'a session is tied to one assistant: leave out assistantId, assistant, squadId and squad when sending sessionId',
        );
      }
      const session = await this.#store.resources.sessions.getInternal(orgId, body.sessionId);
      if (session === null) {
        throw badRequest(`session with id ${body.sessionId} not found`);
      }
      if (isSessionExpired(session, now)) {
        throw badRequest(`session ${body.sessionId} has expired`);
      }
      if (countSources(session) === 0) {
        throw badRequest(`session ${body.sessionId} has no assistant or squad`);
      }
      const first = isObject(session.assistantOverrides) ? [session.assistantOverrides] : [];
      return {
        source: { ...sourceFields(session), overrides: [...first, ...own] },
        history: toChatMessages(Array.isArray(session.messages) ? session.messages : []),
        session,
        links: {
          sessionId: session.id,
          assistantId: session.assistantId,
          squadId: session.squadId,
        },
        overrides: body.assistantOverrides,
      };
    }
    const fromBody = { ...sourceFields(body), overrides: own };
    if (body.previousChatId === undefined) {
      return requireSource({
        source: fromBody,
        history: [],
        session: null,
        links: sourceFields(body),
        overrides: body.assistantOverrides,
      });
    }
    const previous = await this.#store.resources.chats.getInternal(orgId, body.previousChatId);
    if (previous === null) {
      throw badRequest(`chat with id ${body.previousChatId} not found`);
    }
    const context: ChatContext = {
      source: fromBody,
      history: chatHistory(previous),
      session: null,
      links: { previousChatId: previous.id, ...sourceFields(body) },
      overrides: body.assistantOverrides,
    };
    if (given === 0) {
      // Continue with the previous chat's assistant and its overrides, this chat's own on top.
      const inherited = isObject(previous.assistantOverrides) ? previous.assistantOverrides : {};
      context.overrides = deepMerge(inherited, body.assistantOverrides ?? {});
      context.source = { ...sourceFields(previous), overrides: [context.overrides] };
      Object.assign(context.links, sourceFields(previous));
    }
    return requireSource(context);
  }

  async #appendToSession(session: Resource, messages: ChatMessage[]): Promise<void> {
    const entries = sessionEntries(messages, this.#now(), session.createdAt);
    // Under the row lock, so chats on one session running at once do not lose each other's turns.
    await this.#store.resources.sessions.update(session.orgId, session.id, (current) => ({
      ...current,
      messages: [
        ...(Array.isArray(current.messages) ? (current.messages as unknown[]) : []),
        ...entries,
      ],
    }));
  }
}
