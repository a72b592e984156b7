import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../../src/sandbox/index.js';
import { KeptStateError } from '../../../src/sandbox/keeper.js';
import { eventually, start, type Harness } from '../../support/sandbox.js';

// A sandbox kept in a file (dev --keep-sandbox): records, ids, clock, keys and queued deliveries come back.
const dir = mkdtempSync(join(tmpdir(), 'sbx-keep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BASE = Date.parse('2030-01-10T00:00:00Z');
const clock = () => BASE;

function receiver(up: boolean) {
  const seen: string[] = [];
  const fetch = (async (_url: string, init: RequestInit) => {
    if (!up) throw new Error('connection refused');
    seen.push(Buffer.from(init.body as Uint8Array).toString('utf8'));
    return new Response(null, { status: 202 });
  }) as typeof globalThis.fetch;
  return { fetch, seen };
}

const opts = (file: string, fetch: typeof globalThis.fetch) => ({
  stateFile: file,
  clock,
  fetch,
  webhookUrl: 'http://receiver.test/webhooks',
  secret: 's',
  retry: { baseMs: 3_600_000, maxMs: 3_600_000, maxAttempts: 3 },
});

describe('a kept sandbox', () => {
  it('comes back with its records, id counter, clock, burst, Idempotency-Keys, events and the deliveries still queued', async () => {
    const file = join(dir, 'state.json');
    const first: Harness = await start(opts(file, receiver(false).fetch));
    let created: number;
    try {
      const r = await first.api('POST', '/contacts', {
        body: { name: 'Kept', email: 'kept@example.com' },
        headers: { 'Idempotency-Key': 'k1' },
      });
      created = r.body.data.id;
      await first.hook('POST', '/clock', { advance: '2h' });
      await first.hook('POST', '/burst', { burst: 77 });
      expect(first.sandbox.emitter.deliveries().map((d) => [d.event, d.state])).toEqual([['contact.created', 'pending']]);
    } finally {
      await first.close();
    }

    const up = receiver(true);
    const second: Harness = await start(opts(file, up.fetch));
    try {
      expect(second.sandbox.restored).toBe(true);
      expect((await second.api('GET', `/contacts/${created}`)).body.data).toMatchObject({ id: created, name: 'Kept' });
      expect((await second.hook('GET', '/clock')).body.data.now).toBe('2030-01-10T02:00:00.000Z');
      expect((await second.api('GET', '/me')).headers.get('X-RateLimit-Limit')).toBe('77');
      const replay = await second.api('POST', '/contacts', {
        body: { name: 'Kept', email: 'kept@example.com' },
        headers: { 'Idempotency-Key': 'k1' },
      });
      expect([replay.headers.get('Idempotent-Replay'), replay.body.data.id]).toEqual(['true', created]);
      const next = await second.api('POST', '/contacts', { body: { name: 'After' } });
      expect(next.body.data.id).toBeGreaterThan(created);
      await eventually(() => up.seen.length >= 2);
      const events = second.sandbox.emitter.events();
      expect(events.map((e) => e.event)).toEqual(['contact.created', 'contact.created']);
      // The queued delivery went out with the id and bytes it had before the restart.
      expect(up.seen[0]).toBe(JSON.stringify(events[0]));
    } finally {
      await second.close();
    }
  });

  it('is written shortly after a change, without waiting for close (what a SIGKILL leaves)', async () => {
    const file = join(dir, 'live.json');
    const h = await start({ stateFile: file });
    try {
      const r = await h.api('POST', '/contacts', { body: { name: 'Written soon' } });
      const saved = await eventually(() => {
        try {
          return readFileSync(file, 'utf8').includes('Written soon') && r.status === 201;
        } catch {
          return false;
        }
      });
      expect(saved).toBe(true);
    } finally {
      await h.close();
    }
  });

  it('refuses a file it cannot read, naming it and what to do', () => {
    const file = join(dir, 'broken.json');
    writeFileSync(file, '{"version":1,');
    expect(() => createSandbox({ stateFile: file })).toThrow(KeptStateError);
    expect(() => createSandbox({ stateFile: file })).toThrow(`cannot read the kept sandbox ${file}: it is not JSON`);
    writeFileSync(file, JSON.stringify({ version: 99 }));
    expect(() => createSandbox({ stateFile: file })).toThrow(
      /it is version 99 of the format; this switchyard reads version 1; delete the file to start a fresh sandbox/,
    );
  });

  it('starts fresh when the file does not exist yet', () => {
    expect(createSandbox({ stateFile: join(dir, 'none.json') }).restored).toBe(false);
  });
});
