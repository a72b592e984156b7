import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { EVENT_NAMES, validateEvent, type InvalidEventReason } from '../../../src/events/catalogue.js';
import { bodyKey, parseEnvelope } from '../../../src/events/envelope.js';
import { Fixture, fixtureBytes } from '../../../src/events/fixture.js';

const ROOT = fileURLToPath(new URL('../../../fixtures/', import.meta.url));
const MALFORMED = join(ROOT, '_malformed');

const jsonFiles = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
const load = (path: string) => Fixture.parse(JSON.parse(readFileSync(path, 'utf8')));

/**
 * What each file under fixtures/_malformed/ must do. Every file there needs an
 * entry, so a new malformed fixture cannot go unchecked.
 */
const MALFORMED_EXPECTED: Record<string, { reason: InvalidEventReason } | { ok: true; id: string | null }> = {
  'bad-json.json': { reason: 'invalid_json' },
  'unknown-event.json': { reason: 'unknown_event' },
  'invalid-data.json': { reason: 'invalid_data' },
  'missing-event-name.json': { reason: 'missing_event_name' },
  'not-an-object.json': { reason: 'not_an_object' },
  'missing-id.json': { ok: true, id: null },
  'alternative-fields.json': { ok: true, id: 'dlv_7f3c2a9e41b84d0c' },
  'not-utf8.json': { ok: true, id: 'evt_01JNKF2B4D6F8H0K2M4P6R8T0V' },
};

describe('fixtures/', () => {
  const wellFormed = jsonFiles(ROOT);
  const malformed = jsonFiles(MALFORMED);

  test('every event of the catalogue has a fixture named after it', () => {
    for (const name of EVENT_NAMES) expect(wellFormed).toContain(`${name}.json`);
  });

  test.each([...wellFormed.map((f) => join(ROOT, f)), ...malformed.map((f) => join(MALFORMED, f))])(
    '%s is a switchyard.delivery/1 fixture without signature headers',
    (path) => {
      const f = load(path);
      expect(f.format).toBe('switchyard.delivery/1');
      expect(f.method).toBe('POST');
      expect(f.path).toBe('/webhooks');
      expect(f.description).toBeTruthy();
      expect(f.headers['content-type']).toBe('application/json');
      for (const header of Object.keys(f.headers)) expect(header).not.toMatch(/signature|token|secret|authorization/i);
    },
  );

  test.each(wellFormed)('%s validates as the event it is named after, keyed by its id', (file) => {
    const f = load(join(ROOT, file));
    expect(f.body).toBeDefined();
    const envelope = parseEnvelope(fixtureBytes(f));
    const r = validateEvent(envelope);
    if (!r.ok) throw new Error(`${file}: ${r.message}\n${(r.issues ?? []).join('\n')}`);
    expect(`${r.event.name}.json`).toBe(file);
    expect(r.event.id).toMatch(/^evt_/);
    expect(envelope.key).toBe(r.event.id);
    expect(r.event.createdAt).toMatch(/[+-]\d\d:\d\d$/);
  });

  test('valid fixtures use ids of the sandbox seed (so the recipes succeed on them against `switchyard sandbox`)', () => {
    // Acme's seed: contacts 35-37, conversations 38/41/43, messages 39-40, lead 48, active teammates 20-21, stages 4-7.
    const seeded = { contact: [35, 36, 37], conversation: [38, 41, 43], message: [39, 40, 42, 44], lead: [48], user: [20, 21] };
    for (const file of wellFormed) {
      const r = validateEvent(parseEnvelope(fixtureBytes(load(join(ROOT, file)))));
      if (!r.ok) throw new Error(file);
      const d = r.event.data as Record<string, unknown> & { assignee?: { type: string; id: number } | null; user_id?: number | null };
      if (typeof d['contact_id'] === 'number') expect(seeded.contact, file).toContain(d['contact_id']);
      if (typeof d['conversation_id'] === 'number') expect(seeded.conversation, file).toContain(d['conversation_id']);
      if (d.assignee?.type === 'user') expect(seeded.user, file).toContain(d.assignee.id);
      if (typeof d.user_id === 'number') expect(seeded.user, file).toContain(d.user_id);
      const kind = r.event.name.split('.')[0] as string;
      if ((kind in seeded && kind !== 'contact') || r.event.name === 'contact.created') {
        expect(seeded[kind as keyof typeof seeded], file).toContain(d['id']);
      }
    }
  });

  test('bodies are kept byte-exact, including multi-byte UTF-8 and pretty-printing', () => {
    const f = load(join(ROOT, 'contact.created.json'));
    const bytes = fixtureBytes(f);
    expect(bytes.toString('utf8')).toContain('Zoë Ångström 😀');
    expect(bytes.length).toBeGreaterThan((f.body ?? '').length);
    expect(f.body).toContain('\n  "data": {');
  });

  test('every malformed fixture has an expected outcome', () => {
    expect(malformed).toEqual(Object.keys(MALFORMED_EXPECTED).sort());
  });

  test.each(malformed)('_malformed/%s has its expected outcome', (file) => {
    const f = load(join(MALFORMED, file));
    const bytes = fixtureBytes(f);
    const envelope = parseEnvelope(bytes);
    const r = validateEvent(envelope);
    const expected = MALFORMED_EXPECTED[file];
    if (expected === undefined || !('ok' in expected)) {
      expect(r).toMatchObject({ ok: false, reason: expected?.reason });
      return;
    }
    if (!r.ok) throw new Error(`${file}: ${r.message}`);
    expect(r.event.id).toBe(expected.id);
    // Without an id the delivery key falls back to the hash of the exact bytes.
    expect(envelope.key).toBe(expected.id ?? bodyKey(bytes));
  });

  test('not-utf8.json uses body_base64 because its bytes are not UTF-8', () => {
    const f = load(join(MALFORMED, 'not-utf8.json'));
    expect(f.body).toBeUndefined();
    const bytes = fixtureBytes(f);
    expect(Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes)).toBe(false);
  });

  test('invalid-data.json reports its zod issues', () => {
    const r = validateEvent(parseEnvelope(fixtureBytes(load(join(MALFORMED, 'invalid-data.json')))));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues).toEqual([expect.stringMatching(/^data\.id: /), expect.stringMatching(/^data\.status: /)]);
  });
});
