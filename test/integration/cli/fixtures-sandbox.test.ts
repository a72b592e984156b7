import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayCommand } from '../../../src/cli/replay.js';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { handlerJobCounts, handlerJobs, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { TEST_SECRET, waitFor } from '../../support/service.js';
import { memoryIo } from '../../support/io.js';

const FIXTURES = fileURLToPath(new URL('../../../fixtures', import.meta.url));
const HANDLERS = fileURLToPath(new URL('../../../handlers', import.meta.url));

/** Every shipped recipe switched on; the business hours put the message.received fixture (a Tuesday morning) outside them. */
const ALL_RECIPES_ON = { MERGE_DUPLICATES: 'true', BUSINESS_HOURS: 'Sat 09:00-10:00 UTC', FOLLOW_UP_DAYS: '2' };
const RECIPES = ['follow-up-task', 'lead-won', 'away-reply', 'merge-duplicates'];

describe('the shipped fixtures against the sandbox', () => {
  let api: RunningSandbox;
  beforeAll(async () => {
    api = await createSandbox({ burst: 100 }).listen(0);
  });
  afterAll(async () => api?.close());

  it('`replay fixtures/ --inline` exits 0 and every recipe succeeds on the seeded ids; _malformed/ is left out, saying so', async () => {
    const io = memoryIo({
      WORKSPACE_API_URL: api.baseUrl,
      WORKSPACE_API_TOKEN: 'sbx_full_acme',
      HANDLERS_DIR: HANDLERS,
      ...ALL_RECIPES_ON,
    });
    const code = await replayCommand.run([FIXTURES, '--inline', '--concurrency', '1'], io);
    const out = io.out();
    expect(out).not.toMatch(/✗|^(rejected|failed) /m);
    for (const id of RECIPES) expect(out).toMatch(new RegExp(`✓ ${id} completed`));
    expect(out).toMatch(/14 deliveries in .*: 14 accepted, 0 duplicate, 0 rejected, 0 failed/);
    expect(io.err()).toMatch(/not descending into .*_malformed\/ \(directories starting with _ or \. are read only when named\)/);
    expect(code).toBe(0);
    // The writes landed: the follow-up task, the won contact's label, the away reply in the seeded thread.
    const writes = (
      (await (await fetch(`${api.url}/_sandbox/requests?method=POST`)).json()) as { data: { path: string; status: number }[] }
    ).data;
    expect(writes.filter((w) => w.status >= 400)).toEqual([]);
    expect(writes.map((w) => w.path)).toEqual(expect.arrayContaining(['/tasks', '/contacts/36/labels', '/conversations/38/messages']));
  });

  it('named explicitly, _malformed/ is replayed: its invalid deliveries are rejected with their reasons (exit 1)', async () => {
    const io = memoryIo({ WORKSPACE_API_URL: api.baseUrl, WORKSPACE_API_TOKEN: 'sbx_full_acme', HANDLERS_DIR: HANDLERS });
    expect(await replayCommand.run([`${FIXTURES}/_malformed`, '--inline', '--json'], io)).toBe(1);
    const summary = JSON.parse(io.out()) as { total: number; rejected: number; problems: { detail: string }[] };
    expect(summary).toMatchObject({ total: 8, rejected: 5 });
    expect(summary.problems.map((p) => p.detail.split(':')[0]).sort()).toEqual([
      'invalid_data',
      'invalid_json',
      'missing_event_name',
      'not_an_object',
      'unknown_event',
    ]);
  });
});

describe('the shipped fixtures through receiver and worker', () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HANDLERS, env: ALL_RECIPES_ON });
  });
  afterAll(async () => p?.close());

  it('`replay fixtures/` over HTTP leaves no dead letter: every delivery and every recipe run completes', async () => {
    const io = memoryIo({ WEBHOOK_SECRETS: TEST_SECRET });
    expect(await replayCommand.run([FIXTURES, '--to', p.receiverUrl, '--json'], io)).toBe(0);
    expect(JSON.parse(io.out())).toMatchObject({ total: 14, accepted: 14 });
    // One handler job per recipe; the sandbox's own events from those writes may add more.
    await waitFor(async () => {
      const counts = await handlerJobCounts(p, 'completed', 'failed', 'waiting', 'active', 'delayed');
      const events = await p.events.getJobCounts('completed', 'failed', 'waiting', 'active', 'delayed');
      return (
        counts['completed']! >= RECIPES.length &&
        counts['waiting'] === 0 &&
        counts['active'] === 0 &&
        counts['delayed'] === 0 &&
        events['completed']! >= 14 &&
        events['waiting'] === 0 &&
        events['active'] === 0
      );
    }, 20_000);
    expect(await p.events.getFailedCount()).toBe(0);
    const failed = await handlerJobs(p, ['failed']);
    expect(failed.map((j) => `${j.name}: ${j.failedReason}`)).toEqual([]);
    const done = (await handlerJobs(p, ['completed'])).map((j) => j.data.handlerId);
    for (const id of RECIPES) expect(done).toContain(id);
  }, 40_000);
});
