import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSandbox } from '../../../src/sandbox/index.js';
import { eventually, start, T, type Harness } from '../../support/sandbox.js';

// Many workspaces in one sandbox: each its own webhook URL and secret, its own token and burst; hooks name a workspace.
const A = { webhookUrl: 'http://receiver.test/webhooks/acme', secret: 'whsec_acme' };
const B = { webhookUrl: 'http://receiver.test/webhooks/other', secret: 'whsec_other' };
const RETRY = { baseMs: 10, maxMs: 20, maxAttempts: 2, timeoutMs: 1000 };

interface Sent {
  url: string;
  event: string;
  id: string;
  signature: string | null;
  bytes: Buffer;
}

/** A transport that records every delivery and answers `status(url)`. */
function recorder(status: (url: string) => number = () => 202) {
  const sent: Sent[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = input instanceof Request ? input.url : input.toString();
    const bytes = Buffer.from(init!.body as Uint8Array);
    const env = JSON.parse(bytes.toString('utf8')) as { id: string; event: string };
    sent.push({ url, event: env.event, id: env.id, signature: new Headers(init?.headers).get('X-Service-Signature'), bytes });
    return new Response(null, { status: status(url) });
  };
  return { fetch, sent };
}

/** The signature a delivery signed with `secret` carries (computed here, not by the sandbox's code). */
const signed = (bytes: Buffer, secret: string) => `sha256=${createHmac('sha256', secret).update(bytes).digest('hex')}`;

let h: Harness | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function contactIn(token: string, name: string): Promise<number> {
  const r = await h!.api('POST', '/contacts', { token, body: { name, email: `${name.toLowerCase()}@example.com` } });
  expect(r.status).toBe(201);
  return r.body.data.id as number;
}

describe('webhooks per workspace', () => {
  it("sends a workspace's events to its own URL only, signed with its own secret", async () => {
    const rec = recorder();
    h = await start({ workspaces: [A, B], fetch: rec.fetch, retry: RETRY });
    const zed = await contactIn(T.other, 'Zelda');
    const ada = await contactIn(T.full, 'Ada');
    await h.sandbox.emitter.idle();

    const toB = rec.sent.filter((s) => s.url === B.webhookUrl);
    const toA = rec.sent.filter((s) => s.url === A.webhookUrl);
    expect(rec.sent).toHaveLength(2);
    expect(toB.map((s) => [s.event, JSON.parse(s.bytes.toString()).data.id])).toEqual([['contact.created', zed]]);
    expect(toA.map((s) => [s.event, JSON.parse(s.bytes.toString()).data.id])).toEqual([['contact.created', ada]]);
    expect(toB[0]!.signature).toBe(signed(toB[0]!.bytes, B.secret));
    expect(toA[0]!.signature).toBe(signed(toA[0]!.bytes, A.secret));
    expect(toB[0]!.signature).not.toBe(signed(toB[0]!.bytes, A.secret));
    const other = (await h.hook('GET', '/deliveries?workspace=other')).body.data;
    expect(other.map((d: { id: string; url: string }) => [d.id, d.url])).toEqual([[toB[0]!.id, B.webhookUrl]]);
  });

  it('keeps the single webhookUrl/secret options for the first workspace: the second has no URL, its events are not sent', async () => {
    const rec = recorder();
    h = await start({ ...A, fetch: rec.fetch, retry: RETRY });
    await contactIn(T.other, 'Zelda');
    await contactIn(T.full, 'Ada');
    await h.sandbox.emitter.idle();
    expect(rec.sent.map((s) => [s.url, s.signature === signed(s.bytes, A.secret)])).toEqual([[A.webhookUrl, true]]);
    const states = h.sandbox.emitter.deliveries().map((d) => [d.workspace_id, d.state]);
    const [acme, other] = await h.world();
    expect(states).toEqual([
      [other.id, 'not_sent'],
      [acme.id, 'delivered'],
    ]);
  });

  it("a workspace's dead URL does not hold another's events", async () => {
    const rec = recorder((url) => (url === B.webhookUrl ? 503 : 202));
    h = await start({ workspaces: [A, B], fetch: rec.fetch, retry: { ...RETRY, baseMs: 60_000, maxMs: 60_000 } });
    await contactIn(T.other, 'Zelda');
    await contactIn(T.full, 'Ada');
    // B's first attempt failed and waits a minute before the next; A's event goes out meanwhile.
    await eventually(() => h!.sandbox.emitter.deliveries().find((d) => d.url === A.webhookUrl && d.state === 'delivered'));
    const byWs = h.sandbox.emitter.deliveries().map((d) => [d.url, d.state]);
    expect(byWs).toEqual([
      [B.webhookUrl, 'pending'],
      [A.webhookUrl, 'delivered'],
    ]);
  });

  it('points, reads and redelivers one workspace at a time with the webhook hooks', async () => {
    const rec = recorder();
    h = await start({ fetch: rec.fetch, retry: RETRY });
    expect((await h.hook('POST', '/webhook', { url: B.webhookUrl, secret: B.secret, workspace: 'other' })).body.data).toEqual({
      url: B.webhookUrl,
      workspace: 'other',
    });
    expect((await h.hook('GET', '/webhook')).body.data).toEqual({ url: null, workspace: 'acme' });
    expect((await h.hook('GET', '/webhooks')).body.data.map((w: { workspace: string; url: string }) => [w.workspace, w.url])).toEqual([
      ['acme', null],
      ['other', B.webhookUrl],
    ]);
    await contactIn(T.full, 'Ada');
    await contactIn(T.other, 'Zelda');
    await h.sandbox.emitter.idle();
    expect(rec.sent.map((s) => s.url)).toEqual([B.webhookUrl]);
    // Acme's event was not sent (no URL); redelivering Acme's only is refused until Acme has a URL.
    expect((await h.hook('POST', '/events/redeliver', { workspace: 'acme' })).status).toBe(422);
    await h.hook('POST', '/webhook', { url: A.webhookUrl, secret: A.secret });
    expect((await h.hook('POST', '/events/redeliver', { workspace: 'acme' })).body.data).toEqual({ queued: 1 });
    await h.sandbox.emitter.idle();
    expect(rec.sent.map((s) => [s.url, s.signature === signed(s.bytes, A.secret)])).toEqual([
      [B.webhookUrl, false],
      [A.webhookUrl, true],
    ]);
  });
});

describe('hooks that name a workspace', () => {
  it('writes an inbound message into the named workspace only, and its events go to that workspace only', async () => {
    const rec = recorder();
    h = await start({ workspaces: [A, B], fetch: rec.fetch, retry: RETRY });
    const [acme, other] = await h.world();
    const before = { acme: acme.conversation_ids.length, other: other.conversation_ids.length };
    const r = await h.hook('POST', '/inbound', {
      workspace: 'other',
      contact: { name: 'Nina New', email: 'nina@example.com' },
      channel_id: other.channels[0]!.id,
      body: 'Hallo, anyone there?',
    });
    expect(r.status).toBe(201);
    const conv = r.body.data.conversation.id as number;
    await h.sandbox.emitter.idle();

    const [acmeAfter, otherAfter] = await h.world();
    expect(otherAfter.conversation_ids).toHaveLength(before.other + 1);
    expect(acmeAfter.conversation_ids).toHaveLength(before.acme);
    expect((await h.api('GET', `/conversations/${conv}`, { token: T.other })).status).toBe(200);
    expect((await h.api('GET', `/conversations/${conv}`, { token: T.full })).status).toBe(404);
    expect(rec.sent.map((s) => [s.url, s.event])).toEqual([
      [B.webhookUrl, 'contact.created'],
      [B.webhookUrl, 'conversation.created'],
      [B.webhookUrl, 'message.received'],
    ]);
    // By numeric id too, and the events list keeps to one workspace.
    const byId = await h.hook('POST', '/inbound', { workspace: other.id, conversation_id: conv, body: 'Still here' });
    expect(byId.status).toBe(201);
    const events = (await h.hook('GET', `/events?workspace=${acme.id}`)).body.data;
    expect(events).toEqual([]);
  });

  it('refuses a workspace no one has with 422 naming the field and the workspaces there are', async () => {
    h = await start({ workspaces: [A, B] });
    const [, other] = await h.world();
    const channel = other.channels[0]!.id;
    const unknown = await h.hook('POST', '/inbound', { workspace: 'globex', contact: { name: 'X' }, channel_id: channel, body: 'hi' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors.workspace[0]).toMatch(/no workspace "globex" in this sandbox; .*acme \(id \d+\), other \(id \d+\)/);
    const byId = await h.hook('POST', '/inbound', { workspace_id: 99_999, contact: { name: 'X' }, channel_id: channel, body: 'hi' });
    expect([byId.status, Object.keys(byId.body.errors)]).toEqual([422, ['workspace_id']]);
    for (const [method, path, body] of [
      ['GET', '/webhook?workspace=globex', undefined],
      ['GET', '/events?workspace=globex', undefined],
      ['GET', '/deliveries?workspace=globex', undefined],
      ['POST', '/webhook', { url: null, workspace: 'globex' }],
      ['POST', '/burst', { burst: 5, workspace: 'globex' }],
      ['POST', '/quota', { limit: 5, workspace: 'globex' }],
      ['POST', '/events/redeliver', { workspace: 'globex' }],
    ] as const) {
      const r = await h.hook(method, path, body);
      expect([path, r.status, Object.keys(r.body.errors ?? {})]).toEqual([path, 422, ['workspace']]);
    }
    expect((await h.world())[1].conversation_ids).toEqual(other.conversation_ids);
  });
});

describe('a kept sandbox of many workspaces', () => {
  it("sends a queued event of workspace 2 again to workspace 2's URL after a restart, and keeps added workspaces and their bursts", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sbx-keep-ws-'));
    dirs.push(dir);
    const file = join(dir, 'state.json');
    const workspaces = [A, B, { burst: 7 }];
    const slow = { ...RETRY, baseMs: 3_600_000, maxMs: 3_600_000 };
    h = await start({ stateFile: file, workspaces, fetch: recorder(() => 503).fetch, retry: slow });
    await contactIn(T.other, 'Zelda');
    await h.close();

    const rec = recorder();
    h = await start({ stateFile: file, workspaces, fetch: rec.fetch, retry: slow });
    expect(h.sandbox.restored).toBe(true);
    await eventually(() => rec.sent.length > 0);
    await h.sandbox.emitter.idle();
    expect(rec.sent.map((s) => [s.url, s.event, s.signature === signed(s.bytes, B.secret)])).toEqual([
      [B.webhookUrl, 'contact.created', true],
    ]);
    expect((await h.api('GET', '/me', { token: 'sbx_full_ws3' })).headers.get('X-RateLimit-Limit')).toBe('7');
  });
});

describe('added workspaces', () => {
  it('makes empty workspaces, each with its own full-access token, URL, secret and burst counted per token', async () => {
    const rec = recorder();
    const workspaces = Array.from({ length: 20 }, (_, i) => ({
      webhookUrl: `http://receiver.test/webhooks/w${i + 1}`,
      secret: `whsec_${i + 1}`,
      ...(i >= 2 ? { burst: 3 } : {}),
    }));
    h = await start({ workspaces, fetch: rec.fetch, retry: RETRY, burst: 50 });
    const list = (await h.hook('GET', '/workspaces')).body.data as { id: number; key: string; burst: number; contact_ids: number[] }[];
    expect(list.map((w) => w.key)).toEqual(['acme', 'other', ...Array.from({ length: 18 }, (_, i) => `ws${i + 3}`)]);
    expect(list.slice(2).every((w) => w.contact_ids.length === 0 && w.burst === 3)).toBe(true);
    expect(list[0]!.burst).toBe(50);
    const tokens = h.sandbox.tokens.filter((t) => t.label === 'ws20-full');
    expect(tokens.map((t) => [t.token, t.workspace_id])).toEqual([['sbx_full_ws20', list[19]!.id]]);

    // Burst per token, of the token's workspace: ws3's token runs out at 3, ws4's is untouched.
    const calls = [];
    for (let i = 0; i < 4; i++) calls.push((await h.api('GET', '/me', { token: 'sbx_full_ws3' })).status);
    expect(calls).toEqual([200, 200, 200, 429]);
    const ws4 = await h.api('GET', '/me', { token: 'sbx_full_ws4' });
    expect([ws4.status, ws4.headers.get('X-RateLimit-Limit'), ws4.headers.get('X-RateLimit-Remaining')]).toEqual([200, '3', '2']);
    expect((await h.api('GET', '/me', { token: T.full })).headers.get('X-RateLimit-Limit')).toBe('50');

    // An inbound message into the 20th workspace lands there and its events go to its URL, signed with its secret.
    const ws20 = (await h.hook('GET', '/workspaces')).body.data[19] as { id: number; channels: { id: number }[] };
    const r = await h.hook('POST', '/inbound', {
      workspace: 'ws20',
      contact: { name: 'Tia' },
      channel_id: ws20.channels[0]!.id,
      body: 'hi',
    });
    expect(r.status).toBe(201);
    expect((await h.api('GET', `/conversations/${r.body.data.conversation.id}`, { token: 'sbx_full_ws20' })).status).toBe(200);
    await h.sandbox.emitter.idle();
    expect(new Set(rec.sent.map((s) => s.url))).toEqual(new Set(['http://receiver.test/webhooks/w20']));
    expect(rec.sent.every((s) => s.signature === signed(s.bytes, 'whsec_20'))).toBe(true);
  });

  it('keeps the seeded ids as they were when workspaces are added', async () => {
    const clock = () => Date.parse('2026-05-01T09:00:00Z');
    const plain = (await (await createSandbox({ clock }).app.request('/_sandbox/workspaces')).json()) as { data: unknown[] };
    const more = (await (await createSandbox({ clock, workspaces: [{}, {}, {}] }).app.request('/_sandbox/workspaces')).json()) as {
      data: unknown[];
    };
    expect(more.data).toHaveLength(3);
    expect(more.data.slice(0, 2)).toEqual(plain.data);
  });

  it('refuses options it cannot honour, saying which entry and why', () => {
    expect(() => createSandbox({ workspaces: Array.from({ length: 101 }, () => ({})) })).toThrow(/at most 100 workspaces, got 101/);
    expect(() => createSandbox({ workspaces: [{}, {}, { key: 'acme' }] })).toThrow(
      'workspaces[2].key: "acme" is already another workspace\'s',
    );
    expect(() => createSandbox({ workspaces: [{ key: 'shop' }] })).toThrow(/workspaces\[0\]: the seeded workspace keeps its key acme/);
    expect(() => createSandbox({ workspaces: [{}, { webhookUrl: 'http://x.test/w' }] })).toThrow('workspaces[1].webhookUrl needs a secret');
    expect(() => createSandbox({ workspaces: [{}, {}, { key: 'Not OK' }] })).toThrow(/workspaces\[2\]\.key: expected lower-case/);
    expect(() => createSandbox({ workspaces: [{}, {}, { token: 'sbx_full_other' }] })).toThrow('workspaces[2].token: the token is already');
  });
});
