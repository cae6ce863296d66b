import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { CLIENT_MESSAGE_TYPES } from '../../src/control/schemas/assistant.js';
import { useHarness, type Harness } from '../support/app-harness.js';
import { storeTargets } from '../support/store-targets.js';

interface Body {
  id: string;
  createdAt: string;
  updatedAt: string;
  statusCode: number;
  error: string;
  message: string[];
  [key: string]: unknown;
}

type Reply = [number, Body];

const voice = { provider: 'test-voice', voiceId: 'v1' };

/** Builds `{a: {b: value}}` from `a.b`; voice and model get the provider they need. */
function nest(path: string, value: unknown): object {
  const [head = '', ...rest] = path.split('.');
  const inner = rest.length === 0 ? value : nest(rest.join('.'), value);
  const vendor = head === 'voice' ? voice : head === 'model' ? { provider: 'p' } : undefined;
  return { [head]: vendor === undefined ? inner : { ...vendor, ...(inner as object) } };
}

const rule = (timeoutSeconds: number) => [{ type: 'customer', regex: 'x', timeoutSeconds }];
const fourier = 'backgroundSpeechDenoisingPlan.fourierDenoisingPlan';

/** [field, accepted value, rejected value, message (prefixed by the field when it starts with must)]. */
const LIMITS: [string, unknown, unknown, string][] = [
  ['name', 'a'.repeat(40), 'a'.repeat(41), 'must be shorter than or equal to 40 characters'],
  ['startSpeakingPlan.waitSeconds', 5, 5.1, 'must not be greater than 5'],
  ['stopSpeakingPlan.numWords', 10, 11, 'must not be greater than 10'],
  ['stopSpeakingPlan.voiceSeconds', 0.5, 0.51, 'must not be greater than 0.5'],
  ['stopSpeakingPlan.backoffSeconds', 10, 10.5, 'must not be greater than 10'],
  ['maxDurationSeconds', 10, 9, 'must not be less than 10'],
  ['maxDurationSeconds', 43200, 43201, 'must not be greater than 43200'],
  ['silenceTimeoutSeconds', 10, 9, 'must not be less than 10'],
  ['silenceTimeoutSeconds', 3600, 3601, 'must not be greater than 3600'],
  ['voice.chunkPlan.minCharacters', 80, 81, 'must not be greater than 80'],
  ['voice.chunkPlan.minCharacters', 1, 0, 'must not be less than 1'],
  [
    'startSpeakingPlan.transcriptionEndpointingPlan.onNumberSeconds',
    3,
    3.01,
    'must not be greater than 3',
  ],
  [
    'startSpeakingPlan.customEndpointingRules',
    rule(15),
    rule(15.5),
    'startSpeakingPlan.customEndpointingRules.0.timeoutSeconds must not be greater than 15',
  ],
  [`${fourier}.baselinePercentile`, 99, 100, 'must not be greater than 99'],
  [`${fourier}.baselineOffsetDb`, -5, -4, 'must not be greater than -5'],
  ['messagePlan.idleTimeoutSeconds', 60, 61, 'must not be greater than 60'],
  ['model.temperature', 2, 2.1, 'must not be greater than 2'],
  ['model.maxTokens', 10000, 10001, 'must not be greater than 10000'],
  [
    'model.messages',
    [{ role: 'system', content: 'x' }],
    [{ role: 'robot', content: 'x' }],
    'model.messages.0.role must be one of the following values: assistant, function, user, system, tool',
  ],
  [
    'firstMessageMode',
    'assistant-waits-for-user',
    'never',
    'must be one of the following values: assistant-speaks-first, assistant-speaks-first-with-model-generated-message, assistant-waits-for-user',
  ],
  [
    'hooks',
    [{ on: 'customer.speech.timeout', do: [{ type: 'say', exact: 'Still there?' }] }],
    [{ on: 'call.ringing', do: [] }],
    'hooks.0.on must be one of the following values: call.ending, customer.speech.timeout',
  ],
  [
    'clientMessages',
    ['transcript'],
    ['end-of-call-report'],
    `clientMessages.0 must be one of the following values: ${CLIENT_MESSAGE_TYPES.join(', ')}`,
  ],
];

/** Keeps only the given ids, in the order listed. */
function only(list: Body[], ids: string[]): string[] {
  return list.map((item) => item.id).filter((id) => ids.includes(id));
}

for (const target of storeTargets()) {
  describe(target.name, () => {
    const h: Harness = useHarness(target);
    const post = (url: string, body?: unknown, key?: string) =>
      h.post(url, body, key) as Promise<Reply>;
    const get = (url: string, key?: string) => h.get(url, key) as Promise<Reply>;
    const patch = (url: string, body?: unknown, key?: string) =>
      h.patch(url, body, key) as Promise<Reply>;
    const del = (url: string, key?: string) => h.del(url, key) as Promise<Reply>;
    const list = (url: string, key?: string) => h.get(url, key) as Promise<[number, Body[]]>;

    it('creates, gets, lists, updates and deletes an assistant', async () => {
      const [status, created] = await post('/assistant', {
        name: 'Support',
        firstMessage: 'Hello!',
        model: { provider: 'openai', model: 'gpt-4o', vendorOption: { x: 1 } },
        voice,
        transcriber: { provider: 'test-stt', language: 'en' },
        metadata: { team: 'a' },
      });
      expect(status).toBe(201);
      expect(created).toMatchObject({ name: 'Support', orgId: h.orgA, metadata: { team: 'a' } });
      expect(created.model).toEqual({
        provider: 'openai',
        model: 'gpt-4o',
        vendorOption: { x: 1 },
      });
      expect(created.createdAt).toBe(created.updatedAt);

      expect(await get(`/assistant/${created.id}`)).toEqual([200, created]);
      const [listStatus, items] = await list('/assistant');
      expect(listStatus).toBe(200);
      expect(items.map((item) => item.id)).toContain(created.id);

      const [patchStatus, updated] = await patch(`/assistant/${created.id}`, { name: 'Sales' });
      expect(patchStatus).toBe(200);
      expect(updated).toMatchObject({ id: created.id, name: 'Sales', firstMessage: 'Hello!' });
      expect(updated.updatedAt >= created.updatedAt).toBe(true);

      expect(await del(`/assistant/${created.id}`)).toEqual([200, updated]);
      const [goneStatus, gone] = await get(`/assistant/${created.id}`);
      expect(goneStatus).toBe(404);
      expect(gone).toEqual({
        statusCode: 404,
        error: 'Not Found',
        message: expect.any(String) as string,
      });
      expect((await del(`/assistant/${created.id}`))[0]).toBe(404);
    });

    it('fills documented defaults on create only', async () => {
      const [, created] = await post('/assistant', {
        startSpeakingPlan: {},
        stopSpeakingPlan: {},
        monitorPlan: {},
        voice: { ...voice, chunkPlan: {} },
        backgroundSpeechDenoisingPlan: { fourierDenoisingPlan: {} },
      });
      expect(created).toMatchObject({
        maxDurationSeconds: 600,
        firstMessageMode: 'assistant-speaks-first',
        firstMessageInterruptionsEnabled: false,
        clientMessages: expect.arrayContaining([
          'conversation-update',
          'workflow.node.started',
        ]) as string[],
        serverMessages: expect.arrayContaining([
          'end-of-call-report',
          'assistant.started',
        ]) as string[],
        startSpeakingPlan: { waitSeconds: 0.4, customEndpointingRules: [] },
        stopSpeakingPlan: { numWords: 0, voiceSeconds: 0.2, backoffSeconds: 1 },
        monitorPlan: {
          listenEnabled: true,
          controlEnabled: true,
          listenAuthenticationEnabled: false,
        },
        voice: { chunkPlan: { enabled: true, minCharacters: 30 } },
        backgroundSpeechDenoisingPlan: {
          fourierDenoisingPlan: {
            enabled: false,
            staticThreshold: -35,
            baselineOffsetDb: -15,
            windowSizeMs: 3000,
            baselinePercentile: 85,
          },
        },
      });
      expect(created.clientMessages).toHaveLength(13);
      expect(created.serverMessages).toHaveLength(11);
      expect(created).not.toHaveProperty('silenceTimeoutSeconds');

      const [, bare] = await post('/assistant', {});
      const [, updated] = await patch(`/assistant/${bare.id}`, {
        maxDurationSeconds: 900,
        startSpeakingPlan: { transcriptionEndpointingPlan: {} },
      });
      expect(updated).toMatchObject({
        maxDurationSeconds: 900,
        firstMessageMode: 'assistant-speaks-first',
        startSpeakingPlan: {
          waitSeconds: 0.4,
          transcriptionEndpointingPlan: {
            onPunctuationSeconds: 0.1,
            onNoPunctuationSeconds: 1.5,
            onNumberSeconds: 0.5,
          },
        },
      });
      // A PATCH that leaves a defaulted field out does not reset it.
      await patch(`/assistant/${bare.id}`, { firstMessageMode: 'assistant-waits-for-user' });
      const [, again] = await patch(`/assistant/${bare.id}`, { name: 'x' });
      expect(again).toMatchObject({
        firstMessageMode: 'assistant-waits-for-user',
        maxDurationSeconds: 900,
      });
    });

    it.each(LIMITS)('validates %s: accepts %j, rejects %j', async (field, good, bad, text) => {
      const message = text.startsWith('must') ? `${field} ${text}` : text;
      const [goodStatus, created] = await post('/assistant', nest(field, good));
      expect(goodStatus, JSON.stringify(created)).toBe(201);
      const [badStatus, error] = await post('/assistant', nest(field, bad));
      expect(badStatus).toBe(400);
      expect(
        error.message.some((m) => m.startsWith(message)),
        error.message.join(),
      ).toBe(true);
      const [patchStatus, patchError] = await patch(`/assistant/${created.id}`, nest(field, bad));
      expect(patchStatus).toBe(400);
      expect(patchError.message).toContain(message);
    });

    it('rejects unknown properties at every level but inside vendor objects', async () => {
      const [status, body] = await post('/assistant', {
        colour: 'red',
        startSpeakingPlan: { speed: 1 },
      });
      expect(status).toBe(400);
      expect(body).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: expect.arrayContaining([
          'property colour should not exist',
          'startSpeakingPlan.property speed should not exist',
        ]) as string[],
      });
      const [, deep] = await post('/assistant', { voice: { ...voice, chunkPlan: { size: 3 } } });
      expect(deep.message).toEqual(['voice.chunkPlan.property size should not exist']);
      const [patchStatus, patchBody] = await patch(`/assistant/${h.orgA}`, { colour: 'red' });
      expect(patchStatus).toBe(400);
      expect(patchBody.message).toEqual(['property colour should not exist']);
      const [vendorStatus] = await post('/assistant', {
        transcriber: { provider: 'x', endpointing: 300 },
        voice: { ...voice, stability: 0.5 },
      });
      expect(vendorStatus).toBe(201);
      const [, missing] = await post('/assistant', { model: { model: 'gpt-4o' } });
      expect(missing.message).toEqual(['model.provider should not be empty']);
    });

    it('accepts the documented union shapes', async () => {
      const [status, body] = await post('/assistant', {
        voicemailDetection: { provider: 'vapi' },
        backgroundSound: 'off',
        startSpeakingPlan: {
          smartEndpointingPlan: { provider: 'livekit' },
          customEndpointingRules: [
            {
              type: 'assistant',
              regex: 'number\\?$',
              regexOptions: [{ type: 'ignore-case', enabled: true }],
              timeoutSeconds: 3,
            },
            { type: 'both', assistantRegex: 'a', customerRegex: 'b', timeoutSeconds: 1 },
          ],
        },
        compliancePlan: { hipaaEnabled: { hipaaEnabled: false }, pciEnabled: false },
        hooks: [
          {
            on: 'call.ending',
            do: [{ type: 'transfer', destination: { type: 'number', number: '+15550100' } }],
          },
        ],
      });
      expect(status, JSON.stringify(body)).toBe(201);
      expect(body).toMatchObject({
        voicemailDetection: { provider: 'vapi', beepMaxAwaitSeconds: 30, type: 'audio' },
        startSpeakingPlan: {
          smartEndpointingPlan: { waitFunction: '20 + 500 * sqrt(x) + 2500 * x^3' },
        },
      });
      const [badStatus, bad] = await post('/assistant', {
        startSpeakingPlan: { smartEndpointingPlan: { provider: 'krisp' } },
        voicemailDetection: 'on',
      });
      expect(badStatus).toBe(400);
      expect([...bad.message].sort()).toEqual([
        'startSpeakingPlan.smartEndpointingPlan.provider must be one of the supported kinds',
        'voicemailDetection must match ^off$ regular expression',
      ]);
    });

    it('rejects ids of resources that do not exist in the org', async () => {
      const tool = await h.store.resources.tools.create(h.orgA, { type: 'function' });
      const otherTool = await h.store.resources.tools.create(h.orgB, { type: 'function' });
      const [okStatus, ok] = await post('/assistant', {
        model: { provider: 'p', toolIds: [tool.id] },
      });
      expect(okStatus).toBe(201);
      const [status, body] = await post('/assistant', {
        model: { provider: 'p', toolIds: [tool.id, otherTool.id] },
        credentialIds: ['missing'],
      });
      expect(status).toBe(400);
      expect(body.message).toEqual([
        `model.toolIds.1: Tool with id ${otherTool.id} not found`,
        'credentialIds.0: Credential with id missing not found',
      ]);
      const [patchStatus, patchBody] = await patch(`/assistant/${ok.id}`, {
        server: { url: 'https://example.com/hook', credentialId: 'nope' },
      });
      expect(patchStatus).toBe(400);
      expect(patchBody.message).toEqual(['server.credentialId: Credential with id nope not found']);
    });

    it('keeps each org to its own assistants', async () => {
      const [, mine] = await post('/assistant', { name: 'Org A only' });
      expect((await get(`/assistant/${mine.id}`, h.keyB))[0]).toBe(404);
      expect((await patch(`/assistant/${mine.id}`, { name: 'stolen' }, h.keyB))[0]).toBe(404);
      expect((await del(`/assistant/${mine.id}`, h.keyB))[0]).toBe(404);
      const [, theirs] = await list('/assistant', h.keyB);
      expect(theirs.map((item) => item.id)).not.toContain(mine.id);
      expect(await get(`/assistant/${mine.id}`)).toMatchObject([200, { name: 'Org A only' }]);
    });

    it('filters lists by creation and update time', async () => {
      const made: Body[] = [];
      for (let i = 0; i < 3; i += 1) {
        made.push((await post('/assistant', { name: `dated ${i}` }))[1]);
        await sleep(5);
      }
      const [a, b, c] = made as [Body, Body, Body];
      const ids = [a.id, b.id, c.id];
      const expectIds = async (query: string, expected: string[]) => {
        const [status, items] = await list(`/assistant?${query}`);
        expect(status).toBe(200);
        expect(only(items, ids).sort()).toEqual([...expected].sort());
      };
      const created = encodeURIComponent(b.createdAt);
      await expectIds(`createdAtGt=${created}`, [c.id]);
      await expectIds(`createdAtGe=${created}`, [b.id, c.id]);
      await expectIds(`createdAtLt=${created}`, [a.id]);
      await expectIds(`createdAtLe=${created}`, [a.id, b.id]);

      // Update in reverse order, so update times run opposite to creation times.
      const updated: Body[] = [];
      for (const item of [c, b, a]) {
        updated.push((await patch(`/assistant/${item.id}`, { firstMessage: 'hi' }))[1]);
        await sleep(5);
      }
      const middle = encodeURIComponent((updated[1] as Body).updatedAt);
      await expectIds(`updatedAtGt=${middle}`, [a.id]);
      await expectIds(`updatedAtGe=${middle}`, [a.id, b.id]);
      await expectIds(`updatedAtLt=${middle}`, [c.id]);
      await expectIds(`updatedAtLe=${middle}`, [b.id, c.id]);
      await expectIds(`createdAtGe=${created}&updatedAtLe=${middle}`, [b.id, c.id]);

      const [badStatus, bad] = await get('/assistant?createdAtGt=yesterday');
      expect(badStatus).toBe(400);
      expect(bad.message).toEqual(['createdAtGt must be a valid date-time']);
    });

    it('accepts list limits 0 to 1000 only', async () => {
      await post('/assistant', { name: 'limit' });
      const [zeroStatus, zero] = await list('/assistant?limit=0');
      expect([zeroStatus, zero]).toEqual([200, []]);
      const [oneStatus, one] = await list('/assistant?limit=1');
      expect(oneStatus).toBe(200);
      expect(one).toHaveLength(1);
      expect((await list('/assistant?limit=1000'))[0]).toBe(200);
      const [highStatus, high] = await get('/assistant?limit=1001');
      expect(highStatus).toBe(400);
      expect(high.message).toEqual(['limit must not be greater than 1000']);
      const [lowStatus, low] = await get('/assistant?limit=-1');
      expect(lowStatus).toBe(400);
      expect(low.message).toEqual(['limit must not be less than 0']);
    });
  });
}
