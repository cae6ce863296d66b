/** A tool call as the pipeline reports it: the model's JSON text as `arguments`. */
export interface ToolCallLike {
  readonly id: unknown;
  readonly name: unknown;
  readonly arguments: unknown;
}

/**
 * A tool call in the union shape clients and servers of every vintage read: `{id, type,
 * function: {name, arguments}}` (arguments as the model's JSON text) plus top-level `name`,
 * `arguments` (parsed when it is JSON) and `parameters` (the same object, for the oldest samples).
 * Used for both `tool-calls` client messages and server messages.
 */
export function toolCallItem(call: ToolCallLike): Record<string, unknown> {
  let parsed: unknown = call.arguments;
  if (typeof call.arguments === 'string') {
    try {
      parsed = JSON.parse(call.arguments) as unknown;
    } catch {
      // Not JSON: readers get the text as the model produced it.
    }
  }
  return {
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
    name: call.name,
    arguments: parsed,
    parameters: parsed,
  };
}
