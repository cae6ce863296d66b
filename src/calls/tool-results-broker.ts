import type { ToolCallResult } from '../pipeline/conversation/options.js';
import type { ModelToolCall } from '../providers/llm/model-provider.js';
import { isRecord, stringOr } from './pipeline-call-options.js';

/** A tool call the host has not answered this long gets an error result. */
export const TOOL_RESULT_TIMEOUT_MS = 20_000;

interface PendingTools {
  readonly ids: readonly string[];
  readonly results: Map<string, ToolCallResult>;
  readonly resolve: (results: readonly ToolCallResult[]) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * The pipeline's runTools: each batch of tool calls waits for the host's `tool-results` message
 * (the pipeline has already emitted `tool-calls`); a call not answered within
 * TOOL_RESULT_TIMEOUT_MS gets an error result. Interruption or the end of the call drops the batch.
 */
export class ToolResultsBroker {
  readonly #pending = new Set<PendingTools>();

  wait(
    toolCalls: readonly ModelToolCall[],
    _turnId: number,
    signal: AbortSignal,
  ): Promise<readonly ToolCallResult[]> {
    return new Promise((resolve) => {
      const batch: PendingTools = {
        ids: toolCalls.map((call) => call.id),
        results: new Map(),
        resolve,
        timer: setTimeout(
          () => this.#settle(batch, 'no result from the tool server'),
          TOOL_RESULT_TIMEOUT_MS,
        ),
      };
      batch.timer.unref();
      this.#pending.add(batch);
      signal.addEventListener('abort', () => this.#settle(batch, 'cancelled'), { once: true });
    });
  }

  /** A `tool-results` message's `results`: `[{toolCallId, name?, result?, error?}]`. */
  resolve(results: unknown): void {
    if (!Array.isArray(results)) {
      throw new TypeError('tool-results: results must be an array');
    }
    for (const entry of results) {
      if (!isRecord(entry) || typeof entry.toolCallId !== 'string') {
        continue;
      }
      for (const batch of this.#pending) {
        if (batch.ids.includes(entry.toolCallId)) {
          const name = stringOr(entry.name);
          const error = stringOr(entry.error);
          batch.results.set(entry.toolCallId, {
            toolCallId: entry.toolCallId,
            ...(name === undefined ? {} : { name }),
            ...(error === undefined ? { result: entry.result } : { error }),
          });
          if (batch.results.size === batch.ids.length) {
            this.#settle(batch, '');
          }
        }
      }
    }
  }

  cancel(): void {
    for (const batch of [...this.#pending]) {
      this.#settle(batch, 'the call ended');
    }
  }

  #settle(batch: PendingTools, missingError: string): void {
    if (!this.#pending.delete(batch)) {
      return;
    }
    clearTimeout(batch.timer);
    batch.resolve(
      batch.ids.map(
        (id) => batch.results.get(id) ?? { toolCallId: id, error: missingError || 'no result' },
      ),
    );
  }
}
