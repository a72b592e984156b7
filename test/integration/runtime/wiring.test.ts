import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fixture, fixtureBytes } from '../../../src/events/fixture.js';
import { eventBody } from '../../support/events.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { deliver, startTestService, TEST_SECRET, waitFor } from '../../support/service.js';

/** The receiver process as `serve`/`start` build it: metrics, dashboard and capture mounted. */
describe('receiver wiring: /metrics, /admin, capture', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-wiring-'));
  let service: Awaited<ReturnType<typeof startTestService>>;
  let base: string;

  beforeAll(async () => {
    service = await startTestService({
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: uniquePrefix('wiring'),
      ADMIN_USER: 'ops',
      ADMIN_PASSWORD: 'pa55-word',
      CAPTURE_DIR: dir,
    });
    base = service.url.replace('/webhooks', '');
  });
  afterAll(async () => {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts deliveries by outcome and exposes queue depth on /metrics', async () => {
    const body = eventBody();
    await deliver(service.url, body);
    await deliver(service.url, body);
    await deliver(service.url, body, 'wrong-secret');
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toMatch(/switchyard_deliveries_total\{outcome="accepted",workspace="default"\} 1/);
    expect(text).toMatch(/switchyard_deliveries_total\{outcome="duplicate",workspace="default"\} 1/);
    expect(text).toMatch(/switchyard_deliveries_total\{outcome="bad_signature",workspace="default"\} 1/);
    expect(text).toMatch(/queue="events"/);
    expect(text).not.toContain(TEST_SECRET);
    expect(text).not.toContain('pa55-word');
  });

  it('puts the dashboard behind basic auth', async () => {
    expect((await fetch(`${base}/admin`)).status).toBe(401);
    const ok = await fetch(`${base}/admin`, { headers: { authorization: `Basic ${Buffer.from('ops:pa55-word').toString('base64')}` } });
    expect(ok.status).toBe(200);
  });

  it('captures verified deliveries as fixtures that hold the exact bytes and no signature', async () => {
    const body = eventBody('conversation.closed');
    expect((await deliver(service.url, body)).status).toBe(202);
    const file = await waitFor(() => readdirSync(dir).find((f) => f.includes('conversation.closed') && f.endsWith('.json')));
    const fixture = Fixture.parse(JSON.parse(readFileSync(join(dir, file), 'utf8')));
    expect(fixtureBytes(fixture).toString('utf8')).toBe(body);
    expect(JSON.stringify(fixture.headers)).not.toMatch(/signature/i);
  });
});
