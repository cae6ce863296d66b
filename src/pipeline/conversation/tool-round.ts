import type { ModelToolCall } from '../../providers/llm/model-provider.js';
import type { ToolCallResult, ToolRunner } from './options.js';

export interface ToolRoundOutcome {
  readonly results: readonly ToolCallResult[];
  /** One of the calls was to an end-call tool. */
  readonly endsCall: boolean;
}

/** What the model is told an end-call tool did. */
const END_CALL_RESULT = 'The call is ending.';

/**
 * Runs one round of tool calls: end-call tools are answered here, the others go to the owner's
 * runner (without one, each gets the error "no tool runner"; a runner that throws gives every
 * call its message as the error). Resolves with null if `signal` aborts meanwhile.
 */
export async function runToolRound(
  calls: readonly ModelToolCall[],
  turnId: number,
  signal: AbortSignal,
  runTools: ToolRunner | undefined,
  endCallToolNames: readonly string[],
): Promise<ToolRoundOutcome | null> {
  const endCalls = calls.filter((call) => endCallToolNames.includes(call.name));
  const others = calls.filter((call) => !endCallToolNames.includes(call.name));
  const results: ToolCallResult[] = endCalls.map((call) => ({
    toolCallId: call.id,
    name: call.name,
    result: END_CALL_RESULT,
  }));
  if (others.length > 0) {
    if (runTools === undefined) {
      for (const call of others) {
        results.push({ toolCallId: call.id, name: call.name, error: 'no tool runner' });
      }
    } else {
      try {
        results.push(...(await runTools(others, turnId, signal)));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        for (const call of others) {
          results.push({ toolCallId: call.id, name: call.name, error: message });
        }
      }
    }
  }
  if (signal.aborted) {
    return null;
  }
  return { results, endsCall: endCalls.length > 0 };
}
