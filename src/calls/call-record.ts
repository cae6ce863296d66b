import type { Doc, Resource } from '../store/resource-store.js';
import type { Store } from '../store/store.js';
import type { CallObserver } from './call-observer.js';

export interface CallRecordOptions {
  readonly store: Store;
  readonly orgId: string;
  readonly callId: string;
  readonly observer: CallObserver;
  readonly log: (error: unknown, message: string) => void;
}

/**
 * The stored side of a live call: status changes and the end-of-call fields, written in the
 * order they happen (one chain of updates), each stored status then given to the observer.
 */
export class CallRecord {
  private writes: Promise<void> = Promise.resolve();
  private lastStored: Resource | undefined;

  constructor(private readonly options: CallRecordOptions) {}

  /** Queues `fields` for the stored call; the observer gets the stored call once written. */
  update(fields: Doc, what: string): void {
    const { store, orgId, callId, observer } = this.options;
    this.writes = this.writes.then(async () => {
      try {
        const stored = await store.resources.calls.update(orgId, callId, (current) => ({
          ...current,
          ...fields,
        }));
        if (stored !== null) {
          this.lastStored = stored;
          try {
            observer.onStatus(stored);
          } catch (error) {
            this.options.log(error, 'call observer threw');
          }
        }
      } catch (error) {
        this.options.log(error, `could not store ${what}`);
      }
    });
  }

  /**
   * After the last status: the observer's end-of-call fields (artifact, costs…), merged into
   * the stored call. Resolves once everything queued is written; never rejects.
   */
  finish(): Promise<void> {
    this.writes = this.writes.then(() => this.report());
    return this.writes;
  }

  private async report(): Promise<void> {
    const call = this.lastStored;
    if (call === undefined) {
      return;
    }
    try {
      const fields = await this.options.observer.onEnded(call);
      if (Object.keys(fields).length > 0) {
        const { store, orgId, callId } = this.options;
        await store.resources.calls.update(orgId, callId, (current) => ({ ...current, ...fields }));
      }
    } catch (error) {
      this.options.log(error, 'end-of-call report failed');
    }
  }
}
