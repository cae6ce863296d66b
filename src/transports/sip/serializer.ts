import type { SipMessage } from './message.js';

/**
 * Writes a message to bytes: start line, one line per header field in order, and a
 * Content-Length that always matches the body (any Content-Length in the headers is replaced
 * where it stood, or added last).
 */
export function serializeSipMessage(message: SipMessage): Buffer {
  let head =
    message.kind === 'request'
      ? `${message.method} ${message.uri} SIP/2.0\r\n`
      : `SIP/2.0 ${message.status} ${message.reason}\r\n`;
  let wroteLength = false;
  for (const field of message.headers.entries()) {
    if (field.name === 'Content-Length') {
      if (!wroteLength) {
        head += `Content-Length: ${message.body.length}\r\n`;
        wroteLength = true;
      }
      continue;
    }
    head += `${field.name}: ${field.value}\r\n`;
  }
  if (!wroteLength) {
    head += `Content-Length: ${message.body.length}\r\n`;
  }
  head += '\r\n';
  const headBytes = Buffer.from(head, 'utf8');
  return message.body.length === 0 ? headBytes : Buffer.concat([headBytes, message.body]);
}
