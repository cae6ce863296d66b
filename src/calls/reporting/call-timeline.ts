import type { ModelMessage } from '../../providers/llm/model-provider.js';
import type { Doc } from '../../store/resource-store.js';
import type { ObservedEvent, ToolCallRequest, ToolCallResult } from '../call-observer.js';

type Role = 'system' | 'user' | 'bot' | 'tool_calls' | 'tool_call_result';

interface TimedMessage {
  readonly role: Role;
  readonly message: string;
  /** Epoch ms. */
  readonly time: number;
  readonly endTime: number;
  readonly toolCalls?: readonly ToolCallRequest[];
  readonly result?: ToolCallResult;
}

interface OpenUserMessage {
  parts: string[];
  time: number;
  endTime: number;
}

export interface TranscriptNames {
  readonly assistantName: string;
  readonly userName: string;
  readonly enabled: boolean;
}

/** Most messages a call's artifact keeps; past it the oldest turns are dropped (system kept). */
const MAX_MESSAGES = 5000;
/** Most turns `performanceMetrics.turnLatencies` keeps (the first ones). */
const MAX_TURN_LATENCIES = 1000;

/**
 * The pipeline's per-turn latency names (src/pipeline/metrics/turn-metrics.ts) → the hosted
 * platform's `artifact.performanceMetrics.turnLatencies[]` fields, all in ms.
 */
const TURN_LATENCY_FIELDS = [
  ['transcriberFinalisationMs', 'transcriberLatency'],
  ['endpointingMs', 'endpointingLatency'],
  ['modelFirstTokenMs', 'modelLatency'],
  ['voiceFirstByteMs', 'voiceLatency'],
  ['voiceToVoiceMs', 'turnLatency'],
] as const;

type TurnLatencyRow = Partial<Record<(typeof TURN_LATENCY_FIELDS)[number][1], number>>;

/**
 * The conversation as the artifact shows it: system prompt, user and bot turns with their times
 * (from speech-updates and final transcripts), tool calls and their results. Feed it events in
 * order with their epoch time; read `messages()`, `openAIMessages()` and `transcript()`.
 */
export class CallTimeline {
  #startEpochMs: number;
  #system: TimedMessage | null = null;
  readonly #messages: TimedMessage[] = [];
  readonly #turnLatencies: TurnLatencyRow[] = [];
  #openUser: OpenUserMessage | null = null;
  #userSpeechStartMs: number | null = null;
  #assistantStartMs: number | null = null;
  #assistantStopMs: number | null = null;
  /** Changes whenever what the artifact shows changes, so callers can cache it. */
  version = 0;

  constructor(startEpochMs: number) {
    this.#startEpochMs = startEpochMs;
  }

  /** When the call started (secondsFromStart counts from here). */
  set startEpochMs(value: number) {
    this.#startEpochMs = value;
    this.version += 1;
  }

  onEvent(event: ObservedEvent, epochMs: number): void {
    switch (event.type) {
      case 'speech-update':
        this.#onSpeech(event, epochMs);
        break;
      case 'transcript':
        if (event.transcriptType === 'final' && typeof event.transcript === 'string') {
          this.#onFinal(
            event.role === 'assistant' ? 'assistant' : 'user',
            event.transcript,
            epochMs,
          );
        }
        break;
      case 'conversation-update':
        this.#onHistory(event.messages, epochMs);
        break;
      case 'metrics':
        this.#onMetrics(event.latency);
        break;
      default:
        break;
    }
  }

  addToolCalls(toolCalls: readonly ToolCallRequest[], epochMs: number): void {
    this.#closeUser();
    this.#push({ role: 'tool_calls', message: '', time: epochMs, endTime: epochMs, toolCalls });
  }

  addToolResult(result: ToolCallResult, epochMs: number): void {
    const text = result.error ?? result.result ?? '';
    this.#push({
      role: 'tool_call_result',
      message: text,
      time: epochMs,
      endTime: epochMs,
      result,
    });
  }

  /** Closes the customer's last words (the call ended). */
  finish(): void {
    this.#closeUser();
  }

  /** Transcript-style items: `{role, message, time, endTime, secondsFromStart, duration}`. */
  messages(): Doc[] {
    return this.#ordered().map((item) => {
      const common = {
        time: item.time,
        secondsFromStart: Math.max(0, (item.time - this.#startEpochMs) / 1000),
      };
      if (item.role === 'tool_calls') {
        return {
          role: item.role,
          toolCalls: (item.toolCalls ?? []).map(openAIToolCall),
          message: '',
          ...common,
        };
      }
      if (item.role === 'tool_call_result') {
        const result = item.result;
        return {
          role: item.role,
          toolCallId: result?.toolCallId,
          name: result?.name,
          result: item.message,
          ...(result?.error !== undefined ? { error: result.error } : {}),
          ...common,
        };
      }
      return {
        role: item.role,
        message: item.message,
        ...common,
        endTime: item.endTime,
        duration: Math.max(0, item.endTime - item.time),
      };
    });
  }

  /** The same conversation in OpenAI chat format. */
  openAIMessages(): Doc[] {
    return this.#ordered().map((item) => {
      switch (item.role) {
        case 'system':
          return { role: 'system', content: item.message };
        case 'user':
          return { role: 'user', content: item.message };
        case 'bot':
          return { role: 'assistant', content: item.message };
        case 'tool_calls':
          return {
            role: 'assistant',
            content: null,
            tool_calls: (item.toolCalls ?? []).map(openAIToolCall),
          };
        case 'tool_call_result':
          return { role: 'tool', tool_call_id: item.result?.toolCallId, content: item.message };
      }
    });
  }

  /** `AI: …` / `User: …` lines (names from artifactPlan.transcriptPlan). */
  transcript(names: TranscriptNames): string {
    if (!names.enabled) {
      return '';
    }
    const lines: string[] = [];
    for (const item of this.#ordered()) {
      if (item.role === 'user' || item.role === 'bot') {
        lines.push(
          `${item.role === 'bot' ? names.assistantName : names.userName}: ${item.message}`,
        );
      }
    }
    return lines.join('\n');
  }

  #ordered(): TimedMessage[] {
    const items = [...this.#messages];
    const open = this.#openUser;
    if (open !== null) {
      items.push({
        role: 'user',
        message: open.parts.join(' '),
        time: open.time,
        endTime: open.endTime,
      });
    }
    // Stable sort: a bot turn interrupted by the customer started before the words that cut it.
    items.sort((a, b) => a.time - b.time);
    return this.#system === null ? items : [this.#system, ...items];
  }

  /**
   * `artifact.performanceMetrics`: one row per answered turn, stages the pipeline could not time
   * left out, and the average of each field over the turns that have it.
   */
  performanceMetrics(): Doc {
    const metrics: Doc = { turnLatencies: this.#turnLatencies.map((row) => ({ ...row })) };
    for (const [, name] of TURN_LATENCY_FIELDS) {
      let sum = 0;
      let count = 0;
      for (const row of this.#turnLatencies) {
        const ms = row[name];
        if (ms !== undefined) {
          sum += ms;
          count += 1;
        }
      }
      if (count > 0) {
        metrics[`${name}Average`] = sum / count;
      }
    }
    return metrics;
  }

  #onMetrics(latency: unknown): void {
    if (
      latency === null ||
      typeof latency !== 'object' ||
      this.#turnLatencies.length >= MAX_TURN_LATENCIES
    ) {
      return;
    }
    const row: TurnLatencyRow = {};
    for (const [from, to] of TURN_LATENCY_FIELDS) {
      const ms = (latency as Record<string, unknown>)[from];
      if (typeof ms === 'number' && Number.isFinite(ms) && ms >= 0) {
        row[to] = ms;
      }
    }
    this.#turnLatencies.push(row);
    this.version += 1;
  }

  #onSpeech(event: ObservedEvent, epochMs: number): void {
    const started = event.status === 'started';
    if (event.role === 'assistant') {
      if (started) {
        this.#closeUser();
        this.#assistantStartMs = epochMs;
        this.#assistantStopMs = null;
      } else {
        this.#assistantStopMs = epochMs;
      }
    } else if (started && this.#openUser === null) {
      this.#userSpeechStartMs = epochMs;
    }
  }

  #onFinal(role: 'user' | 'assistant', text: string, epochMs: number): void {
    const trimmed = text.trim();
    if (trimmed === '') {
      return;
    }
    if (role === 'user') {
      if (this.#openUser === null) {
        this.#openUser = { parts: [], time: this.#userSpeechStartMs ?? epochMs, endTime: epochMs };
        this.#userSpeechStartMs = null;
      }
      this.#openUser.parts.push(trimmed);
      this.#openUser.endTime = epochMs;
      this.version += 1;
      return;
    }
    this.#closeUser();
    const time = this.#assistantStartMs ?? epochMs;
    const stop = this.#assistantStopMs;
    const endTime = stop !== null && stop >= time ? Math.max(stop, time) : epochMs;
    this.#assistantStartMs = null;
    this.#assistantStopMs = null;
    this.#push({ role: 'bot', message: trimmed, time, endTime });
  }

  #onHistory(messages: unknown, epochMs: number): void {
    if (this.#system !== null || !Array.isArray(messages)) {
      return;
    }
    const first = messages[0] as ModelMessage | undefined;
    if (first?.role === 'system' && typeof first.content === 'string') {
      this.#system = { role: 'system', message: first.content, time: epochMs, endTime: epochMs };
      this.version += 1;
    }
  }

  #closeUser(): void {
    const open = this.#openUser;
    if (open === null) {
      return;
    }
    this.#openUser = null;
    this.#push({
      role: 'user',
      message: open.parts.join(' '),
      time: open.time,
      endTime: open.endTime,
    });
  }

  #push(message: TimedMessage): void {
    if (this.#messages.length >= MAX_MESSAGES) {
      this.#messages.shift();
    }
    this.#messages.push(message);
    this.version += 1;
  }
}

function openAIToolCall(call: ToolCallRequest): Doc {
  return {
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  };
}

/** The pipeline's model history in OpenAI chat format (conversation-update). */
export function modelMessagesToOpenAI(messages: unknown): Doc[] {
  if (!Array.isArray(messages)) {
    return [];
  }
  return (messages as ModelMessage[]).map((message) => {
    const out: Doc = { role: message.role, content: message.content };
    if (message.toolCalls !== undefined && message.toolCalls.length > 0) {
      out.tool_calls = message.toolCalls.map((call) => openAIToolCall(call));
    }
    if (message.toolCallId !== undefined) {
      out.tool_call_id = message.toolCallId;
    }
    return out;
  });
}
