import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountAdmin } from '../../../src/admin/index.js';
import { deliveriesCommand } from '../../../src/cli/deliveries.js';
import { traceCommand } from '../../../src/cli/trace.js';
import type { DeliverySummary, Trace } from '../../../src/history/read.js';
import { ingestKeys } from '../../../src/queue/names.js';
import { memoryIo } from '../../support/io.js';
import { startPipeline, type Pipeline } from '../../support/pipeline.js';
import { testRedisUrl } from '../../support/redis.js';
import { waitFor } from '../../support/wait.js';

const SCHEDULES = fileURLToPath(new URL('../../support/handlers/schedule-history', import.meta.url));
const admin = { user: 'ops', password: 'pw-schedule-history' };

/** A schedule run has the history a handler run has: trace, deliveries and the dashboard's timeline show it. */
describe('the history of schedule runs', () => {
  let p: Pipeline;
  let env: Record<string, string>;
  let key: string;
  const run = async (cmd: typeof traceCommand, argv: string[], more: Record<string, string> = {}) => {
    const io = memoryIo({ ...env, ...more });
    const code = await cmd.run(argv, io);
    return { code, out: io.out(), err: io.err() };
  };
  const list = async (...argv: string[]) =>
    (JSON.parse((await run(deliveriesCommand, ['--json', ...argv])).out) as { deliveries: DeliverySummary[] }).deliveries;

  beforeAll(async () => {
    p = await startPipeline({ handlersDir: SCHEDULES });
    env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: p.prefix };
    // The job scheduler makes the first tick's job at once: attempt 1 fails, attempt 2 completes.
    await waitFor(async () => (await list('--event', 'schedule'))[0]?.handlers['traced-digest'] === 'completed', 20_000, 50);
    key = (await list('--event', 'schedule'))[0]?.key as string;
  });
  afterAll(async () => p?.close());

  it('trace schedule:<id>:<tick> shows the tick, then each attempt with its outcome, steps and API calls', async () => {
    expect(key).toMatch(/^schedule:traced-digest:\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    const tick = key.slice('schedule:traced-digest:'.length);
    const r = await run(traceCommand, [key]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      new RegExp(
        `^schedule run ${key}\ntick {5}${tick} {2}\\(run by the schedules queue; not a delivery from the workspace\\)\nschedule traced-digest: completed\n`,
      ),
    );
    expect(r.out).toMatch(/\+0 ms\s+tick\n/);
    expect(r.out).toMatch(/traced-digest {2}attempt 1 \(job repeat:traced-digest:\d+\) {2}→ retry/);
    expect(r.out).toMatch(/Error: transient failure after writing/);
    expect(r.out).toMatch(/step conversation: ran\n\s+· GET \/conversations {2}200 /);
    expect(r.out).toMatch(/traced-digest {2}attempt 2 \(job repeat:traced-digest:\d+\) {2}→ completed/);
    expect(r.out).toMatch(/step conversation: taken from the store/);
    expect(r.out).toMatch(/· POST \/conversations\/\d+\/notes {2}201 {2}replayed .*Idempotency-Key \S+ {2}\[notes.create\]/);
    expect(r.out).toMatch(/history kept 6d 23h more/);
    // By its job id too, as the queue board and the logs show it.
    const jobId = /\(job (repeat:traced-digest:\d+)\)/.exec(r.out)?.[1] as string;
    expect(jobId).toBe(`repeat:traced-digest:${Date.parse(tick)}`);
    expect((await run(traceCommand, [jobId])).out).toBe(r.out);
    const json = JSON.parse((await run(traceCommand, [key, '--json'])).out) as Trace;
    expect(json).toMatchObject({
      key,
      source: 'schedule',
      event: 'schedule',
      receivedAt: tick,
      handlers: { 'traced-digest': 'completed' },
    });
    expect(json.entries.map((e) => (e.kind === 'attempt' ? `${e.attempt}:${e.outcome}` : e.kind))).toEqual(['1:retry', '2:completed']);
  });

  it('deliveries lists schedule runs (event schedule, the schedule as handler) and filters them', async () => {
    expect((await list('--event', 'schedule')).map((d) => d.key)).toEqual([key]);
    expect((await list('--handler', 'traced-digest', '--outcome', 'completed')).map((d) => d.key)).toEqual([key]);
    expect(await list('--event', 'message.received')).toEqual([]);
    const text = await run(deliveriesCommand, ['--event', 'schedule']);
    expect(text.out).toMatch(new RegExp(`\n${key}\\s+schedule\\s+.* ago\\s+-\\s+-\\s+traced-digest:completed\n$`));
  });

  it("the dashboard's timeline shows the run and its attempts", async () => {
    const app = new Hono();
    mountAdmin(app, { queues: [], admin, history: { redis: p.redis, prefix: p.prefix } });
    const res = await app.request(`/admin/deliveries/${encodeURIComponent(key)}`, {
      headers: { Authorization: `Basic ${Buffer.from(`${admin.user}:${admin.password}`).toString('base64')}` },
    });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain(`<h1>Schedule run <code>${key}</code></h1>`);
    expect(html).toMatch(/<dt>tick<\/dt><dd>[^<]+ \(a schedule run/);
    expect(html).toMatch(/<strong>traced-digest<\/strong> attempt 1 .*→ <span class="state wait">retry<\/span>/);
    expect(html).toMatch(/<strong>traced-digest<\/strong> attempt 2 .*→ <span class="state ok">completed<\/span>/);
    expect(html).toMatch(/<td class="path">\/conversations\/\d+\/notes<\/td><td class="status">201<\/td>/);
    const listed = await app.request('/admin/deliveries?event=schedule', {
      headers: { Authorization: `Basic ${Buffer.from(`${admin.user}:${admin.password}`).toString('base64')}` },
    });
    expect(await listed.text()).toContain(`href="/admin/deliveries/${encodeURIComponent(key)}"`);
  });

  it("a run not made yet is said to be waiting (its next tick's job is delayed)", async () => {
    const next = (await p.dlq.schedules.getDelayed())[0];
    expect(next?.id).toMatch(/^repeat:traced-digest:\d+$/);
    const r = await run(traceCommand, [String(next?.id)]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /^schedule run schedule:traced-digest:\S+\ntick {5}\S+\nqueued {3}\(schedules job delayed; its history starts when it runs\)\n$/,
    );
  });

  it('"nothing recorded" says which case it is: HISTORY off, expired past HISTORY_TTL, known but not recorded, or unknown', async () => {
    const prefix = p.prefix;
    const off = await run(traceCommand, ['evt_whatever'], { HISTORY: 'off' });
    expect(off.code).toBe(1);
    expect(off.err).toMatch(
      /^trace: nothing recorded for "evt_whatever": delivery history is off \(HISTORY=off\); workers with HISTORY=off record nothing/,
    );

    const unknown = await run(traceCommand, ['evt_never_received']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(
      /^trace: nothing recorded for "evt_never_received": no delivery with this key or job id is known \(none received within DEDUPE_TTL, 7d;/,
    );

    // A delivery's dedupe marker holds its receipt time: older than HISTORY_TTL is expired; younger, it came while HISTORY was off.
    const old = new Date(Date.now() - 8 * 86_400_000).toISOString();
    await p.redis.set(ingestKeys(prefix).dedupe('evt_long_ago'), old, 'PX', 60_000);
    const expired = await run(traceCommand, ['d/evt_long_ago/traced-note']);
    expect(expired.err).toBe(
      `trace: nothing recorded for "d/evt_long_ago/traced-note": it was received ${old}, longer ago than HISTORY_TTL (7d), so its history has expired\n`,
    );
    const recent = new Date(Date.now() - 3_600_000).toISOString();
    await p.redis.set(ingestKeys(prefix).dedupe('evt_unrecorded'), recent, 'PX', 60_000);
    expect((await run(traceCommand, ['evt_unrecorded'])).err).toMatch(
      new RegExp(
        `: it was received ${recent} \\(within HISTORY_TTL, 7d\\), but no history was recorded: HISTORY was off on the workers when it was fanned out, or it is still in the inbox`,
      ),
    );

    // A schedule run's key holds its tick.
    const stale = await run(traceCommand, ['schedule:traced-digest:2020-01-01T00:00:00.000Z']);
    expect(stale.err).toBe(
      'trace: nothing recorded for "schedule:traced-digest:2020-01-01T00:00:00.000Z": the run of schedule "traced-digest" was for tick 2020-01-01T00:00:00.000Z, longer ago than HISTORY_TTL (7d), so its history has expired\n',
    );
    const notATick = new Date(Date.now() - 60_000).toISOString();
    expect((await run(traceCommand, [`schedule:traced-digest:${notATick}`])).err).toMatch(
      new RegExp(`: no run of schedule "traced-digest" for tick ${notATick} is known \\(not one of its ticks`),
    );
  });
});

/** A schedule run that used its last attempt is recorded dead with the reason, as a handler run is. */
describe('a schedule run that used its last attempt', () => {
  let p: Pipeline;
  let env: Record<string, string>;
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: fileURLToPath(new URL('../../support/handlers/schedule-exhausted', import.meta.url)) });
    env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: p.prefix };
  });
  afterAll(async () => p?.close());

  it('is dead in the history (trace, deliveries --outcome dead) with the reason, not a retry', async () => {
    const dead = async () => {
      const io = memoryIo({ ...env });
      await deliveriesCommand.run(['--json', '--event', 'schedule', '--outcome', 'dead'], io);
      return (JSON.parse(io.out()) as { deliveries: DeliverySummary[] }).deliveries;
    };
    await waitFor(async () => (await dead()).length === 1, 20_000, 50);
    const [summary] = await dead();
    expect(summary?.handlers['always-failing']).toBe('dead');
    const io = memoryIo({ ...env });
    expect(await traceCommand.run([summary?.key as string, '--json'], io)).toBe(0);
    const trace = JSON.parse(io.out()) as Trace;
    expect(trace.entries.map((e) => (e.kind === 'attempt' ? `${e.attempt}:${e.outcome}` : e.kind))).toEqual(['1:retry', '2:dead']);
    const last = trace.entries.find((e) => e.kind === 'attempt' && e.attempt === 2);
    expect(JSON.stringify(last)).toContain('export target unreachable (attempt 2 of 2: no retry left)');
  });
});
