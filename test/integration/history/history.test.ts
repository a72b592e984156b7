import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readKeptBodies } from '../../../src/history/bodies.js';
import { historyKeys } from '../../../src/history/keys.js';
import { readTrace, type Trace } from '../../../src/history/read.js';
import { MAX_ENTRY_BYTES, type AttemptEntry } from '../../../src/history/record.js';
import { conversationBody, messageBody } from '../../support/events.js';
import { sandboxCall, SANDBOX_TOKEN, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, TEST_SECRET, waitFor } from '../../support/service.js';

const HANDLERS = fileURLToPath(new URL('../../support/handlers/history', import.meta.url));

const EMAIL = 'maria.private@example.org';
const PHONE = '+44 20 7946 0958';
const SECRET_TEXT = 'my secret plan for the weekend';

/** A message.received body; `text` says what the traced-note fixture does. */
function message(conv: number, text: string): string {
  return messageBody('message.received', conv, `${text} — ${SECRET_TEXT}, call ${PHONE} or write to ${EMAIL}`);
}
const keyOf = (body: string) => (JSON.parse(body) as { id: string }).id;
const attempts = (t: Trace) => t.entries.filter((e): e is AttemptEntry => e.kind === 'attempt');

/**
 * Every byte stored under the history keys of a prefix, but the kept bodies (`hist:b:*`, KEEP_BODIES): those are the
 * bodies as received, personal data included, by design (docs/operations.md).
 */
async function historyBytes(redis: Redis, prefix: string): Promise<string> {
  const bodyKeys = historyKeys(prefix).body('');
  const keys = (await redis.keys(historyKeys(prefix).pattern)).filter((k) => !k.startsWith(bodyKeys));
  let all = '';
  for (const k of keys) {
    const type = await redis.type(k);
    if (type === 'hash') all += JSON.stringify(await redis.hgetall(k));
    else if (type === 'list') all += (await redis.lrange(k, 0, -1)).join('\n');
    else if (type === 'zset') all += (await redis.zrange(k, '0', '-1', 'WITHSCORES')).join(' ');
    else if (type === 'string') all += await redis.get(k);
    all += `\n${k}\n`;
  }
  return all;
}

async function traced(p: Pipeline, key: string, done: (t: Trace) => boolean): Promise<Trace> {
  return waitFor(
    async () => {
      const t = await readTrace(p.redis, p.prefix, key);
      return t && done(t) ? t : null;
    },
    20_000,
    50,
  );
}

describe('delivery history through the pipeline', () => {
  let p: Pipeline;
  let conv: number;
  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HANDLERS });
    conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
  });
  afterAll(async () => p?.close());

  it('records receipt, queueing, fan-out and an attempt with its step and API call', async () => {
    const body = message(conv, 'plain');
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    const key = keyOf(body);
    const t = await traced(p, key, (x) => x.handlers['traced-note'] === 'completed');
    expect(t).toMatchObject({ key, event: 'message.received', conversation: String(conv), secretIndex: 0, bytes: Buffer.byteLength(body) });
    expect(Date.parse(t.queuedAt as string)).toBeGreaterThanOrEqual(Date.parse(t.receivedAt as string));
    expect(t.entries.find((e) => e.kind === 'fanout')).toMatchObject({
      handlers: [{ id: 'traced-note', placement: 'queued', priority: 'normal' }],
    });
    const [a] = attempts(t);
    expect(a).toMatchObject({ handler: 'traced-note', attempt: 1, outcome: 'completed', steps: [{ name: 'conversation', source: 'run' }] });
    expect(a?.calls).toEqual([
      expect.objectContaining({
        op: 'notes.create',
        method: 'POST',
        path: `/conversations/${conv}/notes`,
        status: 201,
        replayed: false,
        idempotencyKey: expect.any(String) as string,
      }),
    ]);
    expect(a!.at).toBeGreaterThanOrEqual(a!.startedAt);
    // Kept HISTORY_TTL (7 days by default) from the last write.
    expect(t.expiresInMs).toBeGreaterThan(6 * 86_400_000);
    expect(await p.redis.pttl(historyKeys(p.prefix).entries(key))).toBeGreaterThan(6 * 86_400_000);
  });

  it('keeps the body exactly as received for the re-runs (KEEP_BODIES, HISTORY_TTL by default)', async () => {
    const body = message(conv, 'plain');
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    const key = keyOf(body);
    await traced(p, key, (x) => x.handlers['traced-note'] === 'completed');
    const [kept] = await readKeptBodies(p.redis, p.prefix, [key]);
    expect(kept?.toString('utf8')).toBe(body);
    expect(await p.redis.pttl(historyKeys(p.prefix).body(key))).toBeGreaterThan(6 * 86_400_000);
  });

  it('a retried run shows each attempt; the second takes the step from the store and its write is a replay with the same Idempotency-Key', async () => {
    const body = message(conv, 'retry-me');
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    const t = await traced(p, keyOf(body), (x) => x.handlers['traced-note'] === 'completed');
    const [first, second] = attempts(t);
    expect(first).toMatchObject({
      attempt: 1,
      outcome: 'retry',
      error: { class: 'Error', message: 'transient failure after writing' },
      steps: [{ name: 'conversation', source: 'run' }],
    });
    expect(second).toMatchObject({ attempt: 2, outcome: 'completed', steps: [{ name: 'conversation', source: 'stored' }] });
    expect(first?.calls[0]).toMatchObject({ status: 201, replayed: false });
    expect(second?.calls[0]).toMatchObject({ status: 201, replayed: true, idempotencyKey: first?.calls[0]?.idempotencyKey });
  });

  it('a dead-lettered run shows its failing call and the error', async () => {
    const body = message(conv, 'dead-me');
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    const t = await traced(p, keyOf(body), (x) => x.handlers['traced-note'] === 'dead');
    const [a] = attempts(t);
    expect(a).toMatchObject({ outcome: 'dead', error: { class: 'NotFoundError' } });
    expect(a?.calls.at(-1)).toMatchObject({
      method: 'POST',
      path: '/conversations/987654321/notes',
      status: 404,
      error: expect.stringMatching(/^NotFoundError/) as string,
    });
  });

  it('a run skipped by maxAge says why', async () => {
    const body = conversationBody('conversation.opened', conv, null, Date.now() - 2 * 3_600_000);
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    const t = await traced(p, keyOf(body), (x) => x.handlers['traced-fresh'] === 'skipped');
    expect(t.contact).toBe('7');
    expect(attempts(t)[0]).toMatchObject({ handler: 'traced-fresh', outcome: 'skipped', skipped: 'max_age', calls: [] });
  });

  it('an invalid delivery and a repeat are recorded', async () => {
    const bad = '{"id":"evt_hist_cut","event":"message.received","da';
    expect((await deliver(p.receiverUrl, bad)).status).toBe(202);
    const body = message(conv, 'plain');
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    expect((await deliver(p.receiverUrl, body)).status).toBe(200);
    const cut = await waitFor(async () => (await p.events.getFailed())[0]?.data.key, 10_000, 50);
    const t = await traced(p, cut, (x) => x.state === 'invalid');
    expect(t.entries[0]).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/^invalid_json/) as string });
    const dup = await traced(p, keyOf(body), (x) => x.duplicates === 1);
    expect(dup.handlers['traced-note']).toBeDefined();
  });

  it('a run with many calls stays within the per-entry cap, keeping the first and the last calls', async () => {
    const body = message(conv, 'many-calls');
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    const key = keyOf(body);
    await traced(p, key, (x) => x.handlers['traced-note'] === 'completed');
    const raw = await p.redis.lrange(historyKeys(p.prefix).entries(key), 0, -1);
    const attempt = raw.find((r) => r.includes('"kind":"attempt"')) as string;
    expect(Buffer.byteLength(attempt)).toBeLessThanOrEqual(MAX_ENTRY_BYTES);
    const a = JSON.parse(attempt) as AttemptEntry;
    expect(a.calls.length + (a.callsDropped ?? 0)).toBe(45);
    expect(a.callsDropped).toBeGreaterThan(0);
  });

  it('no secret and no personal data is in any history key', async () => {
    const body = message(conv, 'pii-me');
    expect((await deliver(p.receiverUrl, body)).status).toBe(202);
    const t = await traced(p, keyOf(body), (x) => x.handlers['traced-note'] === 'dead');
    const [a] = attempts(t);
    // The error quoted an email and a phone; the lookup's path carried an email: both masked.
    expect(a?.error?.message).toBe('cannot reach [email] or [phone]');
    expect(a?.calls[0]?.path).toBe('/contacts/email:[email]');
    const bytes = await historyBytes(p.redis, p.prefix);
    for (const s of [SANDBOX_TOKEN, TEST_SECRET, EMAIL, PHONE, SECRET_TEXT, 'alice.pii@example.com', '1234567', 'alice.pii%40'])
      expect(bytes).not.toContain(s);
  });
});

describe('history settings', () => {
  it('HISTORY_BODIES=true keeps the body, redacted', async () => {
    const p = await startPipeline({ handlersDir: HANDLERS, env: { HISTORY_BODIES: 'true' } });
    try {
      const conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
      const body = message(conv, 'plain');
      expect((await deliver(p.receiverUrl, body)).status).toBe(202);
      const t = await traced(p, keyOf(body), (x) => x.handlers['traced-note'] === 'completed');
      const kept = t.entries.find((e) => e.kind === 'body');
      expect(kept?.kind === 'body' && (JSON.parse(kept.body) as { data: { conversation_id: number } }).data.conversation_id).toBe(conv);
      const bytes = await historyBytes(p.redis, p.prefix);
      for (const s of [SANDBOX_TOKEN, TEST_SECRET, EMAIL, PHONE, SECRET_TEXT]) expect(bytes).not.toContain(s);
    } finally {
      await p.close();
    }
  });

  it('HISTORY=off writes nothing; HISTORY_TTL sets the expiry', async () => {
    const off = await startPipeline({ handlersDir: HANDLERS, env: { HISTORY: 'off' } });
    const short = await startPipeline({ handlersDir: HANDLERS, env: { HISTORY_TTL: '1h' } });
    try {
      for (const p of [off, short]) {
        const conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
        expect((await deliver(p.receiverUrl, message(conv, 'plain'))).status).toBe(202);
        await waitFor(async () => (await p.handlers.getCompletedCount()) === 1, 20_000, 50);
      }
      const body = message(((await sandboxCall(short, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number, 'plain');
      await deliver(short.receiverUrl, body);
      const t = await traced(short, keyOf(body), (x) => x.handlers['traced-note'] === 'completed');
      expect(t.expiresInMs).toBeGreaterThan(0);
      expect(t.expiresInMs).toBeLessThanOrEqual(3_600_000);
      await new Promise((r) => setTimeout(r, 200));
      expect(await off.redis.keys(historyKeys(off.prefix).pattern)).toEqual([]);
    } finally {
      await off.close();
      await short.close();
    }
  });
});
