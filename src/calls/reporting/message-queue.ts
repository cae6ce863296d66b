export const DEFAULT_MAX_QUEUED_MESSAGES = 256;

export interface QueuedMessage {
  /** Kept when the queue is full (status changes, the end-of-call report). */
  readonly keep: boolean;
  /** Sends the message; must not throw. */
  readonly send: () => Promise<unknown>;
}

/**
 * One call's fire-and-forget server messages, sent one at a time in the order queued, so the
 * receiver sees them in call order while the caller never waits. Bounded: when a slow server
 * lets `maxQueued` messages pile up, the oldest droppable one is dropped and counted.
 */
export class MessageQueue {
  readonly #maxQueued: number;
  readonly #queue: QueuedMessage[] = [];
  #running = false;
  #dropped = 0;
  #idle: Promise<void> = Promise.resolve();
  #resolveIdle: (() => void) | null = null;

  constructor(maxQueued = DEFAULT_MAX_QUEUED_MESSAGES) {
    this.#maxQueued = Math.max(1, maxQueued);
  }

  get droppedCount(): number {
    return this.#dropped;
  }

  get length(): number {
    return this.#queue.length;
  }

  push(message: QueuedMessage): void {
    if (this.#queue.length >= this.#maxQueued) {
      const index = this.#queue.findIndex((queued) => !queued.keep);
      if (index >= 0) {
        this.#queue.splice(index, 1);
        this.#dropped += 1;
      } else if (!message.keep) {
        this.#dropped += 1;
        return;
      }
    }
    this.#queue.push(message);
    if (!this.#running) {
      this.#running = true;
      this.#idle = new Promise((resolve) => {
        this.#resolveIdle = resolve;
      });
      void this.#run();
    }
  }

  /** Resolves once everything queued so far (and anything queued meanwhile) has been sent. */
  drained(): Promise<void> {
    return this.#idle;
  }

  async #run(): Promise<void> {
    for (let next = this.#queue.shift(); next !== undefined; next = this.#queue.shift()) {
      try {
        await next.send();
      } catch {
        // Senders do not throw; a bug in one must not stop the messages after it.
      }
    }
    this.#running = false;
    this.#resolveIdle?.();
    this.#resolveIdle = null;
  }
}
