import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start, T, type Harness, type World } from '../../support/sandbox.js';

// Spec: Messages (four kinds, limits, templates, public threads, 24-hour window), notes, GET /messages/{id}.
let h: Harness;
let acme: World;
let live: number; // a WhatsApp thread with a recent inbound message (inside the 24-hour window)
beforeAll(async () => {
  h = await start();
  [acme] = await h.world();
  const wa = acme.channels.find((c) => c.type === 'whatsapp')!;
  const r = await h.hook('POST', '/inbound', {
    contact: { name: 'Writer', email: 'writer@example.com' },
    channel_id: wa.id,
    body: 'hello',
  });
  live = r.body.data.conversation.id;
});
afterAll(async () => {
  await h.close();
});

const send = (body: unknown, conv = live, token: string = T.full) => h.api('POST', `/conversations/${conv}/messages`, { body, token });

describe('sending', () => {
  it('sends a text given as {body} with no type, attributed to the token teammate', async () => {
    const r = await send({ body: 'Hi there' });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({
      conversation_id: live,
      type: 'message',
      direction: 'outbound',
      user_id: acme.teammates[0]!.id,
      body: 'Hi there',
      content_type: 'text',
      status: 'sent',
    });
  });

  it('sends the four kinds', async () => {
    expect((await send({ type: 'text', text: 'plain' })).status).toBe(201);
    const att = await send({ type: 'attachment', url: 'https://cdn.example.com/files/invoice.pdf', caption: 'Invoice' });
    expect([att.status, att.body.data.file_name, att.body.data.content_type]).toEqual([201, 'invoice.pdf', 'attachment']);
    const btn = await send({ type: 'buttons', text: 'Pick one', buttons: ['Yes', 'No'] });
    expect([btn.status, btn.body.data.body]).toEqual([201, 'Pick one']);
    const tpl = await send({ type: 'template', template: 'order_update', parameters: ['Ann', '#1001'] });
    expect([tpl.status, tpl.body.data.body]).toEqual([201, 'Hi Ann, your order #1001 is on its way.']);
  });

  it('enforces the limits: text 4096, caption 1024, file_name 255, url 2048, buttons 1-10 of 100 chars, unique', async () => {
    expect((await send({ type: 'text', text: 'x'.repeat(4096) })).status).toBe(201);
    expect((await send({ type: 'text', text: 'x'.repeat(4097) })).body.errors).toHaveProperty('text');
    expect((await send({ type: 'attachment', url: 'https://e.com/a', caption: 'c'.repeat(1025) })).body.errors).toHaveProperty('caption');
    expect((await send({ type: 'attachment', url: 'https://e.com/a', file_name: 'f'.repeat(256) })).body.errors).toHaveProperty(
      'file_name',
    );
    expect((await send({ type: 'attachment', url: `https://e.com/${'a'.repeat(2048)}` })).body.errors).toHaveProperty('url');
    expect((await send({ type: 'buttons', text: 'p', buttons: [] })).body.errors).toHaveProperty('buttons');
    expect((await send({ type: 'buttons', text: 'p', buttons: Array.from({ length: 11 }, (_, i) => `b${i}`) })).body.errors).toHaveProperty(
      'buttons',
    );
    expect((await send({ type: 'buttons', text: 'p', buttons: ['b'.repeat(101)] })).body.errors).toHaveProperty(['buttons.0']);
    expect((await send({ type: 'buttons', text: 'p', buttons: ['Same', 'Same'] })).body.errors).toHaveProperty('buttons');
    expect((await send({ type: 'template', template: 't'.repeat(256) })).body.errors).toHaveProperty('template');
    expect((await send({ type: 'text', text: 'x', reply_to: 'r'.repeat(256) })).body.errors).toHaveProperty('reply_to');
  });

  it('requires the fields of each kind and refuses an unknown type', async () => {
    expect((await send({ type: 'text' })).body.errors).toHaveProperty('text');
    expect((await send({ type: 'attachment' })).body.errors).toHaveProperty('url');
    expect((await send({ type: 'buttons', text: 'p' })).body.errors).toHaveProperty('buttons');
    expect((await send({ type: 'template' })).body.errors).toHaveProperty('template');
    expect((await send({ type: 'video', url: 'https://e.com' })).body.errors).toHaveProperty('type');
  });

  it('refuses attachment URLs that are not public http(s)', async () => {
    for (const url of ['ftp://e.com/a', 'http://127.0.0.1/a', 'http://10.1.2.3/a', 'http://192.168.0.1/x', 'http://localhost:8080/x']) {
      expect((await send({ type: 'attachment', url })).status, url).toBe(422);
    }
  });

  it.each([
    'http://[::ffff:127.0.0.1]/a',
    'http://[::ffff:10.0.0.1]/a',
    'http://100.64.0.1/a',
    'http://100.127.255.254/a',
    'http://169.254.169.254/latest/meta-data',
    'http://[fe80::1]/a',
    'http://[fd12:3456::1]/a',
    'http://[fc00::1]/a',
    'http://0.0.0.0/a',
    'http://0.1.2.3/a',
    'http://224.0.0.1/a',
    'http://239.255.255.250/a',
    'http://[ff02::1]/a',
    'http://255.255.255.255/a',
    'http://[::]/a',
    'http://[::1]/a',
    'http://2130706433/a',
    'http://0x7f.1/a',
    'http://172.31.255.255/a',
    'http://192.0.2.10/a',
    'http://[64:ff9b::7f00:1]/a',
    'http://[2002:7f00:1::]/a',
    'http://LOCALHOST./a',
    'http://api.localhost/a',
    'http://printer.local/a',
    'http://db.internal/a',
    'http://intranet/a',
    // IPv4-compatible IPv6 (::a.b.c.d, the first 96 bits zero): judged as the IPv4 address inside.
    'http://[::127.0.0.1]/a',
    'http://[::7f00:1]/a',
    'http://[::a9fe:a9fe]/a',
    'http://[::10.0.0.1]/a',
    'http://[0:0:0:0:0:0:192.168.1.1]/a',
    'http://[::ffff:169.254.169.254]/a',
    // The other special IPv6 ranges: SIIT, NAT64 (both prefixes), Teredo, documentation, discard, site-local, benchmarking.
    'http://[::ffff:0:127.0.0.1]/a',
    'http://[64:ff9b:1::a00:1]/a',
    'http://[2001::1]/a',
    'http://[2001:db8::1]/a',
    'http://[3fff::1]/a',
    'http://[100::1]/a',
    'http://[fec0::1]/a',
    'http://[2001:2::1]/a',
    'http://[5f00::1]/a',
  ])('refuses %s (inside a private or special network)', async (url) => {
    const r = await send({ type: 'attachment', url });
    expect([r.status, typeof r.body.message, Object.keys(r.body.errors ?? {})]).toEqual([422, 'string', ['url']]);
  });

  it.each([
    'https://cdn.example.com/a.png',
    'http://8.8.8.8/a.png',
    'http://[2606:4700:4700::1111]/a.png',
    'http://172.32.0.1/a.png',
    'http://[::ffff:8.8.8.8]/a.png',
    'http://[::8.8.8.8]/a.png',
  ])('takes the public address %s', async (url) => {
    expect((await send({ type: 'attachment', url })).status).toBe(201);
  });

  it('checks templates: approved on the thread channel, language when several, parameters in number', async () => {
    expect((await send({ type: 'template', template: 'ig_hello' })).body.errors).toHaveProperty('template');
    expect((await send({ type: 'template', template: 'welcome', parameters: ['A'] })).body.errors).toHaveProperty('language');
    expect((await send({ type: 'template', template: 'welcome', language: 'ar', parameters: ['A'] })).status).toBe(201);
    expect((await send({ type: 'template', template: 'order_update', parameters: ['A'] })).body.errors).toHaveProperty('parameters');
  });

  it('on a public comment thread needs reply_to and accepts only text', async () => {
    const comments = acme.channels.find((c) => c.public)!;
    const thread = (await h.api('GET', `/conversations?channel_id=${comments.id}`)).body.data[0].id;
    expect((await send({ type: 'text', text: 'thanks' }, thread)).body.errors).toHaveProperty('reply_to');
    expect((await send({ type: 'attachment', url: 'https://e.com/a.png', reply_to: 'cmt_1' }, thread)).body.errors).toHaveProperty('type');
    expect((await send({ type: 'text', text: 'thanks', reply_to: 'cmt_1' }, thread)).status).toBe(201);
  });

  it('outside the 24-hour window a free-form message comes back failed; a template goes', async () => {
    const bobThread = (await h.api('GET', '/conversations?status=closed')).body.data.find(
      (c: { channel: { type: string } }) => c.channel.type === 'instagram',
    );
    const text = await send({ type: 'text', text: 'late' }, bobThread.id);
    expect([text.status, text.body.data.status]).toEqual([201, 'failed']);
    const tpl = await send({ type: 'template', template: 'ig_hello' }, bobThread.id);
    expect(tpl.body.data.status).toBe('sent');
  });

  it('needs messages:send and answers 404 for an unknown thread', async () => {
    expect((await send({ body: 'x' }, live, T.read)).status).toBe(403);
    expect((await send({ body: 'x' }, 999999)).status).toBe(404);
  });
});

describe('notes, listing and single messages', () => {
  it('adds a note (type note, direction null) and refuses inactive or unknown mentions', async () => {
    const [active, , inactive] = acme.teammates;
    const r = await h.api('POST', `/conversations/${live}/notes`, { body: { body: 'internal', mentions: [active!.id] } });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({ type: 'note', direction: null, body: 'internal' });
    const bad = await h.api('POST', `/conversations/${live}/notes`, { body: { body: 'x', mentions: [active!.id, inactive!.id, 999999] } });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['mentions.1', 'mentions.2']);
    expect((await h.api('POST', `/conversations/${live}/notes`, { body: { body: 'n'.repeat(4097) } })).body.errors).toHaveProperty('body');
    expect((await h.api('POST', `/conversations/${live}/notes`, { body: {} })).body.errors).toHaveProperty('body');
  });

  it('lists a thread newest first and resolves GET /messages/{id}', async () => {
    const sent = (await send({ body: 'newest' })).body.data;
    const list = await h.api('GET', `/conversations/${live}/messages?per_page=100`, { token: T.read });
    const times = list.body.data.map((m: { created_at: string; id: number }) => [m.created_at, m.id]);
    expect(times).toEqual([...times].sort((a, b) => (a[0] === b[0] ? b[1] - a[1] : a[0] < b[0] ? 1 : -1)));
    expect(list.body.data[0].id).toBe(sent.id);
    expect((await h.api('GET', `/messages/${sent.id}`, { token: T.read })).body.data).toEqual(sent);
    expect((await h.api('GET', '/messages/999999')).status).toBe(404);
  });
});

describe('the body of a send, as the spec types it', () => {
  it('takes {body} without type as text, and nothing else without a type: {text} alone lacks its type', async () => {
    expect((await send({ body: 'shorthand' })).body.data).toMatchObject({ body: 'shorthand', content_type: 'text' });
    const untyped = await send({ text: 'hello' });
    expect(untyped.status).toBe(422);
    expect(untyped.body.errors.type[0]).toMatch(/is required .*this body has text/);
    const both = await send({ body: 'x', text: 'y' });
    expect([both.status, Object.keys(both.body.errors)]).toEqual([422, ['type']]);
    expect((await send({})).body.errors).toHaveProperty('body');
  });

  it('refuses body beside a type, and the fields of another kind, instead of dropping them', async () => {
    const r = await send({ type: 'text', text: 'y', body: 'x' });
    expect([r.status, r.body.errors.body[0]]).toEqual([422, 'is only the shorthand {body} without type; with type "text" send text']);
    expect((await send({ type: 'text', text: 'y', caption: 'c' })).body.errors.caption[0]).toBe(
      'is not a field of type text (only of attachment)',
    );
    expect((await send({ type: 'attachment', url: 'https://cdn.example.com/a.pdf', text: 't' })).body.errors).toHaveProperty('text');
    expect((await send({ type: 'attachment', url: 'https://cdn.example.com/a.pdf', caption: null })).status).toBe(201);
  });

  it('answers 422, not 500, when the file name cannot be taken from a URL that is not valid percent-encoding', async () => {
    const r = await send({ type: 'attachment', url: 'https://example.com/a%ZZ' });
    expect(r.status).toBe(422);
    expect(r.body.errors.url[0]).toMatch(/"a%ZZ" is not valid percent-encoding.*send file_name/);
    const named = await send({ type: 'attachment', url: 'https://example.com/a%ZZ', file_name: 'a.pdf' });
    expect([named.status, named.body.data.file_name]).toEqual([201, 'a.pdf']);
    expect((await send({ type: 'attachment', url: 'https://example.com/r%C3%A9sum%C3%A9.pdf' })).body.data.file_name).toBe('résumé.pdf');
  });

  it('refuses a URL whose last segment decodes to no file name (a path, control characters, over 255): 422 asking for file_name', async () => {
    const cases: [string, RegExp][] = [
      ['https://example.com/a%2Fb', /decodes to a path/],
      ['https://example.com/a%5Cb', /decodes to a path/],
      ['https://example.com/a%00b', /control characters/],
      ['https://example.com/a%1Bb', /control characters/],
      [`https://example.com/${'n'.repeat(256)}`, /more than 255 characters/],
    ];
    for (const [url, why] of cases) {
      const r = await send({ type: 'attachment', url });
      expect([url, r.status]).toEqual([url, 422]);
      expect(r.body.errors.url[0]).toMatch(why);
      expect(r.body.errors.url[0]).toMatch(/send file_name/);
    }
    expect((await send({ type: 'attachment', url: `https://example.com/${'n'.repeat(255)}` })).status).toBe(201);
  });
});
