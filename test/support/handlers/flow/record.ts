/**
 * Where the flow fixtures record what they ran: a Redis list when
 * FLOW_REDIS_URL and FLOW_LOG_KEY are set (worker processes), else
 * `globalThis.__syFlow` (in-process tests). Each entry is one JSON object.
 */
import { Redis } from 'ioredis';

type Entry = Record<string, unknown>;
const g = globalThis as { __syFlow?: Entry[]; __syFlowActive?: Map<string, number>; __syFlowOverlap?: string[] };
let redis: Redis | undefined;

export async function record(entry: Entry): Promise<void> {
  const url = process.env['FLOW_REDIS_URL'];
  const key = process.env['FLOW_LOG_KEY'];
  if (url && key) {
    redis ??= new Redis(url, { maxRetriesPerRequest: null });
    await redis.rpush(key, JSON.stringify({ ...entry, pid: process.pid }));
    return;
  }
  (g.__syFlow ??= []).push(entry);
}

/** Runs `fn` as the only run of `key` in this process; notes an overlap when another one is running. */
export async function exclusive(key: string, fn: () => Promise<void>): Promise<void> {
  const active = (g.__syFlowActive ??= new Map());
  if ((active.get(key) ?? 0) > 0) (g.__syFlowOverlap ??= []).push(key);
  active.set(key, (active.get(key) ?? 0) + 1);
  try {
    await fn();
  } finally {
    active.set(key, (active.get(key) ?? 1) - 1);
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
