import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { AudioSendQueue } from '../../../src/providers/stt/audio-queue.js';

/** A socket whose writes complete only when the test says so. */
function slowSocket() {
  const sent: Buffer[] = [];
  const pending: (() => void)[] = [];
  const socket = {
    OPEN: 1,
    readyState: 1,
    send(chunk: Buffer, _options: unknown, done: () => void) {
      sent.push(chunk);
      pending.push(done);
    },
  };
  return { socket: socket as unknown as WebSocket, sent, pending };
}

describe('AudioSendQueue', () => {
  it('holds audio back while the socket is slow, dropping the oldest beyond its bound', () => {
    const queue = new AudioSendQueue({ maxQueuedBytes: 4, highWaterBytes: 2 });
    const { socket, sent, pending } = slowSocket();
    queue.attach(socket);
    for (let i = 0; i < 6; i++) {
      queue.push(Buffer.from([i, i]));
    }
    // One chunk in flight (high water 2), two queued (bound 4), three dropped.
    expect(sent.map((b) => b[0])).toEqual([0]);
    expect(queue.queuedBytes).toBe(4);
    expect(queue.droppedBytes).toBe(6);
    pending.shift()!();
    pending.shift()!();
    pending.shift()!();
    expect(sent.map((b) => b[0])).toEqual([0, 4, 5]);
    expect(queue.queuedBytes).toBe(0);
  });

  it('sends everything on flushAll, whatever the high-water mark', () => {
    const queue = new AudioSendQueue({ maxQueuedBytes: 100, highWaterBytes: 2 });
    const { socket, sent } = slowSocket();
    for (let i = 0; i < 5; i++) {
      queue.push(Buffer.from([i, i]));
    }
    expect(sent).toHaveLength(0);
    queue.attach(socket);
    expect(sent).toHaveLength(1);
    queue.flushAll();
    expect(sent).toHaveLength(5);
  });
});
