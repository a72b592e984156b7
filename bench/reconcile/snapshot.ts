// bench/reconcile part C: what the snapshot of event fields costs, and what it recovers.
//
//   PART=C node --import tsx bench/reconcile/run.ts
//
// A workspace of CONTACTS contacts (a third on each of three lifecycle stages),
// OPEN conversations open and PENDING pending (one per contact), LEADS open
// leads, in the sandbox in this process (`createSandbox`, burst unlimited, its
// clock simulated: `POST /_sandbox/clock`), a fresh redis-server. The snapshot
// is refreshed by `refreshSnapshot()` exactly as the worker's timer does, its
// clock (`now`) the sandbox's. Measured:
//
// 1. The baseline: API calls and wall time; Redis bytes of the snapshot
//    (`MEMORY USAGE` of every key under it) per tracked record.
// 2. An hour at a realistic rate of change, a refresh every EVERY_MIN simulated
//    minutes: per hour EDITS contact edits (no event, but `updated_at` moves),
//    MOVES lifecycle moves, NEW customers writing on new threads, ASSIGN
//    assignments, CLOSE closes, REOPEN reopens of closed threads and as many
//    pending threads opened, NEWLEADS leads created and SETTLE settled. API
//    calls per hour by operation, against 5 % of the API budget (burst 30 and
//    100 per 10 s).
// 3. Every event of that hour is then claimed as received (the webhooks
//    arrived), so the journal empties; then a 30-minute outage with the
//    service down (no refresh): half the hour's changes again, each on a record
//    of its own, plus 30 teammate replies on threads customers wrote on; then `reconcile()` over the outage (a dry
//    run, real claims): found per event against emitted per event.
import { Redis } from 'ioredis';
import { changeKey } from '../../src/events/change-key.js';
import { createLogger } from '../../src/log/logger.js';
import { ChangeClaims } from '../../src/queue/change.js';
import { pollKeys } from '../../src/sources/poll/poller.js';
import { refreshSnapshot, snapshotSource } from '../../src/sources/poll/snapshot.js';
import type { SnapshotKind } from '../../src/sources/poll/snapshot-diff.js';
import { reconcile } from '../../src/sources/reconcile/run.js';
import { createSandbox } from '../../src/sandbox/index.js';
import { sandboxClient } from '../../src/testing/sandbox-api.js';
import { log, startRedis } from '../lib/proc.js';

type Json = Record<string, unknown>;
type Call = (method: string, path: string, body?: unknown) => Promise<Json>;
const env = (name: string, def: number) => Number(process.env[name] ?? def);
const MIN = 60_000;

export async function partC(scratch: string, call0: (s: ReturnType<typeof createSandbox>) => Call): Promise<Json> {
  const CONTACTS = env('CONTACTS', 10_000),
    OPEN = env('OPEN', 2_000),
    PENDING = env('PENDING', 200),
    LEADS = env('LEADS_OPEN', 500);
  const EVERY_MIN = env('EVERY_MIN', 5);
  const rate = {
    EDITS: env('EDITS', 300),
    MOVES: env('MOVES', 40),
    NEW: env('NEW', 60),
    ASSIGN: env('ASSIGN', 200),
    CLOSE: env('CLOSE', 60),
    REOPEN: env('REOPEN', 20),
    NEWLEADS: env('NEWLEADS', 16),
    SETTLE: env('SETTLE', 12),
  };
  const redisServer = await startRedis(scratch);
  const redis = new Redis(redisServer.url);
  const sandbox = createSandbox({ burst: 1_000_000_000 });
  const call = call0(sandbox);
  let now = Date.parse('2026-11-16T00:00:00Z');
  await call('POST', '/_sandbox/clock', { set: new Date(now).toISOString() });
  const clock = async () => {
    now = Date.parse(String((await call('GET', '/_sandbox/clock'))['now']));
    return now;
  };
  // The sandbox's clock keeps running with real time between advances: `now` is read back from it, never kept apart.
  const tick = async (ms: number) => {
    now = Date.parse(String((await call('POST', '/_sandbox/clock', { advance_ms: ms }))['now']));
  };
  const ws = ((await call('GET', '/_sandbox/workspaces')) as unknown as Json[])[0] as {
    channels: { id: number; type: string }[];
    teammates: { id: number; active: boolean }[];
    lifecycle_stages: { id: number; name: string }[];
  };
  const whatsapp = ws.channels.find((c) => c.type === 'whatsapp')!.id;
  const users = ws.teammates.filter((t) => t.active).map((t) => t.id);
  const stages = ws.lifecycle_stages.map((s) => s.id);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;

  log(`part C: seeding ${CONTACTS} contacts, ${OPEN + PENDING} threads, ${LEADS} leads`);
  const t0 = Date.now();
  const contacts: number[] = [];
  for (let i = 0; i < CONTACTS; i++) {
    contacts.push(
      (
        (await call('POST', '/contacts', { name: `Customer ${i}`, email: `c${i}@example.com`, lifecycle_stage_id: stages[i % 3] })) as {
          id: number;
        }
      ).id,
    );
  }
  const open: number[] = [],
    pending: number[] = [],
    closed: number[] = [];
  /** Threads a customer wrote on (a WhatsApp reply needs the customer's message within 24 hours). */
  const written: number[] = [];
  for (let i = 0; i < OPEN + PENDING; i++) {
    const id = ((await call('POST', '/conversations', { contact: contacts[i], channel_id: whatsapp })) as { id: number }).id;
    if (i < OPEN) open.push(id);
    else {
      await call('PATCH', `/conversations/${id}`, { status: 'pending' });
      pending.push(id);
    }
  }
  const leads: number[] = [];
  for (let i = 0; i < LEADS; i++)
    leads.push(((await call('POST', '/leads', { contact_id: contacts[(i * 7) % CONTACTS], name: `Lead ${i}` })) as { id: number }).id);
  log(`part C: seeded in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  await tick(MIN);

  const byOp: Record<string, number> = {};
  let calls = 0;
  const api = sandboxClient(sandbox, {
    onCall: (c) => {
      calls++;
      byOp[c.op] = (byOp[c.op] ?? 0) + 1;
    },
  });
  const prefix = 'benchsnap';
  const claims = new ChangeClaims(redis, prefix, 7 * 86_400_000);
  const deps = {
    redis,
    prefix,
    world: null,
    api,
    log: createLogger({ level: 'warn' }),
    claims,
    ttlMs: 7 * 86_400_000,
    lockMs: 600_000,
    now: () => now,
  };
  const kinds: SnapshotKind[] = ['conversations', 'leads', 'contacts'];

  // 1. Baseline.
  const b0 = Date.now();
  await refreshSnapshot(deps, kinds);
  const baseline = { apiCalls: calls, byOp: { ...byOp }, seconds: +((Date.now() - b0) / 1000).toFixed(1) };
  const keys = await redis.keys(`${pollKeys(prefix).snapshot}:snap:*`);
  let bytes = 0;
  for (const k of keys) bytes += (await redis.memory('USAGE', k)) ?? 0;
  const tracked = CONTACTS + OPEN + PENDING + LEADS;
  const memory = { keys: keys.length, bytes, tracked, bytesPerRecord: +(bytes / tracked).toFixed(1) };
  log(
    `part C: baseline ${baseline.apiCalls} calls in ${baseline.seconds} s; ${bytes} B in ${keys.length} keys = ${memory.bytesPerRecord} B per tracked record`,
  );

  // 2. One hour of changes, refreshed every EVERY_MIN minutes.
  const ops = (scale: number): string[] =>
    Object.entries(rate)
      .flatMap(([op, n]) => Array<string>(Math.round(n * scale)).fill(op))
      .sort(() => Math.random() - 0.5);
  const used = new Set<number>();
  /** A record not touched yet in this phase (the outage moves each record once: a listing shows only the latest move). */
  const fresh = (xs: number[], distinct: boolean): number | undefined => {
    if (!distinct) return xs.length ? pick(xs) : undefined;
    for (let i = 0; i < 50; i++) {
      const x = pick(xs);
      if (x !== undefined && !used.has(x)) {
        used.add(x);
        return x;
      }
    }
    return undefined;
  };
  const apply = async (op: string, distinct: boolean): Promise<void> => {
    if (op === 'EDITS') await call('PATCH', `/contacts/${pick(contacts)}`, { name: `Renamed ${now}` });
    else if (op === 'MOVES') {
      const c = fresh(contacts, distinct);
      if (c !== undefined) await call('PUT', `/contacts/${c}/lifecycle`, { stage: pick(stages) });
    } else if (op === 'NEW') {
      const r = (await call('POST', '/_sandbox/inbound', {
        contact: { name: `New ${now}`, email: `n${now}@example.com` },
        channel_id: whatsapp,
        body: 'hello',
      })) as { conversation: { id: number; contact_id: number } };
      open.push(r.conversation.id);
      written.push(r.conversation.id);
      used.add(r.conversation.id);
    } else if (op === 'ASSIGN') {
      const t = fresh(open, distinct);
      if (t !== undefined) await call('PATCH', `/conversations/${t}`, { assignee: { type: 'user', id: pick(users) } });
    } else if (op === 'CLOSE') {
      const t = fresh(open, distinct);
      if (t === undefined) return;
      await call('PATCH', `/conversations/${t}`, { status: 'closed' });
      open.splice(open.indexOf(t), 1);
      closed.push(t);
    } else if (op === 'REOPEN') {
      const t = fresh(closed, distinct);
      if (t !== undefined) {
        await call('PATCH', `/conversations/${t}`, { status: 'open' });
        closed.splice(closed.indexOf(t), 1);
        open.push(t);
      }
      const p = fresh(pending, distinct);
      if (p !== undefined) {
        await call('PATCH', `/conversations/${p}`, { status: 'open' });
        pending.splice(pending.indexOf(p), 1);
        open.push(p);
      }
    } else if (op === 'NEWLEADS') {
      leads.push(((await call('POST', '/leads', { contact_id: pick(contacts), name: `Lead ${now}` })) as { id: number }).id);
    } else if (op === 'SETTLE') {
      const l = fresh(leads, distinct);
      if (l === undefined) return;
      await call('POST', `/_sandbox/leads/${l}/outcome`, { outcome: Math.random() < 0.5 ? 'won' : 'lost' });
      leads.splice(leads.indexOf(l), 1);
    } else if (op === 'SEND') {
      const t = fresh(
        written.filter((id) => open.includes(id)),
        false,
      );
      if (t !== undefined) await call('POST', `/conversations/${t}/messages`, { type: 'text', text: 'on it' });
    }
  };
  const hourOps = ops(1);
  const step = Math.floor(3_600_000 / hourOps.length);
  const c0 = calls;
  const hourByOp: Record<string, number> = {};
  const before = { ...byOp };
  let nextRefresh = now + EVERY_MIN * MIN;
  const hourEnd = now + 3_600_000;
  for (const op of hourOps) {
    await tick(step);
    await apply(op, false);
    if (now >= nextRefresh) {
      await refreshSnapshot(deps, kinds);
      nextRefresh += EVERY_MIN * MIN;
    }
  }
  while (nextRefresh <= hourEnd) {
    await tick(Math.max(0, nextRefresh - now));
    await refreshSnapshot(deps, kinds);
    nextRefresh += EVERY_MIN * MIN;
  }
  for (const [op, n] of Object.entries(byOp)) hourByOp[op] = n - (before[op] ?? 0);
  const perHour = calls - c0;
  const budget = (burst: number) => burst * 360;
  const hour = {
    refreshes: Math.round(60 / EVERY_MIN),
    apiCalls: perHour,
    byOp: hourByOp,
    shareOfBudget: {
      burst30: `${((100 * perHour) / budget(30)).toFixed(2)} %`,
      burst100: `${((100 * perHour) / budget(100)).toFixed(2)} %`,
    },
  };
  log(
    `part C: an hour → ${perHour} calls (${hour.shareOfBudget.burst30} of burst 30, ${hour.shareOfBudget.burst100} of burst 100) ${JSON.stringify(hourByOp)}`,
  );

  // 3. Every change so far was received (its webhook claimed it); the journal empties on the next refresh.
  for (const e of sandbox.emitter.events()) {
    const key = changeKey(e.event, e.data);
    if (key !== null) await claims.claim(key, { deliveryKey: String(e.id), source: 'webhook', atMs: Date.parse(e.created_at) });
  }
  await tick(2 * MIN);
  const settled = await refreshSnapshot(deps, kinds);
  log(`part C: before the outage, journal ${settled.pending} pending (${settled.dropped} dropped as received)`);
  const outageStart = await clock();
  used.clear();
  const outageOps = [...ops(0.5), ...Array<string>(30).fill('SEND')].sort(() => Math.random() - 0.5);
  const outStep = Math.floor((30 * MIN) / outageOps.length);
  for (const op of outageOps) {
    await tick(outStep);
    await apply(op, true);
  }
  await tick(MIN);
  await clock();
  const emitted: Record<string, number> = {};
  for (const e of sandbox.emitter.events()) if (Date.parse(e.created_at) >= outageStart) emitted[e.event] = (emitted[e.event] ?? 0) + 1;
  const r0 = calls;
  const report = await reconcile({
    api,
    claims,
    sink: null,
    snapshot: snapshotSource(deps),
    window: { since: outageStart, until: now + 1 },
    apiCalls: () => calls,
    now: () => now,
  });
  const found = Object.fromEntries(Object.entries(report.events).map(([k, c]) => [k, c.found]));
  const kindsAll = [...new Set([...Object.keys(emitted), ...Object.keys(found)])].sort();
  const outage = {
    minutes: 30,
    ops: outageOps.length,
    reconcileCalls: calls - r0,
    rows: kindsAll.map((k) => ({
      event: k,
      emitted: emitted[k] ?? 0,
      found: found[k] ?? 0,
      received: report.events[k as keyof typeof report.events]?.received ?? 0,
    })),
    allFound: kindsAll.every((k) => (emitted[k] ?? 0) === (found[k] ?? 0)),
  };
  for (const r of outage.rows) log(`part C: outage ${r.event}: emitted ${r.emitted}, found ${r.found}`);
  redis.disconnect();
  return { workspace: { CONTACTS, OPEN, PENDING, LEADS }, everyMinutes: EVERY_MIN, rate, baseline, memory, hour, outage };
}
