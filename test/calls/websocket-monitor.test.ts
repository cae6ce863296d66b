import { describe, expect, it } from 'vitest';
import { connect, refusedStatus, useWsHarness, waitFor } from './websocket-call-harness.js';

const h = useWsHarness();

function toneCall(monitorPlan: object = {}) {
  return h.createCall({
    assistant: { name: 'tone', metadata: { echoMode: 'tone' }, monitorPlan },
    transport: { provider: 'parla.websocket', audioFormat: { format: 'mulaw', sampleRate: 8000 } },
  });
}

/** The control URL as a path for inject(). */
const controlPath = (url: string): string => {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
};

describe('monitor', () => {
  it('streams the mixed audio as 16 kHz PCM16 after a format frame', async () => {
    const call = await toneCall();
    const caller = await connect(call.transport.websocketCallUrl);
    const listener = await connect(call.monitor.listenUrl);
    await waitFor(() => listener.binary.length >= 10, 10_000, 'listen frames');
    expect(listener.texts[0]).toEqual({ sampleRate: 16000, channels: 1 });
    expect(listener.binary.every((frame) => frame.length === 640)).toBe(true);
    // The assistant's tone (mu-law 8 kHz) reaches the listener resampled: not silence.
    const samples = new Int16Array(Buffer.concat(listener.binary.slice(-5)).buffer.slice(0));
    const peak = samples.reduce((max, s) => Math.max(max, Math.abs(s)), 0);
    expect(peak).toBeGreaterThan(4000);
    expect(
      (await refusedStatus(call.monitor.listenUrl.replace(/token=[^&]+/, 'token=bad')))[0],
    ).toBe(401);
    caller.ws.close();
    await waitFor(() => listener.closed !== undefined, 10_000, 'listener closed at the end');
    expect(listener.closed?.reason).toBe('customer-ended-call');
  });

  it('takes control messages on the control URL with its token', async () => {
    const call = await toneCall();
    const caller = await connect(call.transport.websocketCallUrl);
    const observer = h.observers.get(call.id)!;
    const path = controlPath(call.monitor.controlUrl);
    const say = { type: 'say', content: 'from the control URL' };
    expect(await h.post(path, say, {})).toEqual([200, { received: true, type: 'say' }]);
    await waitFor(() => observer.events.some((e) => e.type === 'control-received'));
    expect(observer.events.find((e) => e.type === 'control-received')?.message).toEqual(say);

    const [bad, badBody] = await h.post(path, { type: 'say', content: 7 }, {});
    expect(bad).toBe(400);
    expect(badBody.message).toContain('content');
    expect((await h.post(path.replace(/token=[^&]+/, 'token=nope'), say, {}))[0]).toBe(401);
    expect((await h.post(`/call/${call.id}/control`, say, {}))[0]).toBe(401);
    expect((await h.post('/call/unknown/control?token=x', say, {}))[0]).toBe(404);

    expect(await h.post(path, { type: 'end-call' }, {})).toEqual([
      200,
      { received: true, type: 'end-call' },
    ]);
    await waitFor(() => caller.closed !== undefined);
    expect(caller.closed?.reason).toBe('assistant-ended-call');
    expect((await h.post(path, say, {}))[0]).toBe(404);
  });

  it('honours monitorPlan: listening and control off, or behind the API key', async () => {
    const off = await toneCall({ listenEnabled: false, controlEnabled: false });
    expect(off.monitor).toEqual({});
    const offCaller = await connect(off.transport.websocketCallUrl);

    const locked = await toneCall({
      listenAuthenticationEnabled: true,
      controlAuthenticationEnabled: true,
    });
    const lockedCaller = await connect(locked.transport.websocketCallUrl);
    const path = controlPath(locked.monitor.controlUrl);
    const say = { type: 'say', content: 'hi' };
    expect((await h.post(path, say, {}))[0]).toBe(401);
    expect((await h.post(path, say, { authorization: 'Bearer wrong' }))[0]).toBe(401);
    expect((await h.post(path, say, { authorization: `Bearer ${h.key}` }))[0]).toBe(200);
    expect((await refusedStatus(locked.monitor.listenUrl))[0]).toBe(401);
    const listener = await connect(locked.monitor.listenUrl, { authorization: `Bearer ${h.key}` });
    await waitFor(() => listener.texts.length >= 1);

    // The off call's monitor URLs were never given out, and guessing them does not help.
    expect((await refusedStatus(`${h.wsBase}/call/${off.id}/listen?token=x`))[0]).toBe(403);
    expect((await h.post(`/call/${off.id}/control?token=x`, say, {}))[0]).toBe(403);
    offCaller.ws.close();
    lockedCaller.ws.close();
    await waitFor(() => listener.closed !== undefined);
  });
});
