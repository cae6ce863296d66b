/**
 * Main-thread end of one call: sends audio/control/end to the call's worker over its
 * MessagePort and re-emits what the worker sends as typed events.
 */
import { EventEmitter } from 'node:events';
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { HostToWorkerMessage, WorkerToHostMessage } from './protocol.js';

export interface CallChannelEvents {
  started: [threadId: number];
  audio: [samples: Int16Array, nowMs: number];
  event: [name: string, data: unknown];
  /** A handler error reported by the worker (not EventEmitter's throwing 'error'). */
  'handler-error': [message: string, stack: string | undefined];
  ended: [endedReason: string];
}

export class CallChannel extends EventEmitter<CallChannelEvents> {
  /** The worker thread running the call, once it has started. */
  threadId: number | undefined;
  endedReason: string | undefined;
  /** Resolves with the ended reason when the call ends, however it ends. */
  readonly ended: Promise<string>;
  private resolveEnded!: (endedReason: string) => void;

  constructor(
    readonly callId: string,
    private readonly port: MessagePort,
  ) {
    super();
    this.ended = new Promise((resolve) => {
      this.resolveEnded = resolve;
    });
    port.on('message', (message: WorkerToHostMessage) => this.onMessage(message));
  }

  get isEnded(): boolean {
    return this.endedReason !== undefined;
  }

  /**
   * Send caller audio to the handler. The samples' ArrayBuffer is transferred (the
   * caller's buffer is detached afterwards); a view onto part of a larger buffer is
   * copied first so the rest of that buffer is not taken away.
   */
  sendAudio(samples: Int16Array): void {
    if (this.isEnded) {
      return;
    }
    const whole =
      samples.byteOffset === 0 && samples.byteLength === samples.buffer.byteLength
        ? samples
        : samples.slice();
    const buffer = whole.buffer;
    if (!(buffer instanceof ArrayBuffer)) {
      // SharedArrayBuffer-backed samples: copy into a transferable buffer.
      const copy = new Int16Array(whole);
      this.post({ type: 'audio', buffer: copy.buffer }, [copy.buffer]);
      return;
    }
    this.post({ type: 'audio', buffer }, [buffer]);
  }

  sendControl(message: unknown): void {
    if (!this.isEnded) {
      this.post({ type: 'control', message });
    }
  }

  /** Ask the worker to end the call; `ended` fires when the worker confirms. */
  end(reason: string): void {
    if (!this.isEnded) {
      this.post({ type: 'end', reason });
    }
  }

  /**
   * Host side: mark the call ended (idempotent; the first reason wins). Messages the
   * worker already posted (its last frames, error, ended) are delivered first.
   */
  finish(endedReason: string): void {
    if (this.isEnded) {
      return;
    }
    for (
      let entry = receiveMessageOnPort(this.port);
      entry;
      entry = receiveMessageOnPort(this.port)
    ) {
      this.onMessage(entry.message as WorkerToHostMessage);
      if (this.isEnded) {
        return;
      }
    }
    this.endedReason = endedReason;
    this.port.close();
    this.emit('ended', endedReason);
    this.resolveEnded(endedReason);
  }

  private post(message: HostToWorkerMessage, transfer: ArrayBuffer[] = []): void {
    this.port.postMessage(message, transfer);
  }

  private onMessage(message: WorkerToHostMessage): void {
    if (this.isEnded) {
      return;
    }
    switch (message.type) {
      case 'started':
        this.threadId = message.threadId;
        this.emit('started', message.threadId);
        break;
      case 'audio':
        this.emit('audio', new Int16Array(message.buffer), message.nowMs);
        break;
      case 'event':
        this.emit('event', message.name, message.data);
        break;
      case 'error':
        this.emit('handler-error', message.message, message.stack);
        break;
      case 'ended':
        this.finish(message.endedReason);
        break;
    }
  }
}
