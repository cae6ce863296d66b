import type { WebsocketAudioEncoding } from './audio-codec.js';

/*
 * The websocket transport's contract with the call engine: the server owns sockets, framing,
 * codecs and back-pressure; the engine (src/calls) decides which calls a socket may join and
 * what happens to what arrives.
 */

/** Why an upgrade is refused: answered as an HTTP error before any websocket exists. */
export interface UpgradeRefusal {
  readonly statusCode: number;
  readonly message: string;
}

export function isRefusal(value: unknown): value is UpgradeRefusal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { statusCode?: unknown }).statusCode === 'number'
  );
}

/** The socket side of a call's transport, as the call session uses it. */
export interface CallTransport {
  /**
   * Sends PCM16 audio encoded in the call's format. Returns false when the frame was dropped
   * because the client is not reading fast enough.
   */
  sendAudio(samples: Int16Array): boolean;
  /** Sends a JSON text frame (client messages, errors). */
  sendJson(message: object): void;
  /** Closes the socket (idempotent). */
  close(code: number, reason: string): void;
  /** Audio frames dropped so far because of back-pressure. */
  readonly droppedAudioFrames: number;
  /** The most bytes the server held for this client at once. */
  readonly maxBufferedBytes: number;
}

/** The call side of a transport socket: what arrives, in the call's audio format. */
export interface TransportPeer {
  readonly encoding: WebsocketAudioEncoding;
  readonly sampleRateHz: number;
  onOpen(transport: CallTransport): void;
  /** Decoded caller audio; the array owns its buffer (it may be transferred). */
  onAudio(samples: Int16Array): void;
  /** A text frame, decoded as UTF-8 and within the size limit. */
  onText(text: string): void;
  /** The socket closed, by either side. */
  onClose(code: number): void;
  /** The client has not read its audio for too long, or text piled up beyond the hard limit. */
  onBackpressure(bufferedBytes: number): void;
}

/** A monitor listener's socket. */
export interface ListenSink {
  /** Sends PCM16 samples as a binary frame; false when dropped for back-pressure. */
  sendAudio(samples: Int16Array): boolean;
  sendJson(message: object): void;
  close(code: number, reason: string): void;
}

export interface ListenPeer {
  onOpen(sink: ListenSink): void;
  onClose(sink: ListenSink): void;
}

/** Decides which sockets may join which call. */
export interface WebsocketCallRegistry {
  /** Claims a call's transport socket; each call's token works once. Synchronous (no races). */
  claimTransport(callId: string, token: string): TransportPeer | UpgradeRefusal;
  /** Admits a monitor listener; `authorization` is the request's Authorization header or ''. */
  claimListen(
    callId: string,
    token: string,
    authorization: string,
  ): Promise<ListenPeer | UpgradeRefusal>;
}

/** What the server answers on a transport socket when a text frame cannot be used. */
export interface TransportErrorFrame {
  type: 'error';
  code: string;
  message: string;
}

export function errorFrame(code: string, message: string): TransportErrorFrame {
  return { type: 'error', code, message };
}
