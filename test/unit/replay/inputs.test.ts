import { mkdtempSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Fixture, fixtureBytes } from '../../../src/events/fixture.js';
import { parseEnvelope } from '../../../src/events/envelope.js';
import { filterItems, parseSince, readInputs, withNewId, InputError } from '../../../src/replay/index.js';

const FIXTURES = fileURLToPath(new URL('../../../fixtures', import.meta.url));

describe('replay inputs', () => {
  it('reads a fixtures directory recursively with the exact body bytes, not descending into _malformed/ unless named', async () => {
    const skipped: string[] = [];
    const items = await readInputs([FIXTURES], '/', (dir) => skipped.push(dir));
    expect(items).toHaveLength(readdirSync(FIXTURES).filter((f) => f.endsWith('.json')).length);
    expect(skipped).toEqual([join(FIXTURES, '_malformed')]);
    const malformed = await readInputs([join(FIXTURES, '_malformed')], '/');
    expect(malformed).toHaveLength(readdirSync(join(FIXTURES, '_malformed')).filter((f) => f.endsWith('.json')).length);
    for (const item of [...items, ...malformed]) {
      const f = Fixture.parse(JSON.parse(readFileSync(item.source, 'utf8')));
      expect(item.bytes.equals(fixtureBytes(f))).toBe(true);
    }
    const latin1 = malformed.find((i) => i.source.endsWith('not-utf8.json'));
    expect(latin1?.bytes.toString('utf8')).toContain('\ufffd'); // raw bytes, not re-encoded text
  });

  it('reads plain event JSON files as their bytes minus trailing line breaks, and ndjson per line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-inputs-'));
    const plain = '{ "id": "evt_plain", "event": "lead.won",  "created_at": "2025-01-01T00:00:00Z", "data": {} }';
    writeFileSync(join(dir, 'plain.json'), `${plain}\n`);
    const fixture = readFileSync(join(FIXTURES, 'lead.won.json'), 'utf8');
    writeFileSync(join(dir, 'mixed.ndjson'), `${JSON.stringify(JSON.parse(fixture))}\r\n\n${plain}\n`);
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'README.md'), 'ignored');
    for (const hidden of ['_aside', '.git']) {
      mkdirSync(join(dir, hidden));
      writeFileSync(join(dir, hidden, 'x.json'), plain);
    }
    const skipped: string[] = [];
    const items = await readInputs([dir], '/', (d) => skipped.push(d.replace(dir, '')));
    expect(skipped.sort()).toEqual(['/.git', '/_aside'].sort());
    expect(items.map((i) => i.source.replace(dir, ''))).toEqual(['/mixed.ndjson:1', '/mixed.ndjson:3', '/plain.json']);
    expect(items[0]?.bytes.equals(fixtureBytes(Fixture.parse(JSON.parse(fixture))))).toBe(true);
    expect(items[0]?.receivedAt).toBeDefined();
    expect(items[1]?.bytes.toString()).toBe(plain);
    expect(items[2]?.bytes.toString()).toBe(plain);
  });

  it('names the file of a broken input', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-inputs-'));
    writeFileSync(join(dir, 'broken.json'), '{"format":"switchyard.delivery/1","headers":{}}');
    await expect(readInputs([join(dir, 'broken.json')], '/')).rejects.toThrow(/broken\.json: not a valid fixture/);
    await expect(readInputs(['nope'], dir)).rejects.toBeInstanceOf(InputError);
  });

  it('refuses a body_base64 that is not base64 (Buffer.from would skip what it cannot read and replay other bytes)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-inputs-'));
    const good = Buffer.from('{"id":"evt_b64","event":"lead.won","data":{}}').toString('base64');
    for (const [name, b64] of [
      ['spaces', 'not base64!'],
      ['unpadded', good.replace(/=+$/, '').slice(0, -1)],
      ['url-safe', '-_-_'],
    ]) {
      writeFileSync(join(dir, `${name}.json`), JSON.stringify({ format: 'switchyard.delivery/1', headers: {}, body_base64: b64 }));
      await expect(readInputs([join(dir, `${name}.json`)], '/')).rejects.toThrow(
        new RegExp(`${name}\\.json: not a valid fixture: body_base64: expected standard base64`),
      );
    }
    writeFileSync(join(dir, 'good.json'), JSON.stringify({ format: 'switchyard.delivery/1', headers: {}, body_base64: good }));
    expect((await readInputs([join(dir, 'good.json')], '/'))[0]?.bytes.toString()).toContain('evt_b64');
  });

  it('filters by event, subscribed events, since and limit, in order', async () => {
    const items = await readInputs([FIXTURES], '/');
    expect(filterItems(items, { events: ['lead.won', 'lead.lost'] }).map((i) => parseEnvelope(i.bytes).name)).toEqual([
      'lead.lost',
      'lead.won',
    ]);
    expect(new Set(filterItems(items, { subscribed: ['conversation.closed'] }).map((i) => parseEnvelope(i.bytes).name))).toEqual(
      new Set(['conversation.closed']),
    );
    expect(filterItems(items, { limit: 3 })).toHaveLength(3);
    expect(filterItems(items, { sinceMs: Date.parse('2100-01-01') })).toHaveLength(0);
    expect(filterItems(items, { sinceMs: 0 }).length).toBe(items.length);
  });

  it('parses --since as a duration back from now or as a date (strictly: no rollover)', () => {
    const now = Date.parse('2025-03-04T12:00:00Z');
    expect(parseSince('2h', now)).toBe(now - 7_200_000);
    expect(parseSince('2025-03-01', now)).toBe(Date.parse('2025-03-01'));
    expect(parseSince('yesterday', now)).toBeNull();
    expect(parseSince('2025-02-30', now)).toBeNull();
  });

  it('--new-ids rewrites whichever id field the envelope uses', () => {
    const item = { source: 'x', headers: {}, receivedAt: undefined };
    const a = withNewId({ ...item, bytes: Buffer.from('{"event_id":"e1","type":"lead.won","payload":{}}') }, 'evt_new');
    expect(JSON.parse(a.bytes.toString())).toEqual({ event_id: 'evt_new', type: 'lead.won', payload: {} });
    const b = withNewId({ ...item, bytes: Buffer.from('{"event":"lead.won"}') }, 'evt_new');
    expect(parseEnvelope(b.bytes).key).toBe('evt_new');
    // A flat body's `id` is the resource's: it stays, and the new id goes to event_id.
    const flat = withNewId({ ...item, bytes: Buffer.from('{"type":"contact.created","id":7}') }, 'evt_new');
    expect(JSON.parse(flat.bytes.toString())).toEqual({ type: 'contact.created', id: 7, event_id: 'evt_new' });
    expect(parseEnvelope(flat.bytes).key).toBe('evt_new');
    const canonical = withNewId({ ...item, bytes: Buffer.from('{"id":"evt_1","event":"lead.won","data":{}}') }, 'evt_new');
    expect((JSON.parse(canonical.bytes.toString()) as { id: string }).id).toBe('evt_new');
    const c = withNewId({ ...item, bytes: Buffer.from('not json') });
    expect(c.bytes.toString()).toBe('not json');
  });
});
