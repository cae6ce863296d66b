import type { Doc, Resource } from '../store/resource-store.js';
import type { Store } from '../store/store.js';
import type { CallEngine } from './call-engine.js';
import { CallStartError, type CallParamsBuilder } from './call-params-builder.js';
import { NoTransportCallStarter, type CallStarter } from './call-starter.js';

/**
 * Fields the POST /call response shows but the stored call must not keep: the websocket and
 * monitor URLs carry the call's tokens, which are shown once (only their hashes are kept, in
 * memory). The route takes this key off the starter's answer before storing it.
 */
export const RESPONSE_ONLY_FIELDS: unique symbol = Symbol('parla.responseOnlyFields');

const WEBSOCKET_PROVIDERS = new Set(['parla.websocket', 'vapi.websocket']);
const DEFAULT_SAMPLE_RATE_HZ: Readonly<Record<string, number>> = {
  pcm_s16le: 16_000,
  mulaw: 8_000,
};

function ended(endedReason: string, endedMessage: string): Doc {
  const now = new Date().toISOString();
  return { status: 'ended', endedReason, endedMessage, startedAt: now, endedAt: now };
}

/**
 * Starts websocket calls (`transport.provider` parla.websocket or vapi.websocket): resolves the
 * assistant and keys, opens the live session and answers with the call's URLs. Calls of other
 * kinds go to `fallback` (until their transports exist, they end at once).
 */
export class WebsocketCallStarter implements CallStarter {
  constructor(
    private readonly store: Store,
    private readonly engine: CallEngine,
    private readonly builder: CallParamsBuilder,
    private readonly fallback: CallStarter = new NoTransportCallStarter(),
  ) {}

  async start(orgId: string, call: Resource): Promise<Doc> {
    const transport = call.transport as Doc | undefined;
    if (transport === undefined || !WEBSOCKET_PROVIDERS.has(String(transport.provider))) {
      return this.fallback.start(orgId, call);
    }
    if (this.engine.closing) {
      return ended('worker-shutdown', 'This Parla server is shutting down');
    }
    const audioFormat = (transport.audioFormat ?? {}) as Doc;
    const encoding = audioFormat.format === 'mulaw' ? 'mulaw' : 'pcm_s16le';
    const sampleRateHz =
      typeof audioFormat.sampleRate === 'number'
        ? audioFormat.sampleRate
        : (DEFAULT_SAMPLE_RATE_HZ[encoding] ?? 16_000);
    // The stored call with its secrets open (an inline assistant's credentials).
    const internal = (await this.store.resources.calls.getInternal(orgId, call.id)) ?? call;
    let params;
    try {
      params = await this.builder.build(orgId, internal, sampleRateHz);
    } catch (error) {
      if (error instanceof CallStartError) {
        return ended(error.endedReason, error.message);
      }
      throw error;
    }
    const urls = this.engine.open(orgId, call, params, encoding);
    const { websocketCallUrl, ...monitor } = urls;
    return {
      [RESPONSE_ONLY_FIELDS]: { transport: { ...transport, websocketCallUrl }, monitor },
    };
  }
}
