import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallParamsBuilder } from '../../src/calls/call-params-builder.js';
import { NO_PROVIDER_DEFAULTS } from '../../src/calls/pipeline-call-params.js';
import type { Doc } from '../../src/store/resource-store.js';
import type { Store } from '../../src/store/store.js';
import { storeTargets } from '../support/store-targets.js';

describe('the tools a call hands to its model', () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let orgId: string;
  beforeAll(async () => {
    const opened = await storeTargets()[0]!.open();
    store = opened.store;
    cleanup = opened.cleanup;
    orgId = await store.keys.createOrg('tools');
  });
  afterAll(() => cleanup());

  it('gives built-in tools without a function their default one, inline and stored', async () => {
    const stored = await store.resources.tools.create(orgId, { type: 'dtmf' });
    const builder = new CallParamsBuilder(store, {
      providers: NO_PROVIDER_DEFAULTS,
      vad: 'energy',
    });
    const params = await builder.build(
      orgId,
      {
        id: 'call-1',
        assistant: {
          model: {
            provider: 'openai',
            model: 'gpt-4o-mini',
            toolIds: [stored.id],
            tools: [
              {
                type: 'transferCall',
                destinations: [{ type: 'number', number: '+15550100' }],
              },
              { type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } },
            ],
          },
        },
      },
      16_000,
    );
    const tools = (params.assistant.model as Doc).tools as Doc[];
    expect(tools.map((tool) => (tool.function as Doc).name)).toEqual([
      'transferCall',
      'lookup',
      'dtmf',
    ]);
    expect((tools[0]!.function as Doc).parameters).toMatchObject({
      properties: { destination: { enum: ['+15550100'] } },
    });
  });

  it("carries the call's phone number (its server is the reporting side's next choice)", async () => {
    const number = await store.resources.phoneNumbers.create(orgId, {
      provider: 'byo-phone-number',
      number: '+15550142',
      server: { url: 'https://example.test/hooks' },
    });
    const builder = new CallParamsBuilder(store, {
      providers: NO_PROVIDER_DEFAULTS,
      vad: 'energy',
    });
    const assistant = { model: { provider: 'openai', model: 'gpt-4o-mini' } };
    const phoneCall = await builder.build(
      orgId,
      { id: 'call-2', phoneNumberId: number.id, assistant },
      8000,
    );
    expect(phoneCall.phoneNumber).toMatchObject({
      id: number.id,
      server: { url: 'https://example.test/hooks' },
    });
    const webCall = await builder.build(orgId, { id: 'call-3', assistant }, 16_000);
    expect(webCall.phoneNumber).toBeUndefined();
  });
});
