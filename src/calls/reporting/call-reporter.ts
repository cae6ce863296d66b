import { performance } from 'node:perf_hooks';
import { newId } from '../../core/ids.js';
import type { LogEntry } from '../../store/log-store.js';
import type { Doc, ResourceStore } from '../../store/resource-store.js';
import { redactSecrets } from '../../store/secret-box.js';
import type {
  CallObserver,
  ObservedEvent,
  ToolCallRequest,
  ToolCallResult,
  TransferDestinationReply,
  TransferDestinationRequest,
} from '../call-observer.js';
import type { PipelineCallParams } from '../pipeline-call-params.js';
import { callCosts, type CostItem } from './call-costs.js';
import { CallRecording } from './call-recording.js';
import { CallTimeline, modelMessagesToOpenAI } from './call-timeline.js';
import { analyseTimeline, liveArtifact } from './ended-call-views.js';
import { MessageQueue } from './message-queue.js';
import type { PriceTable } from './price-table.js';
import {
  finishRecording,
  recordingTargets,
  type RecordingTargets,
  type RecordingUrls,
} from './recording-files.js';
import { eventMessage } from './server-messages.js';
import { legacyFunctionTools, ToolCallRunner } from './tool-call-runner.js';
import { chooseServer, sendAs, subscribedTypes } from './server-routing.js';
import type { ServerTarget } from './webhook-auth.js';
import { askTransferDestination } from './transfer-destination-reply.js';
import { WebhookSender, webhookLogContext } from './webhook-sender.js';
import { UsageCounter } from './usage-counter.js';

export interface CallReporterDeps {
  readonly orgId: string;
  /** The stored call as it started (id, type, transport, customer, phoneNumberId, …). */
  readonly call: Doc;
  /** The assistant as this call runs it (overrides merged). Secrets are removed before sending. */
  readonly assistant: Doc;
  readonly phoneNumber?: Doc | null;
  /** Tool definitions beyond `assistant.model.tools` (the resolved `model.toolIds`). */
  readonly tools?: readonly Doc[];
  /** The org's server; Parla keeps none per org yet (see docs/server-messages.md). */
  readonly orgServer?: ServerTarget | null;
  /**
   * The call's vendor keys and server settings (its PipelineCallParams): the analysisPlan runs on
   * the assistant's model with them. Without them `analysis.errors` says analysis is unavailable.
   */
  readonly callParams?: Pick<PipelineCallParams, 'credentials' | 'providers'>;
  readonly variableValues?: Readonly<Record<string, unknown>>;
  readonly store: {
    readonly resources: { readonly files: ResourceStore; readonly credentials: ResourceStore };
    readonly logs?: { append(entry: LogEntry): void };
  };
  readonly filesDir: string;
  /** Base of file URLs, no trailing slash. */
  readonly publicUrl: string;
  readonly prices: PriceTable;
  readonly fetch?: typeof fetch;
  /** Epoch ms (message timestamps, artifact times). */
  readonly now?: () => number;
  /** Monotonic ms placing audio on the recording's timeline. */
  readonly monotonicNowMs?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly maxQueuedMessages?: number;
  readonly maxReplyBytes?: number;
}

/** A CallObserver that also tells when its queued messages have gone out. */
export interface CallReporter extends CallObserver {
  /** Resolves when every message queued so far has been sent (or given up on). */
  drained(): Promise<void>;
  /** Messages dropped because the server fell behind. */
  readonly droppedMessages: number;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function obj(value: unknown): Doc | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Doc)
    : undefined;
}

export function createCallReporter(deps: CallReporterDeps): CallReporter {
  return new Reporter(deps);
}

class Reporter implements CallReporter {
  readonly #deps: CallReporterDeps;
  readonly #now: () => number;
  readonly #sender: WebhookSender;
  readonly #queue: MessageQueue;
  readonly #subscribed: ReadonlySet<string>;
  readonly #server: ServerTarget | null;
  readonly #toolRunner: ToolCallRunner;
  readonly #timeline: CallTimeline;
  readonly #usage = new UsageCounter();
  readonly #recording: CallRecording | null;
  readonly #targets: RecordingTargets | null;
  readonly #assistantView: Doc;
  readonly #phoneNumberView: Doc | null;
  #call: Doc;
  #callView: Doc;
  #status: unknown;
  #epochOffsetMs: number | null = null;
  #artifactCache: { version: number; artifact: Doc } | null = null;
  #ended = false;
  /** In progress (or forwarding) since the status went in-progress: audio is recorded. */
  #live = false;
  #endedFields: Promise<Doc> | null = null;
  readonly #createdEpochMs: number;
  readonly #monotonicNowMs: () => number;

  constructor(deps: CallReporterDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
    this.#monotonicNowMs = deps.monotonicNowMs ?? (() => performance.now());
    this.#call = deps.call;
    this.#callView = redactSecrets(deps.call);
    this.#status = deps.call.status;
    this.#assistantView = redactSecrets(deps.assistant);
    this.#phoneNumberView = deps.phoneNumber == null ? null : redactSecrets(deps.phoneNumber);
    this.#subscribed = subscribedTypes(deps.assistant);
    this.#server = chooseServer(this.#sources());
    this.#queue = new MessageQueue(deps.maxQueuedMessages);
    this.#createdEpochMs = this.#now();
    this.#timeline = new CallTimeline(this.#createdEpochMs);
    this.#sender = new WebhookSender({
      logContext: webhookLogContext(deps.orgId, deps.call),
      credential: (id) => deps.store.resources.credentials.getInternal(deps.orgId, id),
      ...(deps.store.logs !== undefined ? { logs: deps.store.logs } : {}),
      ...(deps.fetch !== undefined ? { fetch: deps.fetch } : {}),
      ...(deps.maxReplyBytes !== undefined ? { maxReplyBytes: deps.maxReplyBytes } : {}),
      ...(deps.sleep !== undefined ? { sleep: deps.sleep } : {}),
      now: this.#now,
    });
    const model = obj(deps.assistant.model);
    this.#toolRunner = new ToolCallRunner({
      tools: [
        ...(Array.isArray(model?.tools) ? (model.tools as Doc[]) : []),
        ...(deps.tools ?? []),
        ...legacyFunctionTools(model),
      ],
      server: this.#server,
      subscribed: this.#subscribed.has('tool-calls'),
      functionCallSubscribed: this.#subscribed.has('function-call'),
      sender: this.#sender,
      envelope: (type, fields) => this.#envelope(type, fields),
    });
    const plan = obj(deps.assistant.artifactPlan);
    const callId = str(deps.call.id);
    if (plan?.recordingEnabled !== false && callId !== undefined) {
      this.#targets = recordingTargets(deps.filesDir, deps.orgId, newId(), newId());
      this.#recording = new CallRecording({
        monoPath: this.#targets.monoPath,
        stereoPath: this.#targets.stereoPath,
        nowMs: this.#monotonicNowMs,
      });
    } else {
      this.#targets = null;
      this.#recording = null;
    }
  }

  get droppedMessages(): number {
    return this.#queue.droppedCount;
  }

  drained(): Promise<void> {
    return this.#queue.drained();
  }

  onStatus(call: Doc): void {
    try {
      this.#setCall(call);
      if (call.status === this.#status) {
        return;
      }
      this.#status = call.status;
      const startedAt = str(call.startedAt);
      if (
        call.status === 'in-progress' &&
        startedAt !== undefined &&
        !Number.isNaN(Date.parse(startedAt))
      ) {
        this.#timeline.startEpochMs = Date.parse(startedAt);
      }
      const fields: Doc = { status: call.status };
      if (call.status === 'ended' && call.endedReason !== undefined) {
        fields.endedReason = call.endedReason;
      }
      if (call.status === 'forwarding') {
        // Reference 3.2: a forwarding update carries the conversation so far and the destination.
        const artifact = this.#liveArtifact();
        fields.messages = artifact.messages;
        fields.messagesOpenAIFormatted = artifact.messagesOpenAIFormatted;
        fields.transcript = artifact.transcript;
        if (obj(call.destination) !== undefined) {
          fields.destination = call.destination;
        }
      }
      this.#enqueue('status-update', fields, true);
      if (call.status === 'in-progress' && !this.#live && !this.#ended) {
        // The recording covers the call from here (through forwarding) to its end: audio
        // while ringing, as the worker started, is not part of it.
        this.#live = true;
        this.#recording?.startAt(this.#monotonicNowMs());
        // The pipeline is running: its assistant started (once, not again after forwarding).
        this.#enqueue('assistant.started', { newAssistant: this.#assistantView }, true);
      } else if (call.status === 'ended') {
        this.#live = false;
      }
    } catch {
      // Reporting must never disturb the call.
    }
  }

  onPipelineEvent(event: ObservedEvent): void {
    try {
      const epochMs = this.#epochOf(event.atMs);
      this.#timeline.onEvent(event, epochMs);
      this.#usage.onEvent(event);
      if (event.type === 'conversation-update') {
        this.#enqueue(
          'conversation-update',
          {
            messages: this.#timeline.messages(),
            messagesOpenAIFormatted: modelMessagesToOpenAI(event.messages),
          },
          false,
        );
        return;
      }
      const message = eventMessage(event);
      if (message === null) {
        return;
      }
      const type = sendAs(this.#subscribed, message.type, str(event.transcriptType));
      if (type !== null) {
        this.#enqueue(type, message.fields, message.keep, true);
      }
    } catch {
      // As above.
    }
  }

  onAudio(role: 'user' | 'assistant', samples: Int16Array, sampleRateHz: number): void {
    try {
      if (role === 'assistant') {
        this.#usage.addAssistantAudio(samples.length, sampleRateHz);
      }
      if (this.#live) {
        this.#recording?.push(role, samples, sampleRateHz);
      }
    } catch {
      // As above.
    }
  }

  async onToolCalls(
    toolCalls: readonly ToolCallRequest[],
    _turnId: number,
  ): Promise<ToolCallResult[]> {
    this.#timeline.addToolCalls(toolCalls, this.#now());
    const ordered = await this.#toolRunner.run(toolCalls);
    const epochMs = this.#now();
    for (const result of ordered) {
      this.#timeline.addToolResult(result, epochMs);
    }
    return ordered;
  }

  async onTransferDestinationRequest(
    _request: TransferDestinationRequest,
  ): Promise<TransferDestinationReply> {
    const server = this.#server;
    if (server === null || this.#ended || !this.#subscribed.has('transfer-destination-request')) {
      return {};
    }
    // Common fields only (reference 3.2); sent at once, not behind the queued messages.
    return askTransferDestination(() =>
      this.#sender.send(
        server,
        this.#envelope('transfer-destination-request', {}),
        'transfer-destination-request',
      ),
    );
  }

  onEnded(call: Doc): Promise<Doc> {
    this.#endedFields ??= this.#end(call);
    return this.#endedFields;
  }

  async #end(call: Doc): Promise<Doc> {
    this.#ended = true;
    let recordingUrls: RecordingUrls = {};
    let artifact: Doc = {};
    let costs: CostItem[] = [];
    let cost = 0;
    let analysis: Doc = {};
    try {
      this.#setCall(call);
      this.#timeline.finish();
      recordingUrls =
        this.#recording === null || this.#targets === null
          ? {}
          : await finishRecording(this.#recording, this.#targets, {
              files: this.#deps.store.resources.files,
              filesDir: this.#deps.filesDir,
              publicUrl: this.#deps.publicUrl,
              orgId: this.#deps.orgId,
              callId: str(call.id) ?? str(this.#deps.call.id) ?? '',
            });
      artifact = { ...this.#liveArtifact(), ...recordingUrls };
      const endedAt = Date.parse(str(call.endedAt) ?? '');
      const usage = this.#usage.usage(
        Number.isNaN(endedAt) ? { ...call, endedAt: new Date(this.#now()).toISOString() } : call,
        this.#deps,
        this.#createdEpochMs,
      );
      const analysed = await analyseTimeline(
        this.#timeline,
        this.#deps.assistant,
        this.#deps.callParams,
        str(call.endedReason) ?? '',
      );
      analysis = analysed.analysis;
      ({ costs, cost } = callCosts(this.#deps.prices, usage, analysed.usage));
    } catch {
      // Whatever could be built is reported; the call must end regardless.
    }
    this.#enqueue(
      'end-of-call-report',
      {
        endedReason: call.endedReason,
        startedAt: call.startedAt,
        endedAt: call.endedAt,
        cost,
        costs,
        artifact,
        analysis,
        transcript: artifact.transcript,
        messages: artifact.messages,
        ...recordingUrls,
      },
      true,
    );
    return { artifact, costs, cost, analysis };
  }

  #sources() {
    return {
      assistant: this.#deps.assistant,
      phoneNumber: this.#deps.phoneNumber ?? null,
      orgServer: this.#deps.orgServer ?? null,
    };
  }

  #setCall(call: Doc): void {
    this.#call = { ...this.#call, ...call };
    this.#callView = redactSecrets(this.#call);
  }

  /** Media-clock ms → epoch ms, anchored on the first event (the worker's clock has its own origin). */
  #epochOf(atMs: number): number {
    if (this.#epochOffsetMs === null) {
      this.#epochOffsetMs = this.#now() - atMs;
    }
    return atMs + this.#epochOffsetMs;
  }

  #liveArtifact(): Doc {
    const version = this.#timeline.version;
    if (this.#artifactCache?.version === version) {
      return this.#artifactCache.artifact;
    }
    const artifact = liveArtifact(this.#timeline, this.#deps.assistant, this.#deps.variableValues);
    this.#artifactCache = { version, artifact };
    return artifact;
  }

  #envelope(type: string, fields: Doc): Doc {
    const customer = obj(this.#callView.customer);
    return {
      message: {
        type,
        timestamp: this.#now(),
        ...fields,
        call: this.#callView,
        assistant: this.#assistantView,
        ...(customer !== undefined ? { customer } : {}),
        ...(this.#phoneNumberView !== null ? { phoneNumber: this.#phoneNumberView } : {}),
        ...(fields.artifact === undefined ? { artifact: this.#liveArtifact() } : {}),
      },
    };
  }

  /** Queues a fire-and-forget message if it is subscribed (`checked`: the caller checked). */
  #enqueue(type: string, fields: Doc, keep: boolean, checked = false): void {
    const server = this.#server;
    if (server === null || (!checked && !this.#subscribed.has(type))) {
      return;
    }
    if (this.#ended && type !== 'end-of-call-report' && type !== 'status-update') {
      return;
    }
    const payload = this.#envelope(type, fields);
    this.#queue.push({ keep, send: () => this.#sender.send(server, payload, type) });
  }
}
