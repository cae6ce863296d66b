import { beforeAll, describe, expect, it } from 'vitest';
import type { CallStarter } from '../../src/calls/call-starter.js';
import type { Doc, Resource } from '../../src/store/resource-store.js';
import { useHarness, type Harness } from '../support/app-harness.js';
import { storeTargets } from '../support/store-targets.js';
import { api, badRequest } from '../support/typed-api.js';

/** A SIP trunk and a number on it in org A; returns the number's id. */
async function phoneNumber(h: Harness, number: string): Promise<string> {
  const a = api(h);
  const trunk = { provider: 'byo-sip-trunk', gateways: [{ ip: '203.0.113.10' }] };
  const credentialId = (await a.post('/credential', trunk))[1].id;
  const body = { provider: 'byo-phone-number', number, credentialId };
  return (await a.post('/phone-number', body))[1].id;
}

/** Records every call it is handed and answers as a live websocket call would. */
class RecordingStarter implements CallStarter {
  readonly started: { orgId: string; call: Resource }[] = [];
  start(orgId: string, call: Resource): Promise<Doc> {
    this.started.push({ orgId, call });
    if (call.name === 'explode') {
      return Promise.reject(new Error('engine down'));
    }
    const transport = call.transport as Doc;
    return Promise.resolve({
      status: 'in-progress',
      startedAt: '2026-01-01T00:00:00.000Z',
      transport: { ...transport, websocketCallUrl: `ws://parla.test/${call.id}/transport` },
    });
  }
}

for (const target of storeTargets()) {
  describe(`${target.name}: default call starter`, () => {
    const h = useHarness(target);
    const a = api(h);
    let assistantId = '';
    let phoneNumberId = '';
    const ws = { provider: 'vapi.websocket' };

    beforeAll(async () => {
      assistantId = (await h.store.resources.assistants.create(h.orgA, { name: 'agent' })).id;
      phoneNumberId = await phoneNumber(h, '+14155550100');
    });

    it('creates a websocket call that ends at once without a transport', async () => {
      const [status, call] = await a.post('/call', { assistantId, transport: ws, name: 'first' });
      expect(status).toBe(201);
      expect(call).toMatchObject({
        type: 'vapi.websocketCall',
        status: 'ended',
        endedReason: 'call.start.error-get-transport',
        orgId: h.orgA,
        assistantId,
        transport: {
          provider: 'vapi.websocket',
          conversationType: 'voice',
          audioFormat: { format: 'pcm_s16le', container: 'raw', sampleRate: 16000 },
        },
      });
      expect(await a.get(`/call/${call.id}`)).toEqual([200, call]);
      const parla = {
        provider: 'parla.websocket',
        audioFormat: { format: 'mulaw', sampleRate: 8000 },
      };
      const [, own] = await a.post('/call', { assistantId, transport: parla });
      expect(own).toMatchObject({
        type: 'parla.websocketCall',
        transport: { audioFormat: { format: 'mulaw', container: 'raw', sampleRate: 8000 } },
      });
    });

    it('types calls: outbound with a number and a customer, else a web call', async () => {
      const customer = { number: '+14155550111', name: 'Ada' };
      const [, outbound] = await a.post('/call', { assistantId, phoneNumberId, customer });
      expect(outbound).toMatchObject({ type: 'outboundPhoneCall', phoneNumberId, customer });
      const [, web] = await a.post('/call', { assistant: { name: 'inline' } });
      expect(web).toMatchObject({ type: 'webCall', assistant: { name: 'inline' } });
      const noDial = { assistantId, phoneNumberId, customer: { name: 'x' } };
      expect((await a.post('/call', noDial))[0]).toBe(400);

      // A transient number (not stored) is checked like a stored one.
      const trunk = { provider: 'byo-sip-trunk', gateways: [{ ip: '203.0.113.11' }] };
      const credentialId = (await a.post('/credential', trunk))[1].id;
      const transient = { provider: 'byo-phone-number', number: '+14155550177', credentialId };
      const viaTransient = { assistantId, phoneNumber: transient, customer };
      expect((await a.post('/call', viaTransient))[1].type).toBe('outboundPhoneCall');
      const badNumber = { ...viaTransient, phoneNumber: { ...transient, number: '4155550177' } };
      expect((await a.post('/call', badNumber))[0]).toBe(400);
      const badTrunk = { ...viaTransient, phoneNumber: { ...transient, credentialId: 'nope' } };
      expect(await a.post('/call', badTrunk)).toEqual([
        400,
        badRequest('phoneNumber.credentialId: no credential with id nope'),
      ]);
      const withWs = {
        assistantId,
        phoneNumber: transient,
        transport: { provider: 'vapi.websocket' },
      };
      expect((await a.post('/call', withWs))[0]).toBe(400);
    });

    it('needs exactly one of the handlers', async () => {
      const need = 'Need assistant, assistantId, squad, squadId, workflow or workflowId.';
      expect(await a.post('/call', { name: 'lonely' })).toEqual([
        400,
        { statusCode: 400, error: 'Bad Request', message: need },
      ]);
      const [status, error] = await a.post('/call', { assistantId, assistant: { name: 'b' } });
      expect(status).toBe(400);
      expect(error.message).toContain('Give only one of');
      expect(await a.post('/call', { assistant: { assistantId } })).toEqual([
        400,
        badRequest('assistant.property assistantId should not exist'),
      ]);
    });

    it('checks referenced ids in the org', async () => {
      for (const field of ['assistantId', 'squadId', 'workflowId']) {
        const [status, error] = await a.post('/call', { [field]: 'nope' });
        expect(status).toBe(400);
        expect(error.message[0]).toContain(field);
      }
      expect(await a.post('/call', { assistantId, phoneNumberId: 'nope' })).toEqual([
        400,
        badRequest('phoneNumberId: no phone number with id nope'),
      ]);
      const squadId = (await h.store.resources.squads.create(h.orgA, { members: [] })).id;
      expect((await a.post('/call', { squadId }))[0]).toBe(201);
    });

    it('refuses phone fields with a websocket transport and checks the audio format', async () => {
      expect(await a.post('/call', { assistantId, phoneNumberId, transport: ws })).toEqual([
        400,
        badRequest('phoneNumberId and phoneNumber cannot be used with a websocket transport'),
      ]);
      const audio = (audioFormat: object) =>
        a.post('/call', { assistantId, transport: { ...ws, audioFormat } });
      expect(await audio({ format: 'pcm_s16le' })).toEqual([
        400,
        badRequest('transport.audioFormat.sampleRate should not be empty'),
      ]);
      expect(await audio({ sampleRate: 16000 })).toEqual([
        400,
        badRequest('transport.audioFormat.format should not be empty'),
      ]);
      expect((await audio({ format: 'pcm_s16le', sampleRate: 8000 }))[0]).toBe(201);
      expect((await audio({ format: 'pcm_s16le', sampleRate: 7999 }))[0]).toBe(400);
      expect((await audio({ format: 'pcm_s16le', sampleRate: 48000 }))[0]).toBe(201);
      expect((await audio({ format: 'pcm_s16le', sampleRate: 48001 }))[0]).toBe(400);
      expect((await audio({ format: 'opus', sampleRate: 48000 }))[0]).toBe(400);
      const wrong = { provider: 'vapi.websocketCall' };
      expect((await a.post('/call', { assistantId, transport: wrong }))[0]).toBe(400);
    });

    it('limits names to 40 characters and checks customer numbers', async () => {
      expect((await a.post('/call', { assistantId, name: 'n'.repeat(40) }))[0]).toBe(201);
      expect(await a.post('/call', { assistantId, name: 'n'.repeat(41) })).toEqual([
        400,
        badRequest('name must be shorter than or equal to 40 characters'),
      ]);
      const call = (customer: object) => a.post('/call', { assistantId, phoneNumberId, customer });
      expect((await call({ number: '4155550111' }))[0]).toBe(400);
      expect((await call({ number: 'ext4155', numberE164CheckEnabled: false }))[0]).toBe(201);
      expect((await call({ number: '+14155550111', name: 'c'.repeat(41) }))[0]).toBe(400);
      expect(await call({ number: '+14155550111', vip: true })).toEqual([
        400,
        badRequest('customer.property vip should not exist'),
      ]);
    });

    it('updates only the name and deletes with or without a JSON body', async () => {
      const [, call] = await a.post('/call', { assistantId, name: 'before' });
      const [status, renamed] = await a.patch(`/call/${call.id}`, { name: 'after' });
      expect([status, renamed.name, renamed.endedReason]).toEqual([200, 'after', call.endedReason]);
      expect(await a.patch(`/call/${call.id}`, { status: 'queued' })).toEqual([
        400,
        badRequest('property status should not exist'),
      ]);
      expect((await a.patch(`/call/${call.id}`, { name: 'n'.repeat(41) }))[0]).toBe(400);

      const bodies = [undefined, {}, { ids: ['a', 'b'] }];
      for (const payload of bodies) {
        const [, doomed] = await a.post('/call', { assistantId });
        const response = await h.request({
          method: 'DELETE',
          url: `/call/${doomed.id}`,
          ...(payload === undefined ? {} : { payload }),
        });
        expect(response.statusCode).toBe(200);
        expect(response.json()).toMatchObject({ id: doomed.id });
        expect((await a.get(`/call/${doomed.id}`))[0]).toBe(404);
      }
      const bad = await h.request({ method: 'DELETE', url: `/call/${call.id}`, payload: { x: 1 } });
      expect(bad.statusCode).toBe(400);
    });

    it('lists with id, assistantId and phoneNumberId filters and limit 0..1000', async () => {
      const otherAssistant = (await h.store.resources.assistants.create(h.orgA, {})).id;
      const [, mine] = await a.post('/call', { assistantId: otherAssistant });
      const ids = async (query: string) => (await a.list(`/call?${query}`)).map((c) => c.id);
      expect(await ids(`assistantId=${otherAssistant}`)).toEqual([mine.id]);
      expect(await ids(`id=${mine.id}`)).toEqual([mine.id]);
      const [, dialled] = await a.post('/call', {
        assistantId,
        phoneNumberId,
        customer: { number: '+14155550123' },
      });
      expect(await ids(`phoneNumberId=${phoneNumberId}`)).toContain(dialled.id);
      expect(await ids(`phoneNumberId=${phoneNumberId}`)).not.toContain(mine.id);
      expect(await ids('limit=1')).toHaveLength(1);
      expect((await a.get('/call?limit=1000'))[0]).toBe(200);
      expect(await a.get('/call?limit=1001')).toEqual([
        400,
        badRequest('limit must not be greater than 1000'),
      ]);
    });

    it("keeps org A's calls, assistants and numbers from org B", async () => {
      const [, mine] = await a.post('/call', { assistantId, name: 'private' });
      const missing = [
        404,
        { statusCode: 404, error: 'Not Found', message: `Call with id ${mine.id} not found` },
      ];
      expect(await a.get(`/call/${mine.id}`, h.keyB)).toEqual(missing);
      expect(await a.patch(`/call/${mine.id}`, { name: 'x' }, h.keyB)).toEqual(missing);
      const deleted = await h.request({ method: 'DELETE', url: `/call/${mine.id}`, key: h.keyB });
      expect(deleted.statusCode).toBe(404);
      expect((await a.get('/call', h.keyB))[1]).toEqual([]);
      expect((await a.post('/call', { assistantId }, h.keyB))[0]).toBe(400);
      const viaNumber = { assistant: {}, phoneNumberId, customer: { number: '+14155550100' } };
      expect((await a.post('/call', viaNumber, h.keyB))[0]).toBe(400);
      expect((await a.get(`/call/${mine.id}`))[1].name).toBe('private');
    });
  });

  describe(`${target.name}: custom call starter`, () => {
    const starter = new RecordingStarter();
    const h = useHarness(target, { callStarter: starter });
    const a = api(h);

    it('hands the queued call to the starter and merges its fields', async () => {
      const assistantId = (await h.store.resources.assistants.create(h.orgA, {})).id;
      const transport = { provider: 'parla.websocket' };
      const [status, call] = await a.post('/call', { assistantId, transport });
      expect(status).toBe(201);
      expect(starter.started).toHaveLength(1);
      expect(starter.started[0]?.orgId).toBe(h.orgA);
      expect(starter.started[0]?.call).toMatchObject({
        id: call.id,
        status: 'queued',
        type: 'parla.websocketCall',
      });
      const url = `ws://parla.test/${call.id}/transport`;
      expect(call).toMatchObject({ status: 'in-progress', transport: { websocketCallUrl: url } });
      expect(call).not.toHaveProperty('endedReason');
      expect((await a.get(`/call/${call.id}`))[1]).toEqual(call);
    });

    it('ends the call when the starter fails', async () => {
      const assistantId = (await h.store.resources.assistants.create(h.orgA, {})).id;
      const [status, call] = await a.post('/call', { assistantId, name: 'explode' });
      expect(status).toBe(201);
      expect(call).toMatchObject({
        status: 'ended',
        endedReason: 'call.start.error-get-transport',
      });
    });
  });
}
