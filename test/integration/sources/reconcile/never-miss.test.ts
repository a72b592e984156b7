import { formatTrace } from '../../../../src/history/timeline.js';
import { readTrace, type Trace } from '../../../../src/history/read.js';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcileCommand } from '../../../../src/cli/reconcile.js';
import { jobIdFor } from '../../../../src/events/envelope.js';
import type { ReconcileReport } from '../../../../src/sources/reconcile/run.js';
import { memoryIo } from '../../../support/io.js';
import { handlerJobs, sandboxCall, SANDBOX_TOKEN, startPipeline, type Pipeline } from '../../../support/pipeline.js';
import { testRedisUrl } from '../../../support/redis.js';
import { TEST_SECRET, waitFor } from '../../../support/service.js';

const HANDLERS = fileURLToPath(new URL('../../../../handlers', import.meta.url));
const OPEN_DAY = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][(new Date().getUTCDay() + 2) % 7] as string;
/** Refuses connections: the receiver is "down" for the sandbox. */
const DEAD_URL = 'http://127.0.0.1:9/webhooks';

interface World {
  teammates: { id: number; name: string }[];
  channels: { id: number; type: string }[];
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/**
 * Never miss a change: the receiver is down past the sandbox's retries, so the
 * events are lost; `switchyard reconcile` finds the changes through the API and
 * each shipped recipe writes once; a second reconcile and the late real
 * deliveries write nothing more.
 */
describe('reconcile after lost deliveries (shipped recipes, sandbox, receiver, worker)', () => {
  let p: Pipeline;
  let world: World;
  let since: string;
  const ids: { conversation?: number; inboundConversation?: number; lead?: number; leadContact?: number; duplicate?: number } = {};

  const env = () => ({
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: p.prefix,
    WORKSPACE_API_URL: p.api.baseUrl,
    WORKSPACE_API_TOKEN: SANDBOX_TOKEN,
    WORKSPACE_API_BURST: '100',
  });
  const runReconcile = async (...args: string[]): Promise<ReconcileReport> => {
    const io = memoryIo(env());
    expect(await reconcileCommand.run(['--since', since, '--json', ...args], io)).toBe(0);
    return JSON.parse(io.out()) as ReconcileReport;
  };
  /** The recipes' writes, as the sandbox saw them (first answers only, not replays). */
  const writes = async () => {
    const all = await p.requests();
    const fresh = all.filter((r) => r.method !== 'GET' && r.status >= 200 && r.status < 300 && !r.replay);
    return {
      awayReply: fresh.filter((r) => r.method === 'POST' && r.path === `/conversations/${ids.inboundConversation}/messages`).length,
      followUp: fresh.filter((r) => r.method === 'POST' && r.path === '/tasks').length,
      leadWon: fresh.filter((r) => r.method === 'PUT' && r.path === `/contacts/${ids.leadContact}/lifecycle`).length,
      merge: fresh.filter((r) => r.method === 'POST' && r.path === '/contacts/merge').length,
    };
  };
  const idle = async () => {
    await waitFor(async () => {
      const counts = await Promise.all(
        [p.events, ...Object.values(p.handlerQueues)].map((q) => q.getJobCounts('waiting', 'active', 'delayed', 'prioritized')),
      );
      return counts.every((c) => Object.values(c).every((n) => n === 0));
    }, 20_000);
  };

  beforeAll(async () => {
    p = await startPipeline({
      handlersDir: HANDLERS,
      env: { FOLLOW_UP_DAYS: '2', BUSINESS_HOURS: `${OPEN_DAY} 09:00-17:00 UTC`, AWAY_MESSAGE: 'We are away', MERGE_DUPLICATES: 'true' },
    });
    world = ((await (await fetch(`${p.api.url}/_sandbox/workspaces`)).json()) as { data: World[] }).data[0] as World;
  });
  afterAll(async () => p?.close());

  it('loses the deliveries while the receiver is down past the retries', async () => {
    since = new Date(Date.now() - 1).toISOString();
    p.sandbox.emitter.configure(DEAD_URL, TEST_SECRET);
    // An inbound message on a new thread (conversation.created, message.received, contact.created).
    const inbound = await post(`${p.api.url}/_sandbox/inbound`, {
      contact: { name: 'Night Owl', email: 'owl@example.com' },
      channel_id: world.channels.find((c) => c.type === 'whatsapp')?.id,
      body: 'hello?',
    });
    expect(inbound.status).toBe(201);
    ids.inboundConversation = ((await inbound.json()) as { data: { conversation: { id: number } } }).data.conversation.id;
    // Close a seeded open thread (conversation.closed).
    const open = (await sandboxCall(p, 'GET', '/conversations?status=open')).json.data as { id: number }[];
    ids.conversation = open.find((c) => c.id !== ids.inboundConversation)?.id;
    expect((await sandboxCall(p, 'PATCH', `/conversations/${ids.conversation}`, { status: 'closed', category: 'Resolved' })).status).toBe(
      200,
    );
    // A lead created and won in the window (lead.created, lead.won). A lead created before the window
    // and won inside it cannot be found: the record carries no time of its outcome (documented).
    const seeded = ((await sandboxCall(p, 'GET', '/leads')).json.data as { contact_id: number }[])[0];
    ids.leadContact = seeded?.contact_id;
    const lead = await sandboxCall(p, 'POST', '/leads', { contact_id: ids.leadContact, name: 'Window lead' });
    expect(lead.status).toBe(201);
    ids.lead = (lead.json.data as { id: number }).id;
    expect((await post(`${p.api.url}/_sandbox/leads/${ids.lead}/outcome`, { outcome: 'won' })).status).toBe(200);
    // A contact with the email of an older one (contact.created → merge-duplicates).
    const dup = await sandboxCall(p, 'POST', '/contacts', { name: 'Alice again', email: 'alice@example.com' });
    expect(dup.status).toBe(201);
    ids.duplicate = (dup.json.data as { id: number }).id;

    // The sandbox retries each event, then gives up.
    await waitFor(
      () => p.sandbox.emitter.deliveries().length > 0 && p.sandbox.emitter.deliveries().every((d) => d.state === 'failed'),
      60_000,
    );
    expect(
      p.sandbox.emitter
        .deliveries()
        .map((d) => d.event)
        .sort(),
    ).toEqual(
      expect.arrayContaining([
        'contact.created',
        'contact.created',
        'conversation.closed',
        'conversation.created',
        'lead.created',
        'lead.won',
        'message.received',
      ]),
    );
    p.sandbox.emitter.configure(p.receiverUrl, TEST_SECRET);
    expect(await writes()).toEqual({ awayReply: 0, followUp: 0, leadWon: 0, merge: 0 });
  }, 90_000);

  it('--dry-run lists the missing changes and enqueues nothing', async () => {
    const report = await runReconcile('--dry-run');
    expect(report.dryRun).toBe(true);
    expect(report.events['message.received']).toMatchObject({ found: 1, received: 0, enqueued: 1 });
    expect(report.events['conversation.closed']).toMatchObject({
      found: 1,
      received: 0,
      enqueued: 1,
      examples: [String(ids.conversation)],
    });
    expect(report.events['contact.created']).toMatchObject({ found: 2, received: 0, enqueued: 2 });
    expect(report.events['lead.won']).toMatchObject({ found: 1, enqueued: 1, examples: [String(ids.lead)] });
    expect(report.apiCalls).toBeGreaterThan(0);
    expect(await p.events.getJobCounts('waiting', 'active', 'completed')).toEqual({ waiting: 0, active: 0, completed: 0 });
  });

  it('reconcile --since: each recipe writes once, the runs marked source reconcile', async () => {
    const report = await runReconcile();
    expect(report.dryRun).toBe(false);
    expect(report.totals.received).toBe(0);
    expect(report.totals.enqueued).toBe(report.totals.found);
    await waitFor(async () => {
      const w = await writes();
      return w.awayReply === 1 && w.followUp === 1 && w.merge === 1;
    }, 30_000);
    await idle();
    expect(await writes()).toEqual({ awayReply: 1, followUp: 1, leadWon: 1, merge: 1 });
    const jobs = await handlerJobs(p, ['completed']);
    expect(jobs.length).toBeGreaterThan(0);
    expect(jobs.every((j) => j.data.source === 'reconcile')).toBe(true);
    // The history says so too.
    const trace = await readTrace(p.redis, p.prefix, jobs[0]?.data.key as string);
    expect(trace?.source).toBe('reconcile');
    expect(formatTrace(trace as Trace)).toContain('source reconcile (made by Switchyard, not sent by the workspace)');
  }, 60_000);

  it('reconcile again: every change already received, nothing enqueued, no new write', async () => {
    const report = await runReconcile();
    expect(report.totals.enqueued).toBe(0);
    expect(report.totals.pending).toBe(0);
    // The merged contact is gone from the listing; everything still listed was received.
    expect(report.totals.received).toBe(report.totals.found);
    await idle();
    expect(await writes()).toEqual({ awayReply: 1, followUp: 1, leadWon: 1, merge: 1 });
  }, 60_000);

  it('the lost deliveries arriving late, signed: stored (202) but duplicate changes, no second write', async () => {
    const before = (await handlerJobs(p, ['completed', 'failed', 'waiting', 'active', 'delayed'])).length;
    const failed = new Set(
      p.sandbox.emitter
        .deliveries()
        .filter((d) => d.state === 'failed')
        .map((d) => d.id),
    );
    const lost = p.sandbox.emitter.events().filter((e) => failed.has(e.id));
    expect(lost.length).toBeGreaterThanOrEqual(7);
    // The sandbox sends them again, as a late retry of the service would: same ids, same bytes, signed.
    const redeliver = await post(`${p.api.url}/_sandbox/events/redeliver`, {});
    expect(((await redeliver.json()) as { data: { queued: number } }).data.queued).toBe(lost.length);
    await waitFor(() => p.sandbox.emitter.deliveries().every((d) => d.state === 'delivered'), 30_000);
    // Stored by the receiver (their envelope ids are new to it): 202, not the 200 of a repeated delivery.
    const ids = new Set(lost.map((e) => e.id));
    expect(
      p.sandbox.emitter
        .deliveries()
        .filter((d) => ids.has(d.id))
        .map((d) => d.last_status),
    ).toEqual(lost.map(() => 202));
    // Each one's events job ends as a duplicate change.
    for (const env of lost) {
      const result = await waitFor(async () => {
        const job = await p.events.getJob(jobIdFor(env.id));
        return job?.returnvalue ? (job.returnvalue as { duplicateChange?: string }) : undefined;
      }, 20_000);
      expect(result.duplicateChange, `${env.event} ${env.id}`).toMatch(new RegExp(`^${env.event.replace('.', '\\.')}:`));
      // Its history shows a webhook whose change was already dispatched.
      const trace = await waitFor(() => readTrace(p.redis, p.prefix, env.id));
      expect(trace.source).toBe('webhook');
      expect(trace.state).toBe('duplicate_change');
      expect(formatTrace(trace)).toContain(`duplicate change ${result.duplicateChange}`);
    }
    await idle();
    const after = await handlerJobs(p, ['completed', 'failed', 'waiting', 'active', 'delayed']);
    expect(after.length).toBe(before);
    expect(await writes()).toEqual({ awayReply: 1, followUp: 1, leadWon: 1, merge: 1 });
    // The metrics tell the two apart: what reconcile caught up, and the late webhooks that ran nothing.
    const text = await p.service.metrics.registry.metrics();
    expect(text).toContain(
      'switchyard_dispatched_total{event="message.received",source="reconcile",outcome="dispatched",workspace="default"} 1',
    );
    expect(text).toContain(
      'switchyard_dispatched_total{event="message.received",source="webhook",outcome="duplicate_change",workspace="default"} 1',
    );
    expect(text).toContain(
      'switchyard_dispatched_total{event="contact.created",source="webhook",outcome="duplicate_change",workspace="default"} 2',
    );
  }, 60_000);
});
