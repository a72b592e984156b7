import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dlqCommand } from '../../../src/cli/dlq.js';
import { deliveriesCommand } from '../../../src/cli/deliveries.js';
import { traceCommand } from '../../../src/cli/trace.js';
import { jobIdFor } from '../../../src/events/envelope.js';
import type { DeliverySummary, Trace } from '../../../src/history/read.js';
import { readTrace } from '../../../src/history/read.js';
import type { AttemptEntry } from '../../../src/history/record.js';
import type { DeadEntry } from '../../../src/queue/dlq.js';
import { conversationBody, messageBody } from '../../support/events.js';
import { memoryIo } from '../../support/io.js';
import { sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { parseSamples, valueOf } from '../../support/prom-text.js';
import { testRedisUrl } from '../../support/redis.js';
import { deliver, waitFor } from '../../support/service.js';

const HANDLERS = fileURLToPath(new URL('../../support/handlers/history', import.meta.url));

function message(conv: number, text: string): string {
  return messageBody('message.received', conv, text);
}
const keyOf = (body: string) => (JSON.parse(body) as { id: string }).id;

/** Runs CLI commands as functions against a pipeline's Redis and prefix. */
function cliOf(env: () => Record<string, string>) {
  const run = async (cmd: typeof traceCommand, ...argv: string[]) => {
    const io = memoryIo(env());
    const code = await cmd.run(argv, io);
    return { code, out: io.out(), err: io.err() };
  };
  const list = async (...argv: string[]) =>
    (JSON.parse((await run(deliveriesCommand, '--json', ...argv)).out) as { deliveries: DeliverySummary[] }).deliveries.map((d) => d.key);
  return { run, list };
}

describe('trace and deliveries against a real history', () => {
  let p: Pipeline;
  let env: Record<string, string>;
  let conv: number;
  let other: number;
  const keys: Record<string, string> = {};
  const { run, list } = cliOf(() => env);

  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HANDLERS });
    env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: p.prefix };
    const convs = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[]).map((c) => c.id);
    conv = convs[0] as number;
    other = convs[1] as number;
    const bodies = {
      ok: message(conv, 'plain'),
      retried: message(conv, 'retry-me'),
      dead: message(conv, 'dead-me'),
      other: message(other, 'plain'),
      opened: conversationBody('conversation.opened', conv, null, Date.now() - 2 * 3_600_000),
    };
    for (const [name, body] of Object.entries(bodies)) {
      keys[name] = keyOf(body);
      expect((await deliver(p.receiverUrl, body)).status).toBe(202);
      await new Promise((r) => setTimeout(r, 5)); // distinct receipt times: a stable newest-first order
    }
    await waitFor(
      async () => {
        const states = await Promise.all(Object.values(keys).map((k) => readTrace(p.redis, p.prefix, k)));
        return states.every((t) => t && Object.values(t.handlers).some((s) => ['completed', 'dead', 'skipped'].includes(s)));
      },
      20_000,
      50,
    );
  });
  afterAll(async () => p?.close());

  it('trace prints a timeline: receipt, queueing, fan-out, each attempt with its calls', async () => {
    const r = await run(traceCommand, keys['retried']!);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`^delivery ${keys['retried']}  message.received  conversation ${conv}\n`));
    expect(r.out).toMatch(/\+\d+ ms\s+received\n/);
    expect(r.out).toMatch(/queued \(events\)/);
    expect(r.out).toMatch(/fan-out: traced-note \(queued, normal\)/);
    expect(r.out).toMatch(/traced-note {2}attempt 1 {2}→ retry/);
    expect(r.out).toMatch(/Error: transient failure after writing/);
    expect(r.out).toMatch(/traced-note {2}attempt 2 {2}→ completed/);
    expect(r.out).toMatch(/step conversation: taken from the store/);
    expect(r.out).toMatch(
      new RegExp(`· POST /conversations/${conv}/notes {2}201 {2}replayed .*Idempotency-Key \\S+ {2}\\[notes.create\\]`),
    );
    expect(r.out).toMatch(/history kept 6d 23h more/);
  });

  it('a dead-lettered run shows its failing call; trace finds it by job id too, and dlq show points to it', async () => {
    const byJob = await run(traceCommand, jobIdFor(keys['dead']!, 'traced-note'));
    expect(byJob.code).toBe(0);
    expect(byJob.out).toMatch(/→ DEAD \(dead-lettered\)/);
    expect(byJob.out).toMatch(/✗ POST \/conversations\/987654321\/notes {2}404/);
    expect(byJob.out).toMatch(/NotFoundError/);
    expect((await run(traceCommand, jobIdFor(keys['dead']!))).out).toBe(byJob.out);
    const show = await run(dlqCommand, 'show', jobIdFor(keys['dead']!, 'traced-note'));
    expect(show.out).toContain(`trace:     switchyard trace ${keys['dead']}\n`);
  });

  it('trace --json has the whole record; an unknown reference fails with a hint', async () => {
    const t = JSON.parse((await run(traceCommand, keys['ok']!, '--json')).out) as Trace;
    expect(t).toMatchObject({ key: keys['ok'], event: 'message.received', handlers: { 'traced-note': 'completed' } });
    expect(t.entries.map((e) => e.kind)).toEqual(['fanout', 'attempt']);
    const missing = await run(traceCommand, 'evt_nothing_here');
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/nothing recorded for "evt_nothing_here": no delivery with this key or job id is known/);
    await expect(run(traceCommand)).rejects.toThrow(/one delivery key or job id/);
  });

  it('deliveries lists newest first and filters by event, handler, outcome, conversation, contact and time', async () => {
    const all = await list();
    expect(all).toEqual([keys['opened'], keys['other'], keys['dead'], keys['retried'], keys['ok']]);
    expect(await list('--event', 'conversation.opened')).toEqual([keys['opened']]);
    expect(await list('--handler', 'traced-fresh')).toEqual([keys['opened']]);
    expect(await list('--outcome', 'dead')).toEqual([keys['dead']]);
    expect(await list('--handler', 'traced-note', '--outcome', 'completed')).toEqual([keys['other'], keys['retried'], keys['ok']]);
    expect(await list('--outcome', 'skipped')).toEqual([keys['opened']]);
    expect(await list('--conversation', String(other))).toEqual([keys['other']]);
    expect(await list('--contact', '7')).toEqual([keys['opened']]);
    expect(await list('--since', '1h')).toHaveLength(5);
    expect(await list('--since', '2020-01-01', '--limit', '2')).toEqual([keys['opened'], keys['other']]);
    const text = await run(deliveriesCommand, '--outcome', 'dead');
    expect(text.out).toMatch(/^KEY\s+EVENT\s+RECEIVED\s+CONV\s+CONTACT\s+HANDLERS\n/);
    expect(text.out).toMatch(
      new RegExp(`${keys['dead']}\\s+message.received\\s+\\d+ ms ago|${keys['dead']}\\s+message.received\\s+[\\d.]+ s ago`),
    );
    expect(text.out).toMatch(/traced-note:dead\n$/);
  });

  it('bad usage is explained', async () => {
    await expect(run(deliveriesCommand, '--outcome', 'exploded')).rejects.toThrow(/--outcome: expected one of/);
    await expect(run(deliveriesCommand, '--event', 'message.recieved')).rejects.toThrow(/did you mean "message.received"/);
    await expect(run(deliveriesCommand, '--conversation', 'abc')).rejects.toThrow(/numeric id/);
    await expect(run(deliveriesCommand, '--since', 'yesterday')).rejects.toThrow(/--since/);
    await expect(run(deliveriesCommand, '--limit', '0')).rejects.toThrow(/--limit/);
  });
});

describe('a run that used its last attempt is dead in the history, trace, deliveries, dashboard, log and metrics', () => {
  const broken = globalThis as { __syTracedBroken?: boolean };
  const admin = { user: 'ops', password: 'pw-3f1c-last-attempt' };
  let p: Pipeline;
  let env: Record<string, string>;
  let key: string;
  const { run, list } = cliOf(() => env);
  const attempts = (t: Trace) => t.entries.filter((e): e is AttemptEntry => e.kind === 'attempt');
  /** The trace once `n` attempts are recorded (history is written after the attempt, not awaited). */
  const recorded = (n: number) =>
    waitFor(
      async () => {
        const t = await readTrace(p.redis, p.prefix, key);
        return t && attempts(t).length === n ? t : undefined;
      },
      20_000,
      50,
    );
  const timeline = async () => {
    const res = await fetch(`${p.receiverUrl.replace(/\/webhooks$/, '')}/admin/deliveries/${encodeURIComponent(key)}`, {
      headers: { Authorization: `Basic ${Buffer.from(`${admin.user}:${admin.password}`).toString('base64')}` },
    });
    expect(res.status).toBe(200);
    return res.text();
  };

  beforeAll(async () => {
    broken.__syTracedBroken = true;
    p = await startPipeline({ handlersDir: HANDLERS, env: { ADMIN_USER: admin.user, ADMIN_PASSWORD: admin.password } });
    env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: p.prefix };
    const conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]!.id;
    const body = message(conv, 'fail-always');
    key = keyOf(body);
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    // traced-note has 3 attempts, 50 ms apart: every one fails.
    await waitFor(async () => (await p.handlers.getFailedCount()) === 1, 20_000, 50);
  });
  afterAll(async () => {
    delete broken.__syTracedBroken;
    await p?.close();
  });

  it('its last attempt is recorded dead with the reason, everywhere it is shown', async () => {
    const reason = 'Error: still broken on attempt 3 (attempt 3 of 3: no retry left)';
    const t = await recorded(3);
    expect(t.handlers).toEqual({ 'traced-note': 'dead' });
    expect(attempts(t).map((a) => [a.attempt, a.outcome])).toEqual([
      [1, 'retry'],
      [2, 'retry'],
      [3, 'dead'],
    ]);
    expect(attempts(t)[2]?.error).toEqual({ class: 'Error', message: 'still broken on attempt 3 (attempt 3 of 3: no retry left)' });

    expect(await list('--outcome', 'dead')).toEqual([key]);
    expect(await list('--outcome', 'retry')).toEqual([]);
    const trace = (await run(traceCommand, key)).out;
    expect(trace).toMatch(/traced-note {2}attempt 2 {2}→ retry/);
    expect(trace).toMatch(/traced-note {2}attempt 3 {2}→ DEAD \(dead-lettered\)/);
    expect(trace).toContain(reason);
    expect(await timeline()).toMatch(/attempt 3 → <span class="state bad">dead \(dead-lettered\)<\/span>/);

    // The worker's log line of each attempt, and the dead letter's reason.
    const logged = p.lines.map(
      (l) => JSON.parse(l) as { msg: string; delivery?: string; attempt?: number; outcome?: string; reason?: string },
    );
    expect(logged.filter((l) => l.msg === 'handler failed' && l.delivery === key).map((l) => [l.attempt, l.outcome])).toEqual([
      [1, 'retry'],
      [2, 'retry'],
      [3, 'dead'],
    ]);
    expect(logged.find((l) => l.msg === 'dead-lettered')?.reason).toBe(reason);
    const dead = (JSON.parse((await run(dlqCommand, 'list', '--json')).out) as { entries: DeadEntry[] }).entries;
    expect(dead.map((e) => [e.key, e.reason])).toEqual([[key, reason]]);

    const samples = parseSamples(await p.service.metrics.scrape());
    const runs = (outcome: string) => valueOf(samples, 'switchyard_handler_runs_total', { handler: 'traced-note', outcome });
    expect([runs('retry'), runs('dead')]).toEqual([2, 1]);
  });

  it('dlq retry after the fix: the timeline shows the dead mark, then the retried run', async () => {
    broken.__syTracedBroken = false;
    expect((await run(dlqCommand, 'retry', '--handler', 'traced-note')).out).toMatch(/1 job moved back to waiting/);
    const t = await recorded(4);
    expect(t.handlers).toEqual({ 'traced-note': 'completed' });
    expect(attempts(t).map((a) => [a.attempt, a.outcome])).toEqual([
      [1, 'retry'],
      [2, 'retry'],
      [3, 'dead'],
      [1, 'completed'],
    ]);
    expect((await run(traceCommand, key)).out).toMatch(/attempt 3 {2}→ DEAD \(dead-lettered\)[\s\S]*attempt 1 {2}→ completed/);
    expect(await timeline()).toMatch(
      /attempt 3 → <span class="state bad">dead \(dead-lettered\)[\s\S]*attempt 1 → <span class="state ok">completed/,
    );
  });
});
