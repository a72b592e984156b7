import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../../src/pii/redact.js';
import { createCapture } from '../../../src/receiver/capture.js';
import { IngestBus } from '../../../src/lifecycle/ingest-bus.js';
import type { StoringFacts } from '../../../src/lifecycle/ingest-events.js';
import { validateEvent } from '../../../src/events/catalogue.js';
import { parseEnvelope } from '../../../src/events/envelope.js';
import { Fixture } from '../../../src/events/fixture.js';
import { readInputs } from '../../../src/replay/index.js';

const FIXTURES = fileURLToPath(new URL('../../../fixtures', import.meta.url));

/** Every fixture's exact bytes, keyed by file, the malformed ones (which a directory replay skips) included. */
async function fixtureBodies() {
  return readInputs([FIXTURES, join(FIXTURES, '_malformed')], '/');
}

describe('capture', () => {
  it('writes every stored delivery as a fixture that replays byte-exactly, without signature headers', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'sy-capture-')), 'nested');
    const capture = createCapture({ dir, path: '/webhooks' });
    const items = await fixtureBodies();
    let i = 0;
    for (const item of items) {
      capture.keep({
        key: parseEnvelope(item.bytes).key,
        bytes: item.bytes,
        receivedAt: new Date(Date.UTC(2025, 0, 1, 0, 0, i++)).toISOString(),
        headers: {
          'content-type': 'application/json',
          'x-service-signature': 'sha256=abc',
          authorization: 'Bearer x',
          'user-agent': 'WorkspaceWebhooks/1.0',
        },
      });
    }
    // `keep` itself never writes: nothing is on disk before the event loop turns.
    expect(capture.stats.written).toBe(0);
    await capture.flush();
    expect(capture.stats).toMatchObject({ written: items.length, dropped: 0, failed: 0 });
    const files = readdirSync(dir);
    expect(files).toHaveLength(items.length);
    for (const f of files) {
      const text = readFileSync(join(dir, f), 'utf8');
      expect(text).not.toMatch(/signature|authorization|Bearer/i);
      expect(Fixture.safeParse(JSON.parse(text)).success).toBe(true);
    }
    const replayed = await readInputs([dir], '/');
    expect(new Set(replayed.map((r) => r.bytes.toString('base64')))).toEqual(new Set(items.map((r) => r.bytes.toString('base64'))));
  });

  it('drops captures beyond maxPending instead of growing without bound', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-capture-'));
    const capture = createCapture({ dir, maxPending: 2 });
    for (let n = 0; n < 5; n++) capture.keep({ key: `k${n}`, bytes: Buffer.from('{}'), headers: {}, receivedAt: new Date().toISOString() });
    await capture.flush();
    expect(capture.stats).toMatchObject({ written: 2, dropped: 3 });
  });

  it('as a subscriber of the ingest stream keeps what was stored (accepted, spooled), never a duplicate or a failed write', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-capture-'));
    const capture = createCapture({ dir });
    const bus = new IngestBus().subscribe(capture.subscriber);
    const facts = (key: string): StoringFacts => ({
      key,
      name: 'lead.won',
      bytes: Buffer.from(`{"id":"${key}"}`),
      headers: { 'content-type': 'application/json' },
      receivedAt: '2026-01-02T03:04:05.000Z',
    });
    bus.emit({ type: 'stored', delivery: facts('evt_a'), ok: true, outcome: 'accepted' });
    bus.emit({ type: 'stored', delivery: facts('evt_s'), ok: true, outcome: 'spooled' });
    bus.emit({ type: 'stored', delivery: facts('evt_d'), ok: true, outcome: 'duplicate' });
    bus.emit({ type: 'stored', delivery: facts('evt_f'), ok: false, error: new Error('spool full') });
    await capture.flush();
    expect(
      readdirSync(dir)
        .map((f) => f.slice(f.indexOf('_evt_') + 1))
        .sort(),
    ).toEqual(['evt_a.json', 'evt_s.json']);
  });
});

describe('redaction', () => {
  const originals = ['Zoë Ångström 😀', 'zoe.angstrom@example.com', '+49 151 23456789'];

  it('replaces names, emails, phones and message bodies with stable fakes; JSON stays valid and the event still validates', async () => {
    const redactor = createRedactor();
    for (const item of await fixtureBodies()) {
      const before = parseEnvelope(item.bytes);
      const out = redactor.body(item.bytes);
      expect(redactor.body(item.bytes).equals(out)).toBe(true); // stable
      const after = parseEnvelope(out);
      expect(after.problem).toBe(before.problem);
      if (validateEvent(before).ok) expect(validateEvent(after).ok).toBe(true);
      const text = out.toString('utf8');
      for (const o of originals) expect(text).not.toContain(o);
      const data = before.data as Record<string, unknown> | null;
      if (data && typeof data['body'] === 'string' && data['body'] !== '')
        expect(text).not.toContain(JSON.stringify(data['body']).slice(1, -1));
      if (data && typeof data['name'] === 'string' && item.source.includes('contact')) expect(text).not.toContain(data['name']);
    }
  });

  it('maps the same original to the same fake everywhere, and keeps non-person names', () => {
    const r = createRedactor();
    const v = r.value({
      contact: { name: 'Jane Doe', email: 'Jane@Corp.com', phone: '+44 20 7946 0958' },
      other: { name: 'Jane Doe', email: 'jane@corp.com', phone: '+442079460958' },
      stage: { name: 'won' },
      channel: { name: 'WhatsApp', type: 'whatsapp' },
      body: 'Call me on +44 20 7946 0958',
      note_at: '2025-03-04T09:58:11+01:00',
      created_at: '2025-03-04',
    }) as Record<string, Record<string, string>> & { body: string; note_at: string; created_at: string };
    expect(v.contact).toEqual(v.other);
    expect(v.contact?.['name']).not.toBe('Jane Doe');
    expect(v.contact?.['email']).toMatch(/@example\.com$/);
    expect(v.contact?.['phone']).toMatch(/^\+1 555 /);
    expect(v.stage).toEqual({ name: 'won' });
    expect(v.channel).toEqual({ name: 'WhatsApp', type: 'whatsapp' });
    expect(v.body).toMatch(/^Redacted message [0-9a-f]{8}$/);
    expect(v.note_at).toBe('2025-03-04T09:58:11+01:00');
    expect(v.created_at).toBe('2025-03-04');
    expect(createRedactor({ salt: 's' }).value({ name: 'Jane Doe' })).not.toEqual(r.value({ name: 'Jane Doe' }));
  });

  it('keeps names of things (stages, a lead title, labels, channels, templates, pipelines, products) and ids; replaces only personal data', () => {
    const r = createRedactor();
    const lifecycle = r.value({
      id: 'evt_1',
      event: 'contact.lifecycle_changed',
      created_at: '2025-03-06T15:31:07+01:00',
      data: {
        contact_id: 35,
        previous: { id: 4, name: 'New Lead', role: 'default', outcome: null },
        lifecycle: { id: 6, name: 'Customer', role: null, outcome: 'won' },
      },
    });
    expect(lifecycle).toMatchObject({ data: { previous: { name: 'New Lead' }, lifecycle: { name: 'Customer' } } });
    for (const event of ['lead.created', 'lead.won', 'lead.lost']) {
      expect(
        r.value({ id: 'evt_2', event, data: { id: 48, contact_id: 36, name: 'Bob wholesale – 40 T-shirts', outcome: 'won' } }),
      ).toMatchObject({ data: { name: 'Bob wholesale – 40 T-shirts' } });
    }
    const other = r.value({
      labels: [{ id: 1, name: 'VIP' }],
      channel: { name: 'WhatsApp' },
      template: { name: 'order_update' },
      pipeline: { name: 'Sales' },
      stage: { name: 'Negotiation' },
      line_items: [{ name: 'Mug', product: { name: 'Mug' } }],
      teammate: { name: 'Ann Lee' },
      contact: { name: 'Ann Lee', first_name: 'Ann' },
      user: { name: 'Ann Lee' },
      external_id: '100123456',
      number: '1043',
      note: 'call +49 30 1234567',
      reason: 'order 100123456 from 192.168.1.20',
    }) as Record<string, unknown>;
    expect(other).toMatchObject({
      labels: [{ name: 'VIP' }],
      channel: { name: 'WhatsApp' },
      template: { name: 'order_update' },
      pipeline: { name: 'Sales' },
      stage: { name: 'Negotiation' },
      line_items: [{ name: 'Mug', product: { name: 'Mug' } }],
      external_id: '100123456',
      number: '1043',
      reason: 'order 100123456 from 192.168.1.20',
    });
    for (const person of ['teammate', 'contact', 'user']) expect((other[person] as { name: string }).name).not.toBe('Ann Lee');
    expect((other['contact'] as { first_name: string }).first_name).not.toBe('Ann');
    expect(other['note']).toMatch(/^Redacted message /);
    // A contact's name at the root of contact.created data is a person's.
    expect(r.value({ event: 'contact.created', data: { id: 7, name: 'Ann Lee' } })).not.toMatchObject({ data: { name: 'Ann Lee' } });
  });

  it('capture with redact writes redacted fixtures that still parse', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-capture-'));
    const capture = createCapture({ dir, redact: true });
    const contact = (await fixtureBodies()).find((i) => i.source.endsWith('contact.created.json'));
    capture.keep({ key: 'evt_1', bytes: contact!.bytes, headers: {}, receivedAt: '2025-03-04T09:58:12.617Z' });
    await capture.flush();
    const [file] = readdirSync(dir);
    const text = readFileSync(join(dir, file!), 'utf8');
    for (const o of originals) expect(text).not.toContain(o);
    const [item] = await readInputs([join(dir, file!)], '/');
    expect(validateEvent(parseEnvelope(item!.bytes)).ok).toBe(true);
    expect(item!.bytes.toString()).toMatch(/\n {2}"id"/); // pretty-printed stays pretty-printed
  });
});
