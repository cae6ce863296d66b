/**
 * The registry of live calls on this server: opens a CallSession per started call, hands out
 * its per-call tokens (only their SHA-256 hashes are kept), admits the sockets and control
 * requests that present them, and drains the calls on shutdown.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { newToken } from '../core/ids.js';
import type { Doc, Resource } from '../store/resource-store.js';
import type { Store } from '../store/store.js';
import type { WebsocketAudioEncoding } from '../transports/websocket/audio-codec.js';
import { MAX_LISTENERS_PER_CALL } from '../transports/websocket/monitor-mixer.js';
import type {
  ListenPeer,
  TransportPeer,
  UpgradeRefusal,
  WebsocketCallRegistry,
} from '../transports/websocket/types.js';
import type { WorkerHost } from '../workers/host.js';
import { ENDED_REASON_WORKER_SHUTDOWN } from '../workers/protocol.js';
import type { CallObserver, ToolCallRequest } from './call-observer.js';
import { CallSession } from './call-session.js';
import { checkControlMessage } from './control-messages.js';
import { PIPELINE_CALL_HANDLER, type PipelineCallParams } from './pipeline-call-params.js';

/** The worker module registering the real call handlers (written beside this file). */
export function defaultHandlerModule(): string {
  const isTs = import.meta.url.endsWith('.ts');
  return new URL(isTs ? './call-handlers.ts' : './call-handlers.js', import.meta.url).href;
}

/** Reports nothing; tool calls answer with an error result. */
export class NoopCallObserver implements CallObserver {
  onStatus(): void {}
  onPipelineEvent(): void {}
  onAudio(): void {}
  onToolCalls(toolCalls: readonly ToolCallRequest[]) {
    return Promise.resolve(
      toolCalls.map((call) => ({
        toolCallId: call.id,
        name: call.name,
        error: 'No tool server is configured on this Parla server',
      })),
    );
  }
  onEnded(): Promise<Doc> {
    return Promise.resolve({});
  }
}

export type CallObserverFactory = (call: Resource, params: PipelineCallParams) => CallObserver;

export interface CallEngineOptions {
  store: Store;
  host: WorkerHost;
  /** Base of the control URL (the HTTP API's public URL). */
  publicUrl: string;
  /** Base of websocket URLs (transport, listen). */
  wsPublicUrl: string;
  observerFactory?: CallObserverFactory;
  /** Worker handler of calls (default: the voice pipeline). */
  handlerName?: string;
  /** Module registering it in the worker (default: src/calls/call-handlers). */
  handlerModule?: string;
  /** A call whose socket has not connected after this long ends (default 30 s). */
  connectTimeoutMs?: number;
  log?: (error: unknown, message: string) => void;
}

/** Answer of a control URL request. */
export interface ControlReply {
  statusCode: number;
  body: Doc;
}

/** What the control plane may do with live calls. */
export interface LiveCallControl {
  /** POST monitor.controlUrl: `authorization` is the request's header or ''. */
  control(
    callId: string,
    token: string,
    authorization: string,
    body: unknown,
  ): Promise<ControlReply>;
  /** Ends a live call (e.g. it was deleted); false when it is not live here. */
  end(orgId: string, callId: string, reason: string): boolean;
}

/** The URLs of a started call; they carry its tokens and are shown once. */
export interface LiveCallUrls {
  websocketCallUrl: string;
  listenUrl?: string;
  controlUrl?: string;
}

interface LiveCall {
  session: CallSession;
  orgId: string;
  transportTokenHash: Buffer;
  monitorTokenHash: Buffer;
  transportClaimed: boolean;
  monitorPlan: MonitorPlan;
}

interface MonitorPlan {
  listenEnabled: boolean;
  listenAuthenticationEnabled: boolean;
  controlEnabled: boolean;
  controlAuthenticationEnabled: boolean;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const MAX_TOKEN_LENGTH = 200;

function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

function tokenMatches(token: string, hash: Buffer): boolean {
  return (
    token.length > 0 && token.length <= MAX_TOKEN_LENGTH && timingSafeEqual(hashToken(token), hash)
  );
}

function monitorPlanOf(assistant: Readonly<Record<string, unknown>>): MonitorPlan {
  const plan = (assistant.monitorPlan ?? {}) as Record<string, unknown>;
  const flag = (name: string, fallback: boolean): boolean =>
    typeof plan[name] === 'boolean' ? plan[name] : fallback;
  return {
    listenEnabled: flag('listenEnabled', true),
    listenAuthenticationEnabled: flag('listenAuthenticationEnabled', false),
    controlEnabled: flag('controlEnabled', true),
    controlAuthenticationEnabled: flag('controlAuthenticationEnabled', false),
  };
}

const refusal = (statusCode: number, message: string): UpgradeRefusal => ({ statusCode, message });
const reply = (statusCode: number, body: Doc): ControlReply => ({ statusCode, body });
const errorReply = (statusCode: number, error: string, message: string): ControlReply =>
  reply(statusCode, { statusCode, error, message });

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms).unref());

export class CallEngine implements WebsocketCallRegistry, LiveCallControl {
  private readonly calls = new Map<string, LiveCall>();
  private closingState = false;
  private readonly log: (error: unknown, message: string) => void;

  constructor(private readonly options: CallEngineOptions) {
    this.log = options.log ?? (() => {});
  }

  get closing(): boolean {
    return this.closingState;
  }

  get activeCalls(): number {
    return this.calls.size;
  }

  session(callId: string): CallSession | undefined {
    return this.calls.get(callId)?.session;
  }

  /**
   * Registers a started call and returns its URLs (with fresh tokens). `connectTimeoutMs`
   * overrides the engine's for this call (an outbound phone call may ring longer).
   */
  open(
    orgId: string,
    call: Resource,
    params: PipelineCallParams,
    encoding: WebsocketAudioEncoding,
    callOptions: { connectTimeoutMs?: number } = {},
  ): LiveCallUrls {
    if (this.closingState) {
      throw new Error('the call engine is shutting down');
    }
    const options = this.options;
    const observer = options.observerFactory?.(call, params) ?? new NoopCallObserver();
    const session = new CallSession({
      store: options.store,
      orgId,
      callId: call.id,
      params,
      encoding,
      host: options.host,
      handlerName: options.handlerName ?? PIPELINE_CALL_HANDLER,
      handlerModule: options.handlerModule ?? defaultHandlerModule(),
      observer,
      connectTimeoutMs: callOptions.connectTimeoutMs ?? options.connectTimeoutMs ?? 30_000,
      log: this.log,
    });
    const transportToken = newToken();
    const monitorToken = newToken();
    const monitorPlan = monitorPlanOf(params.assistant);
    this.calls.set(call.id, {
      session,
      orgId,
      transportTokenHash: hashToken(transportToken),
      monitorTokenHash: hashToken(monitorToken),
      transportClaimed: false,
      monitorPlan,
    });
    void session.done.then(() => this.calls.delete(call.id));
    const id = encodeURIComponent(call.id);
    const urls: LiveCallUrls = {
      websocketCallUrl: `${options.wsPublicUrl}/call/${id}/transport?token=${transportToken}`,
    };
    if (monitorPlan.listenEnabled) {
      urls.listenUrl = `${options.wsPublicUrl}/call/${id}/listen?token=${monitorToken}`;
    }
    if (monitorPlan.controlEnabled) {
      urls.controlUrl = `${options.publicUrl}/call/${id}/control?token=${monitorToken}`;
    }
    return urls;
  }

  claimTransport(callId: string, token: string): TransportPeer | UpgradeRefusal {
    const live = this.calls.get(callId);
    if (live === undefined || live.session.state === 'ended') {
      return refusal(404, `No live call ${callId.slice(0, 100)} on this server`);
    }
    if (!tokenMatches(token, live.transportTokenHash)) {
      return refusal(
        401,
        'Wrong or missing token: use the websocketCallUrl the call was created with',
      );
    }
    if (live.transportClaimed) {
      return refusal(409, 'This call already has its transport socket; a token works once');
    }
    live.transportClaimed = true;
    return live.session;
  }

  async claimListen(
    callId: string,
    token: string,
    authorization: string,
  ): Promise<ListenPeer | UpgradeRefusal> {
    const live = this.calls.get(callId);
    if (live === undefined || live.session.state === 'ended') {
      return refusal(404, `No live call ${callId.slice(0, 100)} on this server`);
    }
    if (!live.monitorPlan.listenEnabled) {
      return refusal(403, "Listening is off for this call's assistant (monitorPlan.listenEnabled)");
    }
    if (!tokenMatches(token, live.monitorTokenHash)) {
      return refusal(401, 'Wrong or missing token: use the listenUrl the call was created with');
    }
    if (
      live.monitorPlan.listenAuthenticationEnabled &&
      !(await this.authorized(live, authorization))
    ) {
      return refusal(401, "Listening needs `Authorization: Bearer <API key>` of the call's org");
    }
    if (live.session.listenerCount >= MAX_LISTENERS_PER_CALL) {
      return refusal(429, `A call takes at most ${MAX_LISTENERS_PER_CALL} listeners`);
    }
    return live.session.listener;
  }

  async control(
    callId: string,
    token: string,
    authorization: string,
    body: unknown,
  ): Promise<ControlReply> {
    const live = this.calls.get(callId);
    if (live === undefined || live.session.state === 'ended') {
      return errorReply(404, 'Not Found', `No live call ${callId.slice(0, 100)} on this server`);
    }
    if (!live.monitorPlan.controlEnabled) {
      return errorReply(
        403,
        'Forbidden',
        "Control is off for this call's assistant (monitorPlan.controlEnabled)",
      );
    }
    if (!tokenMatches(token, live.monitorTokenHash)) {
      return errorReply(
        401,
        'Unauthorized',
        'Wrong or missing token: use the controlUrl the call was created with',
      );
    }
    if (
      live.monitorPlan.controlAuthenticationEnabled &&
      !(await this.authorized(live, authorization))
    ) {
      return errorReply(
        401,
        'Unauthorized',
        "Control needs `Authorization: Bearer <API key>` of the call's org",
      );
    }
    const checked = checkControlMessage(body);
    if (!checked.ok) {
      return errorReply(400, 'Bad Request', checked.error);
    }
    const result = live.session.control(checked.message);
    if (!result.ok) {
      return errorReply(409, 'Conflict', result.message);
    }
    return reply(200, { received: true, type: checked.message.type });
  }

  end(orgId: string, callId: string, reason: string): boolean {
    const live = this.calls.get(callId);
    if (live === undefined || live.orgId !== orgId) {
      return false;
    }
    live.session.end(reason);
    return true;
  }

  /**
   * Stops taking calls; calls not yet connected end now, running ones may finish for `drainMs`,
   * then the rest end with `worker-shutdown`. Resolves when their ends are stored (or after
   * `endTimeoutMs` more).
   */
  async close(options: { drainMs?: number; endTimeoutMs?: number } = {}): Promise<void> {
    this.closingState = true;
    for (const { session } of this.calls.values()) {
      if (session.state === 'queued') {
        session.end(ENDED_REASON_WORKER_SHUTDOWN);
      }
    }
    const allDone = (): Promise<unknown> =>
      Promise.all([...this.calls.values()].map((live) => live.session.done));
    if ((options.drainMs ?? 0) > 0) {
      await Promise.race([allDone(), sleep(options.drainMs ?? 0)]);
    }
    for (const { session } of this.calls.values()) {
      session.end(ENDED_REASON_WORKER_SHUTDOWN);
    }
    await Promise.race([allDone(), sleep(options.endTimeoutMs ?? 10_000)]);
  }

  private async authorized(live: LiveCall, authorization: string): Promise<boolean> {
    const match = BEARER.exec(authorization);
    if (match?.[1] === undefined) {
      return false;
    }
    try {
      return (await this.options.store.keys.authenticate(match[1])) === live.orgId;
    } catch (error) {
      this.log(error, 'monitor authentication failed');
      return false;
    }
  }
}
