import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEnvelope } from '../../../src/events/envelope.js';
import { validateEvent } from '../../../src/events/catalogue.js';
import { WEBHOOK_EVENT_NAMES as EVENT_NAMES } from '../../../src/spec/events.js';
import { start, type Harness, type World } from '../../support/sandbox.js';

// The event contract: the sandbox emits the canonical envelope, and `data` per event is the API's resource
// shape; Switchyard's own event catalogue must accept every event the sandbox can emit.
let h: Harness;
let acme: World;
beforeAll(async () => {
  h = await start();
  [acme] = await h.world();
});
afterAll(async () => {
  await h.close();
});

describe('events against the event catalogue', () => {
  it('emits all eleven events, each accepted by parseEnvelope + validateEvent', async () => {
    const wa = acme.channels.find((c) => c.type === 'whatsapp')!;
    const inbound = await h.hook('POST', '/inbound', { contact: { name: 'Cat', email: 'cat@example.com' }, channel_id: wa.id, body: 'hi' });
    const conv = inbound.body.data.conversation.id;
    await h.api('POST', `/conversations/${conv}/messages`, { body: { body: 'hello back' } });
    await h.api('PATCH', `/conversations/${conv}`, { body: { assignee: { type: 'ai', id: acme.ai_agents[0]!.id } } });
    await h.api('PATCH', `/conversations/${conv}`, { body: { status: 'closed' } });
    await h.api('PATCH', `/conversations/${conv}`, { body: { status: 'open' } });
    const contact = inbound.body.data.conversation.contact_id;
    await h.api('PUT', `/contacts/${contact}/lifecycle`, { body: { stage: 'Customer' } });
    const lead = (await h.api('POST', '/leads', { body: { contact_id: contact, name: 'L' } })).body.data;
    const lead2 = (await h.api('POST', '/leads', { body: { contact_id: contact, name: 'L2', value: 5 } })).body.data;
    await h.hook('POST', `/leads/${lead.id}/outcome`, { outcome: 'won' });
    await h.hook('POST', `/leads/${lead2.id}/outcome`, { outcome: 'lost' });

    const events = (await h.hook('GET', '/events')).body.data as { event: string }[];
    expect(new Set(events.map((e) => e.event))).toEqual(new Set(EVENT_NAMES));
    for (const env of events) {
      const result = validateEvent(parseEnvelope(Buffer.from(JSON.stringify(env))));
      expect([env.event, result.ok, result.ok ? null : result]).toEqual([env.event, true, null]);
    }
  });
});
