// bench/flow: what the two fixture handlers do on each run (shared, so the
// ordered and the unordered handler cost exactly the same): RPUSH a `start`
// entry, fail the first attempt of FLOW_FAIL_PCT % of the (conversation, seq)
// pairs (a `fail` entry, then throw), else RPUSH a `done` entry. Entries go to
// the Redis list FLOW_LOG_KEY on FLOW_REDIS_URL: {at, conv, seq, attempt, pid, t}.
// No API calls.
import { Redis } from 'ioredis';

let redis: Redis | undefined;

function push(entry: Record<string, unknown>): Promise<number> {
  const url = process.env['FLOW_REDIS_URL'];
  const key = process.env['FLOW_LOG_KEY'];
  if (!url || !key) throw new Error('FLOW_REDIS_URL and FLOW_LOG_KEY must be set');
  redis ??= new Redis(url, { maxRetriesPerRequest: null });
  return redis.rpush(key, JSON.stringify({ ...entry, pid: process.pid, t: Date.now() }));
}

/** Deterministic: the same pairs fail in every run and every process. */
export function failsFirst(conv: number, seq: number, pct: number): boolean {
  return pct > 0 && (conv * 7919 + seq * 104_729) % 100 < pct;
}

export async function benchRun(event: { data: { conversation_id: number; body: string } }, attempt: number): Promise<void> {
  const conv = event.data.conversation_id;
  const seq = Number(event.data.body);
  await push({ at: 'start', conv, seq, attempt });
  if (attempt === 1 && failsFirst(conv, seq, Number(process.env['FLOW_FAIL_PCT'] ?? 0))) {
    await push({ at: 'fail', conv, seq, attempt });
    throw new Error(`bench: failing conv ${conv} seq ${seq} once`);
  }
  await push({ at: 'done', conv, seq, attempt });
}
