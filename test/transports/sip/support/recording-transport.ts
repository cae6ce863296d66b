import type { SipMessage } from '../../../../src/transports/sip/message.js';
import type {
  SipTarget,
  SipTransport,
  SipTransportName,
} from '../../../../src/transports/sip/transport.js';

/** A transport that records what it is asked to send, stamped with the virtual time. */
export class RecordingTransport implements SipTransport {
  readonly sent: { message: SipMessage; target: SipTarget; atMs: number }[] = [];
  readonly sentBy = { host: '192.0.2.1', port: 5060 };
  failNext: Error | undefined;

  constructor(
    readonly name: SipTransportName,
    private readonly clock: { nowMs: number },
  ) {}

  get reliable(): boolean {
    return this.name === 'TCP';
  }

  send(message: SipMessage, target: SipTarget, onError?: (error: Error) => void): void {
    if (this.failNext !== undefined) {
      const error = this.failNext;
      this.failNext = undefined;
      onError?.(error);
      return;
    }
    this.sent.push({ message, target, atMs: this.clock.nowMs });
  }

  async close(): Promise<void> {}

  /** Virtual times at which messages matching `filter` were sent. */
  times(filter: (message: SipMessage) => boolean): number[] {
    return this.sent.filter((entry) => filter(entry.message)).map((entry) => entry.atMs);
  }
}
