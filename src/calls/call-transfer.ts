/**
 * Transfers and DTMF of a live call, whatever carries it (a TelephonyLeg): the `transfer`
 * control message, and the `transferCall` and `dtmf` tools the model calls. A transfer says
 * its message, marks the call `forwarding`, asks the leg, and then either ends the call
 * (`assistant-forwarded-call`) or runs the destination's fallbackPlan.
 */
import { substituteVariables } from '../pipeline/conversation/options.js';
import type { Doc } from '../store/resource-store.js';
import type {
  CallObserver,
  ObservedEvent,
  ToolCallRequest,
  ToolCallResult,
} from './call-observer.js';
import type { ControlMessage } from './control-messages.js';
import { transferUpdateEvent } from './reporting/transfer-update.js';
import {
  ENDED_REASON_FORWARDED,
  type TelephonyLeg,
  type TransferOutcome,
} from './telephony-leg.js';
import {
  DTMF_TOOL,
  TRANSFER_CALL_TOOL,
  describe,
  isRecord,
  localToolType,
  parseArguments,
  speechPattern,
  text,
  toolNamed,
} from './transfer-tools.js';

/** A spoken message gets this long plus SPEECH_MS_PER_CHAR a character before we go on. */
const SPEECH_BASE_MS = 15_000;
const SPEECH_MS_PER_CHAR = 150;

export type TransferControlResult = { ok: true } | { ok: false; code: string; message: string };

/** What the transfer needs from its call (CallSession implements it). */
export interface CallTransferHost {
  readonly observer: CallObserver;
  /** Tool definitions the model may call (`model.tools` and the resolved `toolIds`). */
  readonly tools: readonly Doc[];
  readonly variableValues: Readonly<Record<string, unknown>>;
  leg(): TelephonyLeg | undefined;
  /** Whether the assistant can speak now (the pipeline runs and the call is not ending). */
  canSpeak(): boolean;
  /** Whether the call is still on (not ending or ended). */
  isLive(): boolean;
  sendControl(message: Doc): void;
  /** `forwarding` (with the destination) while a transfer runs; undefined: back in progress. */
  setForwarding(destination: Doc | undefined): void;
  /** Reports an event of the call (`transfer-update`) to the client and the server. */
  publish(event: ObservedEvent): void;
  /** Tells the client (transport socket) something went wrong, with a stable code. */
  sendError(code: string, message: string): void;
  end(reason: string): void;
  log(error: unknown, message: string): void;
}

interface SpeechWaiter {
  readonly pattern: RegExp;
  readonly done: () => void;
}

export class CallTransfer {
  private running = false;
  private readonly waiters = new Set<SpeechWaiter>();
  /** Media-clock time of the latest event, for the events the transfer reports itself. */
  private lastAtMs = 0;

  constructor(private readonly host: CallTransferHost) {}

  /** Whether a transfer is under way. */
  get active(): boolean {
    return this.running;
  }

  isLocalTool(name: string): boolean {
    return localToolType(this.host.tools, name) !== null;
  }

  /** Every pipeline event, in order: ends the wait for a message being spoken. */
  onEvent(event: ObservedEvent): void {
    this.lastAtMs = event.atMs;
    if (this.waiters.size === 0) {
      return;
    }
    const said =
      event.type === 'transcript' &&
      event.role === 'assistant' &&
      event.transcriptType === 'final' &&
      typeof event.transcript === 'string'
        ? event.transcript
        : undefined;
    const refused = event.type === 'control-rejected' && event.controlType === 'say';
    for (const waiter of [...this.waiters]) {
      if (
        refused ||
        event.type === 'call-ended' ||
        (said !== undefined && waiter.pattern.test(said))
      ) {
        waiter.done();
      }
    }
  }

  /** The call ended: nothing is waiting for speech any more. */
  close(): void {
    for (const waiter of [...this.waiters]) {
      waiter.done();
    }
  }

  /** A `transfer` control message: starts the transfer, or says why it cannot. */
  onControl(message: ControlMessage): TransferControlResult {
    const refusal = this.refusal();
    if (refusal !== undefined) {
      return refusal;
    }
    const destination = message.destination as Doc;
    const spoken = text(message.content) ?? this.messageOf(destination);
    void this.run(destination, spoken, false);
    return { ok: true };
  }

  /**
   * One round of the model's tool calls: transferCall and dtmf run here, the rest go to the
   * observer (a server). One result per call, in the calls' order; never rejects.
   */
  async runToolCalls(
    toolCalls: readonly ToolCallRequest[],
    turnId: number,
  ): Promise<ToolCallResult[]> {
    const local = toolCalls.filter((call) => this.isLocalTool(call.name));
    const remote = toolCalls.filter((call) => !this.isLocalTool(call.name));
    const fromRemote = (async (): Promise<ToolCallResult[]> => {
      try {
        return remote.length === 0 ? [] : await this.host.observer.onToolCalls(remote, turnId);
      } catch (error) {
        this.host.log(error, 'tool calls failed');
        return remote.map((call) => ({
          toolCallId: call.id,
          name: call.name,
          error: 'The tool call failed',
        }));
      }
    })();
    const results = await Promise.all([
      fromRemote,
      Promise.all(local.map((call) => this.runTool(call))),
    ]);
    const byId = new Map<string, ToolCallResult>();
    for (const result of results.flat()) {
      byId.set(result.toolCallId, result);
    }
    return toolCalls.map(
      (call) => byId.get(call.id) ?? { toolCallId: call.id, name: call.name, error: 'no result' },
    );
  }

  /** A call to a `transferCall` or `dtmf` tool; never rejects. */
  async runTool(call: ToolCallRequest): Promise<ToolCallResult> {
    const type = localToolType(this.host.tools, call.name);
    const error = (message: string): ToolCallResult => ({
      toolCallId: call.id,
      name: call.name,
      error: message,
    });
    try {
      if (type === DTMF_TOOL) {
        return await this.runDtmf(call);
      }
      if (type !== TRANSFER_CALL_TOOL) {
        return error(`no tool named ${call.name}`);
      }
      const refusal = this.refusal();
      if (refusal !== undefined) {
        return error(refusal.message);
      }
      const chosen = await this.chooseDestination(call);
      if (typeof chosen === 'string') {
        return error(chosen);
      }
      if (chosen.destination.type !== 'number' && chosen.destination.type !== 'sip') {
        return error(`Cannot transfer to a destination of type ${String(chosen.destination.type)}`);
      }
      // The model hears at once that the transfer is under way; the transfer goes on after
      // its reply (the message waits behind it), and a failure is added to the conversation.
      void this.run(chosen.destination, chosen.spoken ?? this.messageOf(chosen.destination), true);
      return {
        toolCallId: call.id,
        name: call.name,
        result: `Transferring the call to ${describe(chosen.destination)}. Say nothing more.`,
      };
    } catch (caught) {
      this.host.log(caught, 'tool call failed');
      return error(caught instanceof Error ? caught.message : String(caught));
    }
  }

  private refusal(): { ok: false; code: string; message: string } | undefined {
    if (this.host.leg() === undefined) {
      return {
        ok: false,
        code: 'transfer-not-supported',
        message: 'Only phone calls can be transferred: this call has no telephony leg',
      };
    }
    if (this.running) {
      return { ok: false, code: 'transfer-in-progress', message: 'A transfer is already running' };
    }
    return undefined;
  }

  private async runDtmf(call: ToolCallRequest): Promise<ToolCallResult> {
    const leg = this.host.leg();
    const args = parseArguments(call.arguments);
    const digits = text(args.keys) ?? text(args.digits) ?? text(args.dtmf);
    const base = { toolCallId: call.id, name: call.name };
    if (leg === undefined) {
      return { ...base, error: 'Keys can only be pressed on a phone call' };
    }
    if (digits === undefined) {
      return { ...base, error: 'The dtmf tool needs the keys to press, e.g. {"keys": "1"}' };
    }
    try {
      await leg.sendDtmf(digits);
      return { ...base, result: `Pressed ${digits}.` };
    } catch (caught) {
      return { ...base, error: caught instanceof Error ? caught.message : String(caught) };
    }
  }

  /** The tool call's destination: named in its arguments, the tool's only one, or the server's. */
  private async chooseDestination(
    call: ToolCallRequest,
  ): Promise<{ destination: Doc; spoken?: string } | string> {
    const tool = toolNamed(this.host.tools, call.name);
    const destinations = (Array.isArray(tool?.destinations) ? tool.destinations : []).filter(
      isRecord,
    ) as Doc[];
    const wanted = text(parseArguments(call.arguments).destination);
    if (wanted !== undefined) {
      const found = destinations.find((d) =>
        [d.number, d.sipUri, d.assistantName].includes(wanted),
      );
      if (found !== undefined) {
        return { destination: found };
      }
      if (destinations.length > 0) {
        return `Unknown destination ${wanted}; choose one of ${destinations.map(describe).join(', ')}`;
      }
    } else if (destinations.length === 1) {
      return { destination: destinations[0]! };
    } else if (destinations.length > 1) {
      return `Say where to transfer: one of ${destinations.map(describe).join(', ')}`;
    }
    const observer = this.host.observer;
    if (observer.onTransferDestinationRequest === undefined) {
      return 'The transfer tool has no destination and no server to ask for one';
    }
    const reply = await observer.onTransferDestinationRequest({ toolCall: call });
    const failure = text(reply.error);
    if (failure !== undefined) {
      // Spoken after the model's turn: waiting for it here would hold that very turn up.
      if (this.host.canSpeak()) {
        this.host.sendControl({ type: 'say', content: failure, interruptionsEnabled: false });
      }
      return `The server refused the transfer: ${failure}`;
    }
    if (!isRecord(reply.destination)) {
      return 'The server gave no transfer destination';
    }
    const spoken = text(reply.message);
    return spoken === undefined
      ? { destination: reply.destination }
      : { destination: reply.destination, spoken };
  }

  private messageOf(destination: Doc): string | undefined {
    const plan = isRecord(destination.transferPlan) ? destination.transferPlan : {};
    return text(destination.message) ?? text(plan.message);
  }

  /** Says the message, transfers, then ends the call or falls back. */
  private async run(destination: Doc, spoken: string | undefined, byTool: boolean): Promise<void> {
    const host = this.host;
    const leg = host.leg();
    if (leg === undefined) {
      return;
    }
    this.running = true;
    try {
      host.setForwarding(destination);
      const update = transferUpdateEvent(destination, this.lastAtMs);
      if (update !== undefined) {
        host.publish(update);
      }
      if (spoken !== undefined) {
        await this.say(spoken);
      }
      if (!host.isLive()) {
        return; // the caller hung up meanwhile
      }
      let outcome: TransferOutcome;
      try {
        outcome = await leg.transfer(destination);
      } catch (caught) {
        host.log(caught, 'transfer failed');
        outcome = { ok: false, code: 'transfer-failed', message: String(caught) };
      }
      if (!host.isLive()) {
        return;
      }
      if (outcome.ok) {
        host.end(ENDED_REASON_FORWARDED);
        return;
      }
      await this.fallback(destination, outcome, byTool);
    } finally {
      this.running = false;
    }
  }

  private async fallback(
    destination: Doc,
    outcome: { code: string; message: string },
    byTool: boolean,
  ): Promise<void> {
    const host = this.host;
    host.log(new Error(`${outcome.code}: ${outcome.message}`), 'transfer did not go through');
    host.sendError(outcome.code, outcome.message);
    host.setForwarding(undefined);
    const plan = isRecord(destination.transferPlan) ? destination.transferPlan : {};
    const fallbackPlan = isRecord(plan.fallbackPlan) ? plan.fallbackPlan : {};
    const spoken = text(fallbackPlan.message);
    const endCall = fallbackPlan.endCallEnabled !== false;
    if (byTool) {
      host.sendControl({
        type: 'add-message',
        message: {
          role: 'system',
          content: `The transfer to ${describe(destination)} failed (${outcome.code}): ${outcome.message}`,
        },
        // With nothing said and the call going on, the model tells the caller.
        triggerResponseEnabled: spoken === undefined && !endCall,
      });
    }
    if (spoken !== undefined) {
      await this.say(spoken);
    }
    if (endCall) {
      host.end(
        spoken === undefined ? 'assistant-ended-call' : 'assistant-ended-call-after-message-spoken',
      );
    }
  }

  /** Sends a `say` and resolves once it was spoken (or could not be, or took far too long). */
  private say(spoken: string): Promise<void> {
    const host = this.host;
    if (!host.canSpeak()) {
      return Promise.resolve();
    }
    const pattern = speechPattern(substituteVariables(spoken, host.variableValues));
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => {
          host.log(new Error('no transcript of the message'), 'transfer message not confirmed');
          waiter.done();
        },
        SPEECH_BASE_MS + SPEECH_MS_PER_CHAR * spoken.length,
      );
      timer.unref();
      const waiter: SpeechWaiter = {
        pattern,
        done: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve();
        },
      };
      this.waiters.add(waiter);
      host.sendControl({ type: 'say', content: spoken, interruptionsEnabled: false });
    });
  }
}
