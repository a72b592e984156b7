// bench/fair: many workspaces in one deployment sharing the workers fairly (issue 35 item 4).
//
// Processes: a fresh redis-server; the sandbox in this process on a loopback port, one sandbox workspace per
// Switchyard workspace (each its own token, webhook URL and secret); `switchyard serve` and one `switchyard work`
// (the built CLI) with WORKSPACES_FILE naming every workspace. Handlers (bench/fair/handlers): flood-note (one
// note per conversation.closed, priority high) and the shipped away-reply (high: 1 read + 1 send), so both
// compete for the same pool of WORKER_CONCURRENCY slots.
//
// Part a: workspace A (burst BURST_A) and B. WARMUP messages of B not counted; then B alone: MESSAGES inbound messages at RATE a second in B's
// sandbox workspace (each a new customer; the sandbox sends message.received to B's URL; away-reply answers).
// Then A floods FLOOD conversation.closed deliveries (signed and posted to /webhooks/a), and once they are all
// in and A's budget is busy, B sends MESSAGES more. Reported: B's away-reply latency (the inbound hook's call
// at the sandbox → the reply written there) alone and during the flood (p50/p95/p99, ratio and difference of
// p99), and A's calls in each whole 10 s window of B's window ÷ BURST_A (use of A's own budget).
//
// Part b: WORKSPACES workspaces, PER deliveries each (flood-note lingering LINGER_MS after its call, so the
// slots are the bottleneck, not the budgets), posted interleaved (ORDER=interleaved: the i-th of every workspace,
// then the next) or workspace after workspace (ORDER=blocks). Reported: each workspace's finish time (its last
// note written) from the first post and from its own first post, max/min and the spread (max ÷ min − 1), notes
// written per workspace.
//
// Knobs: PART=a|b|ab FLOOD=10000 MESSAGES=20 WARMUP=3 RATE=0.5 BURST_A=30 BURST_B=30 WORKSPACES=20 PER=100
//        LINGER_MS=200 CONCURRENCY=10 ORDER=interleaved|blocks SKIP_BUILD=1 RESULTS=out.json
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sign } from '../../src/events/signature.js';
import { buildDelivery } from '../../src/replay/build.js';
import { createSandbox, type SandboxWorkspace } from '../../src/sandbox/index.js';
import type { LoggedRequest } from '../../src/sandbox/request-log.js';
import { BIN, build, freePort, log, machine, pool, runBench, sleep, start, startRedis, stop, until, httpOk } from '../lib/proc.js';
import { liveCustomers, summary } from '../lib/live.js';
import { harvester } from '../lib/request-log.js';

const env = (name: string, def: number) => Number(process.env[name] ?? def);
const PART = process.env.PART ?? 'ab';
const FLOOD = env('FLOOD', 10_000);
const MESSAGES = env('MESSAGES', 20);
const WARMUP = env('WARMUP', 3);
const RATE = env('RATE', 0.5);
const BURST_A = env('BURST_A', 30);
const BURST_B = env('BURST_B', 30);
const WORKSPACES = env('WORKSPACES', 20);
const PER = env('PER', 100);
const LINGER_MS = env('LINGER_MS', 200);
const CONCURRENCY = env('CONCURRENCY', 10);
const ORDER = process.env.ORDER ?? 'interleaved';
const HANDLERS = fileURLToPath(new URL('./handlers', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'switchyard-bench-fair-'));

/** One Switchyard workspace and its sandbox workspace. */
interface Ws {
  readonly id: string;
  readonly token: string;
  readonly secret: string;
  readonly burst: number;
  /** Its sandbox workspace's events go to its webhook URL (B's inbound messages). */
  readonly events?: boolean;
}

/** A deployment: the sandbox, `serve` and one `work` on WORKSPACES_FILE. */
async function deployment(list: Ws[], settings: Record<string, string>) {
  const redis = await startRedis(scratch);
  const port = await freePort();
  const hook = (w: Ws) => `http://127.0.0.1:${port}/webhooks/${w.id}`;
  const sandbox = createSandbox({
    burst: 1_000_000,
    workspaces: list.map((w, i): SandboxWorkspace => ({
      ...(i >= 2 ? { key: w.id } : {}),
      token: w.token,
      ...(w.events ? { webhookUrl: hook(w), secret: w.secret } : {}),
    })),
  });
  const api = await sandbox.listen(0);
  const file = join(scratch, `workspaces-${list.length}.json`);
  const spec = list.map((w) => ({ id: w.id, apiUrl: api.baseUrl, token: w.token, secrets: [w.secret], burst: w.burst }));
  writeFileSync(file, JSON.stringify({ workspaces: spec }));
  const common = {
    REDIS_URL: redis.url,
    QUEUE_PREFIX: 'benchfair',
    WORKSPACES_FILE: file,
    HANDLERS_DIR: HANDLERS,
    LOG_LEVEL: 'warn',
    WORKER_CONCURRENCY: String(CONCURRENCY),
    ...settings,
  };
  const receiver = start(process.execPath, [BIN, 'serve'], { name: 'serve', env: { ...common, PORT: String(port), HOST: '127.0.0.1' } });
  await until('receiver', () => httpOk(`http://127.0.0.1:${port}/healthz`), 30_000, 200);
  const worker = start(process.execPath, [BIN, 'work'], { name: 'work', env: common });
  const requests = harvester(() => sandbox.state.log.list());
  const firstPost = new Map<string, number>();
  return {
    api,
    sandbox,
    requests,
    hook,
    /** Posts each item's conversation.closed delivery (item i of a workspace: its own closed_at, so its own change). */
    async flood(items: readonly { w: Ws; i: number; conv: number }[], concurrency = 16): Promise<void> {
      const base = Date.now() - 86_400_000;
      await pool([...items], concurrency, async ({ w, i, conv }) => {
        const closedAt = new Date(base + i * 1000).toISOString();
        const built = buildDelivery('conversation.closed', { sets: [`data.id=${conv}`, `data.closed_at=${closedAt}`] });
        const r = await fetch(hook(w), {
          method: 'POST',
          body: built.bytes,
          headers: { 'content-type': 'application/json', 'x-service-signature': sign(w.secret, built.bytes) },
        });
        if (r.status !== 202) throw new Error(`${w.id} delivery ${i}: ${r.status} ${await r.text()}`);
        firstPost.set(w.id, Math.min(firstPost.get(w.id) ?? Infinity, Date.now()));
      });
    },
    /** When each workspace's first delivery was accepted. */
    firstPost,
    async call(method: string, path: string, token: string, body?: unknown): Promise<{ data?: unknown }> {
      const r = await fetch(`${path.startsWith('/_sandbox') ? api.url : api.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await r.text();
      if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${text.slice(0, 200)}`);
      return text ? (JSON.parse(text) as { data?: unknown }) : {};
    },
    async close(): Promise<void> {
      requests.stop();
      await stop(worker, 5_000);
      await stop(receiver, 5_000);
      await api.close();
      await stop(redis.child, 5_000);
    },
  };
}

type Deployment = Awaited<ReturnType<typeof deployment>>;

const tokenOf = (e: LoggedRequest) => e.token?.hash ?? '';
const notes = (entries: LoggedRequest[], prefix: string) =>
  entries.filter(
    (e) =>
      e.method === 'POST' && /\/notes$/.test(e.path) && e.status === 201 && String((e.body as { body?: string })?.body).startsWith(prefix),
  );

/** A day on which the sandbox's time is outside business hours (away-reply answers). */
function closedHours(): string {
  const openDay = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][(new Date().getUTCDay() + 2) % 7] as string;
  return `${openDay} 09:00-17:00 UTC`;
}

/** B's `count` inbound messages at RATE, each a new customer; resolves with each conversation's send time. */
async function customers(
  d: Deployment,
  workspace: string,
  channel: number,
  tokenB: string,
  count = MESSAGES,
): Promise<Map<number, number>> {
  let sent = 0;
  const live = liveCustomers(async (n) => {
    if (sent >= count) return undefined;
    sent++;
    const r = (await d
      .call('POST', '/_sandbox/inbound', tokenB, {
        workspace,
        contact: { name: `Live ${workspace} ${n}` },
        channel_id: channel,
        body: 'hello?',
      })
      .catch((err: unknown) => (log(String(err)), {}))) as { data?: { conversation?: { id: number } } };
    return r.data?.conversation?.id;
  }, RATE);
  await until('the messages sent', async () => sent >= count, 600_000, 100);
  await live.stop();
  return live.sentAt;
}

/** Reply latency of the conversations in `sentAt`: send → the away reply written in the sandbox. */
function latencies(entries: LoggedRequest[], sentAt: Map<number, number>): number[] {
  return entries
    .filter((e) => e.method === 'POST' && /^\/conversations\/\d+\/messages$/.test(e.path) && e.status === 201)
    .flatMap((e) => {
      const t0 = sentAt.get(Number(/(\d+)\/messages$/.exec(e.path)?.[1]));
      return t0 === undefined ? [] : [Date.parse(e.time) - t0];
    });
}

async function partA(): Promise<Record<string, unknown>> {
  const A: Ws = { id: 'a', token: 'sbx_full_acme', secret: 'bench-fair-a', burst: BURST_A };
  const B: Ws = { id: 'b', token: 'sbx_full_other', secret: 'bench-fair-b', burst: BURST_B, events: true };
  const d = await deployment([A, B], { BUSINESS_HOURS: closedHours() });
  try {
    const worlds = (await d.call('GET', '/_sandbox/workspaces', A.token)).data as {
      key: string;
      channels: { id: number; type: string }[];
    }[];
    const channel = worlds.find((w) => w.key === 'other')?.channels.find((c) => c.type === 'whatsapp')?.id as number;
    const convA = ((await d.call('GET', '/conversations?per_page=1', A.token)).data as { id: number }[])[0]?.id as number;
    await sleep(3_000);
    const waitReplies = async (sentAt: Map<number, number>) =>
      until(
        'the away replies',
        async () => (d.requests.harvest(), latencies(d.requests.entries(), sentAt).length >= sentAt.size),
        120_000,
        200,
      );

    // A few replies first, not counted: the baseline is of a warm worker, as the flood's is.
    await waitReplies(await customers(d, 'other', channel, B.token, WARMUP));
    log(`part a: B alone, ${MESSAGES} messages`);
    const alone = await customers(d, 'other', channel, B.token);
    await waitReplies(alone);

    log(`part a: A floods ${FLOOD}`);
    const f0 = Date.now();
    await d.flood(Array.from({ length: FLOOD }, (_, i) => ({ w: A, i, conv: convA })));
    const f1 = Date.now();
    log(`part a: ${FLOOD} posted in ${((f1 - f0) / 1000).toFixed(1)} s; B sends ${MESSAGES} more`);
    const w0 = Date.now();
    const during = await customers(d, 'other', channel, B.token);
    await waitReplies(during);
    const w1 = Date.now();
    d.requests.harvest();
    const entries = d.requests.entries();
    const aNotes = notes(entries, 'flood ').filter((e) => tokenOf(e) === tokenHashOf(entries, 'flood '));
    const aTimes = aNotes.map((e) => Date.parse(e.time)).sort((x, y) => x - y);
    const windows: number[] = [];
    for (let t = w0; t + 10_000 <= w1; t += 10_000) windows.push(aTimes.filter((x) => x >= t && x < t + 10_000).length);
    const mean = windows.reduce((x, y) => x + y, 0) / Math.max(1, windows.length);
    const lAlone = summary(latencies(entries, alone));
    const lDuring = summary(latencies(entries, during));
    return {
      flood: { deliveries: FLOOD, postedSeconds: +((f1 - f0) / 1000).toFixed(1), notesWrittenByEnd: aNotes.length },
      awayReplyMs: {
        alone: lAlone,
        duringFlood: lDuring,
        p99Ratio: +(lDuring.p99 / lAlone.p99).toFixed(2),
        p99DifferenceMs: lDuring.p99 - lAlone.p99,
      },
      aBudgetDuringB: {
        windowSeconds: +((w1 - w0) / 1000).toFixed(1),
        burst: BURST_A,
        per10s: windows,
        meanPer10s: +mean.toFixed(2),
        use: +(mean / BURST_A).toFixed(3),
        minUse: +(Math.min(...windows) / BURST_A).toFixed(3),
      },
      status429: entries.filter((e) => e.status === 429).length,
      requestLogGap: d.requests.gap(),
    };
  } finally {
    await d.close();
  }
}

/** The token hash of the notes starting with `prefix` (the flood is A's only). */
function tokenHashOf(entries: LoggedRequest[], prefix: string): string {
  return tokenOf(notes(entries, prefix)[0] as LoggedRequest);
}

async function partB(): Promise<Record<string, unknown>> {
  const list: Ws[] = Array.from({ length: WORKSPACES }, (_, i) => {
    const id = `w${String(i + 1).padStart(2, '0')}`;
    const token = i === 0 ? 'sbx_full_acme' : i === 1 ? 'sbx_full_other' : `sbx_full_${id}`;
    return { id, token, secret: `bench-fair-${id}`, burst: 30 };
  });
  const d = await deployment(list, { LINGER_MS: String(LINGER_MS) });
  try {
    const worlds = (await d.call('GET', '/_sandbox/workspaces', list[0]!.token)).data as {
      key: string;
      channels: { id: number; type: string }[];
    }[];
    // One conversation per workspace, opened by an inbound message in its sandbox workspace.
    const convs: number[] = [];
    for (const [i, w] of list.entries()) {
      const key = i === 0 ? 'acme' : i === 1 ? 'other' : w.id;
      const channel = worlds.find((x) => x.key === key)?.channels.find((c) => c.type === 'whatsapp')?.id;
      const r = (await d.call('POST', '/_sandbox/inbound', w.token, {
        workspace: key,
        contact: { name: `Bench ${w.id}` },
        channel_id: channel,
        body: 'hi',
      })) as {
        data?: { conversation?: { id: number } };
      };
      convs.push(r.data?.conversation?.id as number);
    }
    const hashes = new Map<string, string>();
    await sleep(3_000);
    log(`part b: ${WORKSPACES} workspaces × ${PER}`);
    const t0 = Date.now();
    const items = list.flatMap((w, k) =>
      Array.from({ length: PER }, (_, i) => ({
        w,
        i,
        conv: convs[k] as number,
        order: ORDER === 'blocks' ? k * PER + i : i * WORKSPACES + k,
      })),
    );
    await d.flood(items.sort((x, y) => x.order - y.order));
    const posted = Date.now();
    await until(
      'every note',
      async () => (d.requests.harvest(), notes(d.requests.entries(), 'flood ').length >= WORKSPACES * PER),
      600_000,
      500,
    );
    await sleep(2_000);
    d.requests.harvest();
    const entries = notes(d.requests.entries(), 'flood ');
    for (const w of list) {
      const own = entries.find((e) => /\/conversations\/(\d+)\/notes$/.exec(e.path)?.[1] === String(convs[list.indexOf(w)]));
      if (own) hashes.set(tokenOf(own), w.id);
    }
    const finish = list.map((w) => {
      const mine = entries.filter((e) => hashes.get(tokenOf(e)) === w.id);
      const last = Math.max(...mine.map((e) => Date.parse(e.time)));
      const own = d.firstPost.get(w.id) ?? t0;
      return {
        id: w.id,
        notes: mine.length,
        finishSeconds: +((last - t0) / 1000).toFixed(2),
        fromOwnFirstSeconds: +((last - own) / 1000).toFixed(2),
      };
    });
    const spread = (times: number[]) => {
      const max = Math.max(...times);
      const min = Math.min(...times);
      return { min, max, maxOverMin: +(max / min).toFixed(3), spread: +(max / min - 1).toFixed(3) };
    };
    return {
      workspaces: WORKSPACES,
      perWorkspace: PER,
      lingerMs: LINGER_MS,
      postedSeconds: +((posted - t0) / 1000).toFixed(1),
      order: ORDER,
      finishSeconds: spread(finish.map((f) => f.finishSeconds)),
      fromOwnFirstPostSeconds: spread(finish.map((f) => f.fromOwnFirstSeconds)),
      byWorkspace: finish,
      requestLogGap: d.requests.gap(),
    };
  } finally {
    await d.close();
  }
}

async function main(): Promise<void> {
  build();
  const out: Record<string, unknown> = { date: new Date().toUTCString(), machine: machine(), PART, CONCURRENCY };
  if (PART.includes('a')) out.a = await partA();
  if (PART.includes('b')) out.b = await partB();
  out.ended = new Date().toUTCString();
  const text = JSON.stringify(out, null, 2);
  console.log(text);
  if (process.env.RESULTS) writeFileSync(process.env.RESULTS, text);
}

await runBench(main, [scratch]);
process.exit(process.exitCode ?? 0);
