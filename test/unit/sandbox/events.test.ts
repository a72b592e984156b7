import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sign } from '../../../src/events/signature.js';
import { eventually, start, type Harness, type World } from '../../support/sandbox.js';

// Spec: Events (signed POSTs, resource shapes, retries with back-off) and the canonical envelope.
const SECRET = 'whsec_test';

interface Received {
  id: string;
  event: string;
  bytes: Buffer;
  signature: string | undefined;
  contentType: string | undefined;
  data: any;
}

let receiver: Server;
let receiverUrl: string;
let received: Received[] = [];
/** Status to answer for the n-th delivery (0-based) of an event id. */
let respond: (attempt: number, event: string) => number = () => 200;
let delayMs = 0;
let h: Harness;
let acme: World;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      const env = JSON.parse(bytes.toString('utf8')) as { id: string; event: string; data: unknown };
      const attempt = received.filter((r) => r.id === env.id).length;
      received.push({
        id: env.id,
        event: env.event,
        bytes,
        signature: req.headers['x-service-signature'] as string | undefined,
        contentType: req.headers['content-type'],
        data: env.data,
      });
      setTimeout(() => {
        res.statusCode = respond(attempt, env.event);
        res.end();
      }, delayMs);
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
  h = await start({ webhookUrl: receiverUrl, secret: SECRET, retry: { baseMs: 40, maxMs: 200, maxAttempts: 4, timeoutMs: 2000 } });
  [acme] = await h.world();
});
afterAll(async () => {
  await h.close();
  await new Promise<void>((r) => receiver.close(() => r()));
});
beforeEach(async () => {
  await h.sandbox.emitter.idle();
  received = [];
  respond = () => 200;
  delayMs = 0;
});

const delivered = (n: number) => eventually(() => (received.length >= n ? received : undefined));

describe('envelope and signature', () => {
  it('POSTs message.sent as a signed canonical envelope whose data is the Message the API returned', async () => {
    const conv = (await h.api('GET', '/conversations?status=open')).body.data.find(
      (c: { channel: { type: string } }) => c.channel.type === 'whatsapp',
    );
    const sent = (await h.api('POST', `/conversations/${conv.id}/messages`, { body: { body: 'Shipped!' } })).body.data;
    const [got] = await delivered(1);
    const env = JSON.parse(got!.bytes.toString('utf8'));
    expect(Object.keys(env).sort()).toEqual(['created_at', 'data', 'event', 'id']);
    expect(env.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(env.event).toBe('message.sent');
    expect(Number.isNaN(Date.parse(env.created_at))).toBe(false);
    expect(env.data).toEqual(sent);
    expect(got!.contentType).toBe('application/json');
    expect(got!.signature).toBe(sign(SECRET, got!.bytes));
    expect(got!.signature).not.toBe(sign('wrong', got!.bytes));
    expect((await h.api('GET', `/messages/${env.data.id}`)).body.data).toEqual(sent);
  });

  it('emits contact.created, conversation.created, message.received in order for an inbound message to a new contact', async () => {
    const wa = acme.channels.find((c) => c.type === 'whatsapp')!;
    const r = await h.hook('POST', '/inbound', {
      contact: { name: 'New Customer', phone: '+201119998877' },
      channel_id: wa.id,
      body: 'Hello?',
    });
    expect(r.status).toBe(201);
    const got = await delivered(3);
    expect(got.map((e) => e.event)).toEqual(['contact.created', 'conversation.created', 'message.received']);
    expect(got[0]!.data).toMatchObject({ name: 'New Customer', phone: '+201119998877' });
    expect(got[1]!.data).toMatchObject({ id: r.body.data.conversation.id, status: 'open', channel: { id: wa.id } });
    expect(got[2]!.data).toMatchObject({ direction: 'inbound', body: 'Hello?', conversation_id: r.body.data.conversation.id });
    const again = await h.hook('POST', '/inbound', { conversation_id: r.body.data.conversation.id, body: 'Still there?' });
    expect(again.body.data.conversation.id).toBe(r.body.data.conversation.id);
    expect((await delivered(4))[3]!.event).toBe('message.received');
  });

  it('emits conversation.assigned, conversation.closed and conversation.opened with the Conversation', async () => {
    const c = (await h.api('POST', '/contacts', { body: { name: 'Conv events' } })).body.data;
    const cv = (await h.api('POST', '/conversations', { body: { contact: c.id, channel_id: acme.channels[0]!.id } })).body.data;
    await h.api('PATCH', `/conversations/${cv.id}`, { body: { assignee: { type: 'user', id: acme.teammates[0]!.id } } });
    await h.api('PATCH', `/conversations/${cv.id}`, { body: { status: 'closed', category: 'Resolved' } });
    await h.api('PATCH', `/conversations/${cv.id}`, { body: { status: 'open' } });
    const got = await delivered(5);
    expect(got.map((e) => e.event)).toEqual([
      'contact.created',
      'conversation.created',
      'conversation.assigned',
      'conversation.closed',
      'conversation.opened',
    ]);
    expect(got[3]!.data).toMatchObject({ id: cv.id, status: 'closed' });
    expect(got[4]!.data).toMatchObject({ id: cv.id, status: 'open', closed_at: null });
  });

  it('never blocks the API answer on delivery', async () => {
    delayMs = 800;
    const t0 = Date.now();
    const r = await h.api('POST', '/contacts', { body: { name: 'Fast answer' } });
    expect(r.status).toBe(201);
    expect(Date.now() - t0).toBeLessThan(400);
    await delivered(1);
  });
});

describe('retries', () => {
  it('re-sends the same id and the same bytes after a 503, and reports the delivery', async () => {
    respond = (attempt) => (attempt === 0 ? 503 : 202);
    const c = (await h.api('POST', '/contacts', { body: { name: 'Retry me' } })).body.data;
    const got = await delivered(2);
    expect(got[0]!.id).toBe(got[1]!.id);
    expect(got[1]!.bytes.equals(got[0]!.bytes)).toBe(true);
    expect(got[1]!.signature).toBe(got[0]!.signature);
    expect(got[0]!.data.id).toBe(c.id);
    const status = await eventually(async () => {
      const d = (await h.hook('GET', '/deliveries')).body.data.find((x: { id: string }) => x.id === got[0]!.id);
      return d?.state === 'delivered' ? d : undefined;
    });
    expect(status).toMatchObject({ attempts: 2, last_status: 202, state: 'delivered', event: 'contact.created' });
  });

  it('keeps events in order behind a retried one', async () => {
    respond = (attempt, event) => (attempt < 2 && event === 'contact.created' ? 500 : 200);
    await h.api('POST', '/contacts', { body: { name: 'First' } });
    await h.api('POST', '/leads', { body: { contact_id: acme.contact_ids[0], name: 'Second' } });
    const got = await delivered(4);
    expect(got.map((e) => e.event)).toEqual(['contact.created', 'contact.created', 'contact.created', 'lead.created']);
  });

  it('gives up after the bounded number of attempts and marks the delivery failed', async () => {
    respond = () => 500;
    await h.api('POST', '/contacts', { body: { name: 'Never lands' } });
    const got = await delivered(4);
    await h.sandbox.emitter.idle();
    const d = (await h.hook('GET', '/deliveries')).body.data.find((x: { id: string }) => x.id === got[0]!.id);
    expect(d).toMatchObject({ attempts: 4, state: 'failed', last_status: 500 });
    expect(new Set(got.map((g) => g.id)).size).toBe(1);
  });

  it('retries a refused connection and delivers the same id once the endpoint is back', async () => {
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}/webhooks`;
    await new Promise<void>((r) => dead.close(() => r()));
    await h.hook('POST', '/webhook', { url: deadUrl, secret: SECRET });
    await h.api('POST', '/contacts', { body: { name: 'Offline' } });
    const pending = await eventually(async () => {
      const all = (await h.hook('GET', '/deliveries')).body.data as {
        id: string;
        attempts: number;
        last_error: string | null;
        state: string;
      }[];
      const d = all.at(-1)!;
      return d.attempts >= 2 ? d : undefined;
    });
    expect(pending.state).toBe('pending');
    expect(pending.last_error).toBeTruthy();
    await h.hook('POST', '/webhook', { url: receiverUrl, secret: SECRET });
    const got = await delivered(1);
    expect(got[0]!.id).toBe(pending.id);
  });
});
