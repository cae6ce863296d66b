import { DEFAULT_SIP_LIMITS, type SipParseLimits } from './parser.js';

export type FrameEvent =
  /** One whole message's bytes. `last` means the stream cannot be framed after it. */
  | { readonly kind: 'message'; readonly data: Buffer; readonly last: boolean }
  /** A CRLFCRLF keep-alive ping (RFC 5626 §4.4.1): answer with one CRLF. */
  | { readonly kind: 'ping' }
  /** The stream cannot be framed any more: close the connection. */
  | { readonly kind: 'error'; readonly code: 'SIP_MESSAGE_TOO_LARGE'; readonly reason: string };

const HEADER_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH_RE = /\r\n(?:content-length|l)[ \t]*:[ \t]*([^\r\n]*)/i;

/**
 * Splits a SIP byte stream (TCP) into messages by Content-Length (§18.3). CRLFs between
 * messages are skipped, a double CRLF is a keep-alive ping. A message without a usable
 * Content-Length ends the stream: it is handed on (so the parser can answer 400) as the last.
 */
export class SipStreamFramer {
  private buffer: Buffer = Buffer.alloc(0);
  private broken = false;

  constructor(private readonly limits: SipParseLimits = DEFAULT_SIP_LIMITS) {}

  /** Bytes held while waiting for the rest of a message. */
  get bufferedBytes(): number {
    return this.buffer.length;
  }

  push(chunk: Buffer): FrameEvent[] {
    if (this.broken) {
      return [];
    }
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const events: FrameEvent[] = [];
    for (;;) {
      const event = this.next();
      if (event === undefined) {
        return events;
      }
      events.push(event);
      if (event.kind === 'error' || (event.kind === 'message' && event.last)) {
        this.broken = true;
        this.buffer = Buffer.alloc(0);
        return events;
      }
    }
  }

  private next(): FrameEvent | undefined {
    const buffer = this.buffer;
    if (buffer[0] === 0x0d || buffer[0] === 0x0a) {
      if (buffer.length >= 4 && buffer.subarray(0, 4).equals(HEADER_END)) {
        this.buffer = buffer.subarray(4);
        return { kind: 'ping' };
      }
      if (buffer.length >= 2 && buffer[0] === 0x0d && buffer[1] === 0x0a) {
        // A lone CRLF: a pong, or padding before a start line (§7.5). Wait to tell a ping.
        if (buffer.length < 4 && (buffer.length === 2 || buffer[2] === 0x0d)) {
          return undefined;
        }
        this.buffer = buffer.subarray(2);
        return this.next();
      }
      if (buffer.length < 2) {
        return undefined;
      }
    }
    const headerEnd = buffer.indexOf(HEADER_END);
    if (headerEnd < 0) {
      return buffer.length > this.limits.maxMessageBytes ? this.tooLarge() : undefined;
    }
    const bodyStart = headerEnd + HEADER_END.length;
    const headerText = buffer.toString('latin1', 0, headerEnd);
    const match = CONTENT_LENGTH_RE.exec(headerText);
    const lengthText = match?.[1]?.trim();
    if (lengthText === undefined || !/^[0-9]{1,9}$/.test(lengthText)) {
      return { kind: 'message', data: Buffer.from(buffer.subarray(0, bodyStart)), last: true };
    }
    const total = bodyStart + Number(lengthText);
    if (total > this.limits.maxMessageBytes) {
      return this.tooLarge();
    }
    if (buffer.length < total) {
      return undefined;
    }
    this.buffer = buffer.subarray(total);
    return { kind: 'message', data: Buffer.from(buffer.subarray(0, total)), last: false };
  }

  private tooLarge(): FrameEvent {
    return {
      kind: 'error',
      code: 'SIP_MESSAGE_TOO_LARGE',
      reason: `a message over ${this.limits.maxMessageBytes} bytes`,
    };
  }
}
