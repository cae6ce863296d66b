import { describe, expect, it } from 'vitest';
import { ENDED_REASON_BACKPRESSURE } from '../../src/calls/call-session.js';
import { connect, useWsHarness, waitFor } from './websocket-call-harness.js';

const HARD_LIMIT_BYTES = 512 * 1024;
const h = useWsHarness({
  backpressure: {
    softLimitBytes: 32 * 1024,
    hardLimitBytes: HARD_LIMIT_BYTES,
    stallTimeoutMs: 60_000,
  },
});

describe('back-pressure', () => {
  it('drops audio for a client that does not read, then ends the call with a clear reason', async () => {
    const call = await h.createCall({
      assistant: { name: 'flood', metadata: { echoMode: 'flood' } },
      transport: {
        provider: 'parla.websocket',
        audioFormat: { format: 'pcm_s16le', sampleRate: 48000 },
      },
    });
    const client = await connect(call.transport.websocketCallUrl);
    // Stop reading: the kernel buffers fill, then the server's.
    client.ws.pause();
    const session = h.engine.session(call.id)!;
    await waitFor(() => session.state === 'ended', 30_000, 'the back-pressure end');
    const stats = session.transportStats;
    expect(stats.droppedAudioFrames).toBeGreaterThan(0);
    // Bounded: the hard limit plus the one message that crossed it.
    expect(stats.maxBufferedBytes).toBeGreaterThan(HARD_LIMIT_BYTES);
    expect(stats.maxBufferedBytes).toBeLessThan(HARD_LIMIT_BYTES + 80 * 1024);
    await session.done;
    const stored = await h.stored(call.id);
    expect(stored).toMatchObject({ status: 'ended', endedReason: ENDED_REASON_BACKPRESSURE });
    client.ws.resume();
    await waitFor(() => client.closed !== undefined, 20_000, 'the socket to close');
  });
});
