import type { Doc } from '../../store/resource-store.js';
import { redactSecrets } from '../../store/secret-box.js';
import type { ToolCallRequest, ToolCallResult } from '../call-observer.js';
import {
  functionCallFields,
  parseFunctionCallReply,
  parseToolCallsReply,
  toolCallsFields,
  toolName,
} from './server-messages.js';
import { chooseServer } from './server-routing.js';
import type { ServerTarget } from './webhook-auth.js';
import type { WebhookSender } from './webhook-sender.js';

export interface ToolCallRunnerOptions {
  /** Tool definitions by the name the model calls them; the first of a name wins. */
  readonly tools: readonly Doc[];
  /** The call's server by precedence (assistant, phone number, org), for tools without one. */
  readonly server: ServerTarget | null;
  /** Whether the assistant subscribes to `tool-calls` (needed for tools without a server). */
  readonly subscribed: boolean;
  /**
   * Whether it subscribes to the legacy `function-call`: used for function tools without a
   * server of their own when `tool-calls` is not subscribed.
   */
  readonly functionCallSubscribed?: boolean;
  readonly sender: WebhookSender;
  /** Wraps a message's fields in the call's envelope. */
  readonly envelope: (type: string, fields: Doc) => Doc;
}

/** A call routed to the call's server as a legacy `function-call` message. */
interface LegacyRoute {
  readonly legacy: ServerTarget;
}

/**
 * Runs the model's tool calls through `tool-calls` server messages: each call goes to its tool's
 * own server, else the call's server; calls for one server share one message. When the assistant
 * subscribes to `function-call` but not `tool-calls`, a function tool without its own server is
 * sent instead as one legacy `function-call` message per call, one after the other, and the
 * reply's `result` is its result. Every call gets a result: the server's, or an error saying
 * why there is none.
 */
export class ToolCallRunner {
  readonly #options: ToolCallRunnerOptions;
  /** With secrets, for sending. */
  readonly #tools = new Map<string, Doc>();
  /** Without secrets, for `toolWithToolCallList`. */
  readonly #shown = new Map<string, Doc>();

  constructor(options: ToolCallRunnerOptions) {
    this.#options = options;
    for (const tool of options.tools) {
      const name =
        tool !== null && typeof tool === 'object' && !Array.isArray(tool) ? toolName(tool) : null;
      if (name !== null && !this.#tools.has(name)) {
        this.#tools.set(name, tool);
        this.#shown.set(name, redactSecrets(tool));
      }
    }
  }

  async run(toolCalls: readonly ToolCallRequest[]): Promise<ToolCallResult[]> {
    const results = new Map<string, ToolCallResult>();
    try {
      const groups = new Map<ServerTarget, ToolCallRequest[]>();
      const legacy: [ServerTarget, ToolCallRequest][] = [];
      for (const call of toolCalls) {
        const routed = this.#route(call);
        if (typeof routed === 'string') {
          results.set(call.id, { toolCallId: call.id, name: call.name, error: routed });
          continue;
        }
        if ('legacy' in routed) {
          legacy.push([routed.legacy, call]);
          continue;
        }
        const group = groups.get(routed) ?? [];
        group.push(call);
        groups.set(routed, group);
      }
      await Promise.all([
        ...[...groups].map(async ([server, calls]) => {
          const payload = this.#options.envelope('tool-calls', toolCallsFields(calls, this.#shown));
          const outcome = await this.#options.sender.send(server, payload, 'tool-calls');
          for (const result of parseToolCallsReply(calls, outcome)) {
            results.set(result.toolCallId, result);
          }
        }),
        this.#runLegacy(legacy, results),
      ]);
    } catch (error) {
      for (const call of toolCalls) {
        if (!results.has(call.id)) {
          results.set(call.id, { toolCallId: call.id, name: call.name, error: String(error) });
        }
      }
    }
    return toolCalls.map(
      (call) =>
        results.get(call.id) ?? { toolCallId: call.id, name: call.name, error: 'no result' },
    );
  }

  /** Legacy `function-call` messages, one at a time in the model's order. */
  async #runLegacy(
    calls: readonly [ServerTarget, ToolCallRequest][],
    results: Map<string, ToolCallResult>,
  ): Promise<void> {
    for (const [server, call] of calls) {
      const payload = this.#options.envelope('function-call', functionCallFields(call));
      const outcome = await this.#options.sender.send(server, payload, 'function-call');
      results.set(call.id, parseFunctionCallReply(call, outcome));
    }
  }

  /** A tool call's server, or why it cannot be sent anywhere. */
  #route(call: ToolCallRequest): ServerTarget | LegacyRoute | string {
    const tool = this.#tools.get(call.name);
    if (tool === undefined) {
      return `no tool named ${call.name}`;
    }
    const own = chooseServer({ assistant: {} }, tool);
    if (own !== null) {
      return own;
    }
    const type = typeof tool.type === 'string' ? tool.type : 'function';
    if (type !== 'function') {
      return `tools of type ${type} are not run through a server`;
    }
    const server = this.#options.server;
    if (this.#options.subscribed) {
      return server ?? `no server URL is set for tool ${call.name}`;
    }
    if (this.#options.functionCallSubscribed === true) {
      return server === null ? `no server URL is set for tool ${call.name}` : { legacy: server };
    }
    return 'neither tool-calls nor function-call is in the assistant serverMessages';
  }
}

/** The legacy `model.functions` ({name, description, parameters}) as function tools. */
export function legacyFunctionTools(model: Doc | undefined): Doc[] {
  const functions: unknown[] = Array.isArray(model?.functions) ? model.functions : [];
  return functions.flatMap((fn) =>
    fn !== null &&
    typeof fn === 'object' &&
    !Array.isArray(fn) &&
    typeof (fn as Doc).name === 'string' &&
    (fn as Doc).name !== ''
      ? [{ type: 'function', function: fn as Doc }]
      : [],
  );
}
