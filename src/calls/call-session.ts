/**
 * One live call on the main thread: its status (queued → ringing → in-progress → ended, each
 * persisted and reported), its transport socket, its worker channel, its monitor listeners and
 * its observer. Audio and events flow through here in both directions.
 */
import type { Doc } from '../store/resource-store.js';
import type { Store } from '../store/store.js';
import type { WebsocketAudioEncoding } from '../transports/websocket/audio-codec.js';
import { ClientMessageSelector } from '../transports/websocket/client-messages.js';
import { MonitorMixer } from '../transports/websocket/monitor-mixer.js';
import {
  errorFrame,
  type CallTransport,
  type ListenPeer,
  type ListenSink,
  type TransportPeer,
} from '../transports/websocket/types.js';
import type { CallChannel } from '../workers/call-channel.js';
import type { WorkerHost } from '../workers/host.js';
import type { CallObserver, ObservedEvent, ToolCallRequest } from './call-observer.js';
import { CallRecord } from './call-record.js';
import { CallTransfer } from './call-transfer.js';
import { parseControlMessage, type ControlMessage } from './control-messages.js';
import type { PipelineCallParams } from './pipeline-call-params.js';
import type { TelephonyLeg } from './telephony-leg.js';

/** The client never opened its socket within the connect timeout. */
export const ENDED_REASON_NEVER_CONNECTED =
  'call.in-progress.error-providerfault-transport-never-connected';
/** The client stopped reading its audio (see TransportConnection). */
export const ENDED_REASON_BACKPRESSURE = 'call.in-progress.error-transport-backpressure';
export const ENDED_REASON_WORKER_NOT_AVAILABLE =
  'call.in-progress.error-parlafault-worker-not-available';

export type CallState = 'queued' | 'ringing' | 'in-progress' | 'forwarding' | 'ended';

export interface CallSessionOptions {
  store: Store;
  orgId: string;
  callId: string;
  params: PipelineCallParams;
  encoding: WebsocketAudioEncoding;
  host: WorkerHost;
  handlerName: string;
  handlerModule?: string | undefined;
  observer: CallObserver;
  connectTimeoutMs: number;
  /** After asking the worker to end, how long to wait for it before ending regardless. */
  endTimeoutMs?: number;
  log: (error: unknown, message: string) => void;
}

/** The answer to a control message: accepted, or an error with a stable code. */
export type ControlResult = { ok: true } | { ok: false; code: string; message: string };

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export class CallSession implements TransportPeer {
  state: CallState = 'queued';
  readonly encoding: WebsocketAudioEncoding;
  readonly sampleRateHz: number;
  /** Resolves once the call ended and the observer's end fields are stored. */
  readonly done: Promise<void>;
  private resolveDone!: () => void;
  private transport: CallTransport | undefined;
  private closedTransport: CallTransport | undefined;
  private channel: CallChannel | undefined;
  private readonly selector: ClientMessageSelector;
  private readonly mixer: MonitorMixer;
  private connectTimer: NodeJS.Timeout | undefined;
  private endTimer: NodeJS.Timeout | undefined;
  private ending = false;
  /** Why this side asked the call to end; it wins over what the worker reports meanwhile. */
  private requestedReason: string | undefined;
  private startedAt: string | undefined;
  /** Persisted status changes, in order. */
  private readonly record: CallRecord;
  private telephony: TelephonyLeg | undefined;
  private readonly transfers: CallTransfer;

  constructor(private readonly options: CallSessionOptions) {
    this.encoding = options.encoding;
    this.sampleRateHz = options.params.transportSampleRateHz;
    this.selector = new ClientMessageSelector(options.params.assistant.clientMessages);
    this.mixer = new MonitorMixer(this.sampleRateHz);
    this.transfers = this.newCallTransfer();
    this.record = new CallRecord(options);
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
    this.connectTimer = setTimeout(
      () => this.end(ENDED_REASON_NEVER_CONNECTED),
      options.connectTimeoutMs,
    );
    this.connectTimer.unref();
  }

  get callId(): string {
    return this.options.callId;
  }

  get listenerCount(): number {
    return this.mixer.listenerCount;
  }

  /** The transport socket's back-pressure figures (kept after it closed). */
  get transportStats(): { droppedAudioFrames: number; maxBufferedBytes: number } {
    const transport = this.transport ?? this.closedTransport;
    return {
      droppedAudioFrames: transport?.droppedAudioFrames ?? 0,
      maxBufferedBytes: transport?.maxBufferedBytes ?? 0,
    };
  }

  /** A phone call's transfer and DTMF side (a SIP call attaches it once answered). */
  attachTelephony(leg: TelephonyLeg): void {
    this.telephony = leg;
  }

  /* ---------- transport socket (TransportPeer) ---------- */

  onOpen(transport: CallTransport): void {
    const waiting = this.state === 'queued' || this.state === 'ringing';
    if (!waiting || this.transport !== undefined || this.ending) {
      transport.close(1008, 'call is not waiting for a transport');
      return;
    }
    this.transport = transport;
    this.clearConnectTimer();
    if (this.state === 'queued') {
      this.setStatus('ringing', { status: 'ringing' });
    }
    const { host, callId, handlerName, handlerModule, params } = this.options;
    try {
      this.channel = host.startCall(callId, handlerName, {
        ...(handlerModule !== undefined ? { handlerModule } : {}),
        sampleRateHz: this.sampleRateHz,
        params,
      });
    } catch (error) {
      this.options.log(error, 'call worker not available');
      this.finish(ENDED_REASON_WORKER_NOT_AVAILABLE);
      return;
    }
    const channel = this.channel;
    channel.on('started', () => this.onStarted());
    channel.on('audio', (samples) => this.onAssistantAudio(samples));
    channel.on('event', (name, data) => this.onEvent(name, data));
    channel.on('handler-error', (message, stack) =>
      this.options.log(Object.assign(new Error(message), { stack }), 'call handler error'),
    );
    channel.on('ended', (reason) => this.finish(reason));
  }

  /**
   * The far end is ringing before any transport opened (an outbound phone call's 180): status
   * `ringing`, stored and reported. onOpen then leaves it as it is.
   */
  markRinging(): void {
    if (this.state === 'queued' && !this.ending) {
      this.setStatus('ringing', { status: 'ringing' });
    }
  }

  onAudio(samples: Int16Array): void {
    const channel = this.channel;
    if (channel === undefined || this.state === 'ended') {
      return;
    }
    this.safely(() => this.options.observer.onAudio('user', samples, this.sampleRateHz));
    this.mixer.pushUser(samples);
    // Last: the samples' buffer is transferred to the worker.
    channel.sendAudio(samples);
  }

  onText(text: string): void {
    const parsed = parseControlMessage(text);
    const result = parsed.ok
      ? this.control(parsed.message)
      : ({ ok: false, code: parsed.code, message: parsed.error } as const);
    if (!result.ok) {
      this.transport?.sendJson(errorFrame(result.code, result.message));
    }
  }

  /** The socket closed (any code: the client hung up, or the connection dropped). */
  onClose(_code: number): void {
    this.closedTransport = this.transport ?? this.closedTransport;
    this.transport = undefined;
    this.end('customer-ended-call');
  }

  onBackpressure(bufferedBytes: number): void {
    this.options.log(
      new Error(`client not reading: ${bufferedBytes} bytes buffered`),
      'websocket back-pressure',
    );
    this.end(ENDED_REASON_BACKPRESSURE);
  }

  /** Monitor listeners of this call. */
  readonly listener: ListenPeer = {
    onOpen: (sink: ListenSink) => {
      if (this.state === 'ended' || !this.mixer.add(sink)) {
        sink.close(1013, 'call ended or too many listeners');
      }
    },
    onClose: (sink: ListenSink) => this.mixer.remove(sink),
  };

  /* ---------- control (socket text frames and the control URL) ---------- */

  /** A checked control message. `hangup` and `end-call` end the call; the rest go to the worker. */
  control(message: ControlMessage): ControlResult {
    if (this.state === 'ended' || this.ending) {
      return { ok: false, code: 'call-ended', message: 'The call has ended' };
    }
    const channel = this.channel;
    if (channel === undefined) {
      return {
        ok: false,
        code: 'call-not-live',
        message: 'The call has not started: its transport socket is not connected yet',
      };
    }
    if (message.type === 'hangup') {
      this.end('customer-ended-call');
    } else if (message.type === 'transfer') {
      if (this.state === 'ringing') {
        return { ok: false, code: 'call-not-live', message: 'The call has not been answered yet' };
      }
      return this.transfers.onControl(message);
    } else if (message.type === 'end-call') {
      channel.sendControl(message);
      this.end('assistant-ended-call');
    } else {
      channel.sendControl(message);
    }
    return { ok: true };
  }

  /** Ends the call: asks the worker (which confirms) or, with no worker, ends at once. */
  end(reason: string): void {
    if (this.ending || this.state === 'ended') {
      return;
    }
    this.ending = true;
    this.requestedReason = reason;
    this.clearConnectTimer();
    const channel = this.channel;
    if (channel === undefined || channel.isEnded) {
      this.finish(reason);
      return;
    }
    channel.end(reason);
    this.endTimer = setTimeout(() => channel.finish(reason), this.options.endTimeoutMs ?? 5000);
    this.endTimer.unref();
  }

  /* ---------- worker side ---------- */

  private onStarted(): void {
    if (this.state !== 'ringing') {
      return;
    }
    this.startedAt = new Date().toISOString();
    this.setStatus('in-progress', { status: 'in-progress', startedAt: this.startedAt });
  }

  private onAssistantAudio(samples: Int16Array): void {
    if (this.state === 'ended') {
      return;
    }
    this.safely(() => this.options.observer.onAudio('assistant', samples, this.sampleRateHz));
    this.mixer.pushAssistant(samples);
    this.transport?.sendAudio(samples);
  }

  private onEvent(name: string, data: unknown): void {
    const event: ObservedEvent =
      isObject(data) && typeof data.type === 'string'
        ? (data as ObservedEvent)
        : { type: name, atMs: 0, ...(isObject(data) ? data : { data }) };
    this.safely(() => this.options.observer.onPipelineEvent(event));
    this.transfers.onEvent(event);
    const transport = this.transport;
    if (event.type === 'control-rejected') {
      // The worker could not apply a control message (e.g. a say while 32 messages wait).
      const reason = typeof event.message === 'string' ? event.message : 'rejected';
      transport?.sendJson(errorFrame('control-rejected', reason));
    }
    if (event.type === 'user-interrupted') {
      // Barge-in: the client should drop the assistant audio it has buffered.
      transport?.sendJson({ type: 'clear' });
    }
    const message = this.selector.select(event);
    if (message !== null) {
      transport?.sendJson(message);
    }
    if (event.type === 'tool-calls') {
      this.runTools(event);
    }
  }

  private runTools(event: ObservedEvent): void {
    const toolCalls = (Array.isArray(event.toolCalls) ? event.toolCalls : []) as ToolCallRequest[];
    const turnId = typeof event.turnId === 'number' ? event.turnId : 0;
    void this.transfers
      .runToolCalls(toolCalls, turnId)
      .then((results) => this.channel?.sendControl({ type: 'tool-results', turnId, results }));
  }

  private newCallTransfer(): CallTransfer {
    const { params, observer } = this.options;
    // The params builder has appended the resolved `model.toolIds` to `model.tools`.
    const model = params.assistant.model as Doc | undefined;
    return new CallTransfer({
      observer,
      tools: Array.isArray(model?.tools) ? (model.tools as Doc[]) : [],
      variableValues: params.variableValues,
      leg: () => this.telephony,
      canSpeak: () => (this.state === 'in-progress' || this.state === 'forwarding') && !this.ending,
      isLive: () => this.state !== 'ended' && !this.ending,
      sendControl: (message) => {
        if (this.state !== 'ended') {
          this.channel?.sendControl(message);
        }
      },
      setForwarding: (destination) => {
        if (this.state === 'ended' || this.ending) {
          return;
        }
        if (destination !== undefined) {
          // Stored too: the forwarding status-update server message reads it from the call.
          this.setStatus('forwarding', { status: 'forwarding', destination }, { destination });
        } else if (this.state === 'forwarding') {
          this.setStatus('in-progress', { status: 'in-progress' });
        }
      },
      publish: (event) => this.onEvent(event.type, event),
      sendError: (code, message) => this.transport?.sendJson(errorFrame(code, message)),
      end: (reason) => this.end(reason),
      log: (error, message) => this.options.log(error, message),
    });
  }

  /* ---------- status and the end ---------- */

  private finish(workerReason: string): void {
    if (this.state === 'ended') {
      return;
    }
    // The caller hung up (or the call was ended here) before the worker's own end arrived.
    const reason = this.requestedReason ?? workerReason;
    this.ending = true;
    this.clearConnectTimer();
    if (this.endTimer !== undefined) {
      clearTimeout(this.endTimer);
    }
    const endedAt = new Date().toISOString();
    this.setStatus('ended', {
      status: 'ended',
      endedReason: reason,
      endedAt,
      startedAt: this.startedAt ?? endedAt,
    });
    const frames = this.transportStats.droppedAudioFrames;
    this.transport?.close(1000, reason);
    this.closedTransport = this.transport ?? this.closedTransport;
    this.transport = undefined;
    this.mixer.close(1000, reason);
    this.transfers.close();
    if (frames > 0) {
      this.options.log(new Error(`${frames} audio frames dropped`), 'websocket back-pressure');
    }
    void this.record.finish().then(() => this.resolveDone());
  }

  /** Persists and reports a status; `extra` fields go in the status-update message only. */
  private setStatus(state: CallState, fields: Doc, extra: Doc = {}): void {
    this.state = state;
    const message: Doc = { type: 'status-update', status: state, ...extra };
    if (state === 'ended') {
      message.endedReason = fields.endedReason;
    }
    if (this.selector.wants('status-update')) {
      this.transport?.sendJson(message);
    }
    this.record.update(fields, `call status ${state}`);
  }

  private clearConnectTimer(): void {
    if (this.connectTimer !== undefined) {
      clearTimeout(this.connectTimer);
      this.connectTimer = undefined;
    }
  }

  private safely(run: () => void): void {
    try {
      run();
    } catch (error) {
      this.options.log(error, 'call observer threw');
    }
  }
}
