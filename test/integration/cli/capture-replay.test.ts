/**
 * A redacted capture is a faithful stand-in for the original deliveries: the
 * receiver captures the shipped fixtures with CAPTURE_REDACT, and replaying
 * the captures inline against the sandbox makes exactly the API calls that
 * replaying the originals makes, for the lead-won recipe and for a handler
 * that branches on a lifecycle stage's name and a lead's title.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayCommand } from '../../../src/cli/replay.js';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { startTestService, TEST_SECRET, waitFor } from '../../support/service.js';
import { memoryIo } from '../../support/io.js';

const FIXTURES = fileURLToPath(new URL('../../../fixtures', import.meta.url));
const RECIPES = fileURLToPath(new URL('../../../handlers', import.meta.url));
const STAGE_BRANCH = fileURLToPath(new URL('../../support/handlers/capture', import.meta.url));
const FILES = ['contact.created', 'message.received', 'contact.lifecycle_changed', 'lead.created', 'lead.won', 'lead.lost'].map((n) =>
  join(FIXTURES, `${n}.json`),
);

interface Logged {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  status: number;
}

describe('a redacted capture replayed inline', () => {
  let svc: Awaited<ReturnType<typeof startTestService>> | undefined;
  let api: RunningSandbox;
  const captureDir = mkdtempSync(join(tmpdir(), 'sy-capture-replay-'));

  beforeAll(async () => {
    api = await createSandbox({ burst: 100 }).listen(0);
    svc = await startTestService({
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: uniquePrefix('capture'),
      CAPTURE_DIR: captureDir,
      CAPTURE_REDACT: 'true',
    });
  });
  afterAll(async () => {
    await svc?.close();
    await api?.close();
  });

  /** Replays `inputs` through lead-won and stage-branch on a freshly reset sandbox; the sandbox's request log, in a stable order. */
  async function replayed(inputs: string[]): Promise<{ calls: string[]; out: string }> {
    await fetch(`${api.url}/_sandbox/reset`, { method: 'POST' });
    await fetch(`${api.url}/_sandbox/requests`, { method: 'DELETE' });
    let out = '';
    for (const [dir, handler] of [
      [RECIPES, 'lead-won'],
      [STAGE_BRANCH, 'stage-branch'],
    ] as const) {
      const io = memoryIo({ WORKSPACE_API_URL: api.baseUrl, WORKSPACE_API_TOKEN: 'sbx_full_acme', HANDLERS_DIR: dir });
      const code = await replayCommand.run([...inputs, '--inline', '--handler', handler, '--concurrency', '1'], io);
      out += io.out();
      expect(code, io.out() + io.err()).toBe(0);
    }
    const log = ((await (await fetch(`${api.url}/_sandbox/requests`)).json()) as { data: Logged[] }).data;
    return { calls: log.map(({ method, path, query, body, status }) => JSON.stringify({ method, path, query, body, status })).sort(), out };
  }

  it('makes the same API calls as the original deliveries (stage names and lead titles kept, personal data replaced)', async () => {
    const sent = memoryIo({ WEBHOOK_SECRETS: TEST_SECRET });
    expect(await replayCommand.run([...FILES, '--to', svc!.url, '--json'], sent)).toBe(0);
    const captured = await waitFor(() => {
      const files = readdirSync(captureDir).filter((f) => f.endsWith('.json'));
      return files.length === FILES.length ? files.map((f) => join(captureDir, f)) : null;
    });

    // The captures are redacted: the contact's name, email and phone and the message body are gone.
    const text = captured.map((f) => readFileSync(f, 'utf8')).join('\n');
    for (const personal of ['Zoë Ångström', 'zoe.angstrom@example.com', '+49 151 23456789', 'out for delivery'])
      expect(text).not.toContain(personal);
    // Names of things are not personal data: the stages and the lead's title stay.
    for (const thing of ['New Lead', 'Customer', 'Bob wholesale']) expect(text).toContain(thing);

    const original = await replayed(FILES);
    // The original did something worth comparing: lead-won's two writes and stage-branch's tasks.
    expect(original.out).toMatch(/✓ lead-won completed/);
    expect(original.out).toMatch(/✓ stage-branch completed/);
    const writes = original.calls.map((c) => JSON.parse(c) as Logged).filter((c) => c.method !== 'GET');
    expect(writes.map((w) => `${w.method} ${w.path} ${w.status}`)).toEqual(
      expect.arrayContaining(['PUT /contacts/36/lifecycle 200', 'POST /contacts/36/labels 200', 'POST /tasks 201']),
    );
    expect(
      writes
        .map((w) => (w.body as { title?: string } | null)?.title)
        .filter(Boolean)
        .sort(),
    ).toEqual([
      'Onboard customer (was New Lead)',
      'Wholesale lead lost: Bob wholesale – 40 T-shirts',
      'Wholesale lead open: Bob wholesale – 40 T-shirts',
      'Wholesale lead won: Bob wholesale – 40 T-shirts',
    ]);

    const redacted = await replayed(captured);
    expect(redacted.calls).toEqual(original.calls);
  });
});
