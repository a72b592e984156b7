import { describe, expect, it } from 'vitest';
import type { Permit, RateLimiter } from '../../../../src/api/rate-limiter.js';
import type { StoredDelivery } from '../../../../src/queue/delivery.js';
import { budgetedLimiter } from '../../../../src/clients/budget.js';
import { formatReport, reconcile } from '../../../../src/sources/reconcile/run.js';
import { createSandbox } from '../../../../src/sandbox/index.js';
import { sandboxClient } from '../../../../src/testing/sandbox-api.js';

/** Claims and an ingest sink in memory: a put of a key seen before is a duplicate, as IngestStore answers. */
function memoryStore(claimed: Set<string> = new Set()) {
  const stored = new Map<string, StoredDelivery>();
  return {
    stored,
    claimed,
    claims: { claimed: async (keys: readonly string[]) => keys.map((k) => claimed.has(k)) },
    sink: { put: async (d: StoredDelivery) => (stored.has(d.key) ? ('duplicate' as const) : (stored.set(d.key, d), 'accepted' as const)) },
  };
}

async function hook(sandbox: ReturnType<typeof createSandbox>, path: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await sandbox.app.fetch(
    new Request(`http://sandbox/_sandbox${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );
  return (await r.json()) as Record<string, unknown>;
}

describe('reconcile against an in-process sandbox', () => {
  it("finds the window's changes, enqueues those not received, and a second run finds them pending", async () => {
    const sandbox = createSandbox({ burst: 1000 });
    const since = Date.now() - 1;
    const ws = (
      (await (await sandbox.app.fetch(new Request('http://sandbox/_sandbox/workspaces'))).json()) as {
        data: { channels: { id: number }[] }[];
      }
    ).data[0];
    await hook(sandbox, '/inbound', {
      contact: { name: 'Night Owl', email: 'owl@example.com' },
      channel_id: ws?.channels[0]?.id,
      body: 'hello?',
    });
    const until = Date.now() + 1;
    let calls = 0;
    const api = sandboxClient(sandbox, {
      onCall: () => {
        calls++;
      },
    });
    const store = memoryStore();
    const report = await reconcile({ api, claims: store.claims, sink: store.sink, window: { since, until }, apiCalls: () => calls });
    expect(report.events['message.received']).toMatchObject({ found: 1, received: 0, enqueued: 1, pending: 0 });
    expect(report.events['conversation.created']).toMatchObject({ found: 1, enqueued: 1 });
    expect(report.events['contact.created']).toMatchObject({ found: 1, enqueued: 1 });
    expect(report.totals).toEqual({ found: 3, received: 0, enqueued: 3, pending: 0 });
    expect(report.apiCalls).toBe(calls);
    expect([...store.stored.values()].every((d) => d.source === 'reconcile' && d.key.startsWith('rc:'))).toBe(true);

    const again = await reconcile({ api, claims: store.claims, sink: store.sink, window: { since, until } });
    expect(again.totals).toEqual({ found: 3, received: 0, enqueued: 0, pending: 3 });

    // Once dispatched (claimed), the changes count as received.
    for (const d of store.stored.values()) store.claimed.add(d.key.slice(3));
    const third = await reconcile({ api, claims: store.claims, sink: store.sink, window: { since, until } });
    expect(third.totals).toEqual({ found: 3, received: 3, enqueued: 0, pending: 0 });
    expect(formatReport(third)).toMatch(/3 found, 3 already received, 0 enqueued, 0 pending/);
  });

  it('a dry run stores nothing; --events narrows the walk to what those events need', async () => {
    const sandbox = createSandbox({ burst: 1000 });
    const since = Date.now() - 1;
    await sandbox.app.fetch(
      new Request('http://sandbox/api/v1/contacts', {
        method: 'POST',
        headers: { authorization: `Bearer ${sandbox.tokens[0]?.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Ann' }),
      }),
    );
    let calls = 0;
    const api = sandboxClient(sandbox, {
      onCall: () => {
        calls++;
      },
    });
    const store = memoryStore();
    const report = await reconcile({
      api,
      claims: store.claims,
      sink: null,
      window: { since, until: Date.now() + 1 },
      events: ['contact.created'],
      apiCalls: () => calls,
    });
    expect(report.dryRun).toBe(true);
    expect(Object.keys(report.events)).toEqual(['contact.created']);
    expect(report.events['contact.created']).toMatchObject({ found: 1, enqueued: 1 });
    expect(store.stored.size).toBe(0);
    // One page of contacts created in the window, nothing else listed.
    expect(report.apiCalls).toBe(1);
    expect(formatReport(report)).toMatch(/dry run: nothing enqueued[\s\S]*MISSING/);
  });
});

describe("reconcile with the snapshot's changes", () => {
  it('enqueues a snapshot change not received under a key naming its state-before time, forgets received ones, and names untracked events', async () => {
    const sandbox = createSandbox({ burst: 1000 });
    const api = sandboxClient(sandbox);
    const stored = new Map<string, StoredDelivery>();
    const forgotten: string[] = [];
    const change = (id: number, afterMs: number) => ({
      event: 'conversation.assigned' as const,
      changeKey: `conversation.assigned:${id}:user:7`,
      resourceId: String(id),
      afterMs,
      observedMs: 2_000,
      data: { id, contact_id: 1, status: 'open', assignee: { type: 'user', id: 7 } },
    });
    const snapshot = {
      changes: async () => ({ changes: [change(1, 1_000), change(2, 1_000)], untracked: ['contact.lifecycle_changed' as const] }),
      forget: async (cs: readonly { changeKey: string }[]) => {
        forgotten.push(...cs.map((c) => c.changeKey));
      },
    };
    const claims = {
      claimed: async (keys: readonly string[]) => keys.map(() => false),
      received: async (cs: readonly { changeKey: string; afterMs: number | null; deliveryKey: string }[]) =>
        cs.map((c) => c.changeKey.includes(':2:')),
    };
    const sink = {
      put: async (d: StoredDelivery) => (stored.has(d.key) ? ('duplicate' as const) : (stored.set(d.key, d), 'accepted' as const)),
    };
    const window = { since: 0, until: Date.now() + 1 };
    const events = ['conversation.assigned', 'contact.lifecycle_changed'] as const;
    const report = await reconcile({ api, claims, sink, snapshot, window, events: [...events], world: 'w' });
    expect(report.events['conversation.assigned']).toMatchObject({ found: 2, received: 1, enqueued: 1, pending: 0, examples: ['1'] });
    expect(report.untracked).toEqual(['contact.lifecycle_changed']);
    expect([...stored.keys()]).toEqual(['rc:@w:conversation.assigned:1:user:7~1000']);
    const body = JSON.parse(String([...stored.values()][0]?.body)) as Record<string, unknown>;
    expect(body).toMatchObject({ event: 'conversation.assigned', data: { id: 1, assignee: { type: 'user', id: 7 } } });
    expect(body).not.toHaveProperty('created_at');
    expect(forgotten).toEqual(['conversation.assigned:2:user:7']);
    expect(formatReport(report)).toMatch(/not tracked by the snapshot .*: contact.lifecycle_changed/);
    // A second run before fan-out: the same key, an ingest duplicate (pending).
    expect(
      (await reconcile({ api, claims, sink, snapshot, window, events: [...events], world: 'w' })).events['conversation.assigned'],
    ).toMatchObject({ enqueued: 0, pending: 1 });
  });
});

describe('budgetedLimiter', () => {
  const permit = (log: string[], name: string): Permit => ({
    waitedMs: 1,
    acquiredAtMs: 0,
    done: async () => {
      log.push(`${name} done`);
    },
  });

  it("takes reconcile's own slot first, then the shared one at the caller's priority; gives both back", async () => {
    const log: string[] = [];
    const stub = (name: string, fail = false): RateLimiter => ({
      acquire: async (_s, priority) => {
        log.push(`${name} ${priority}`);
        if (fail) throw new Error('quota');
        return permit(log, name);
      },
      observe: async () => {
        log.push(`${name} observe`);
      },
      pause: async () => {},
      exhaustQuota: async () => {},
    });
    const l = budgetedLimiter(stub('shared'), stub('budget'));
    const p = await l.acquire(undefined, 'low');
    expect(p.waitedMs).toBe(2);
    await p.done();
    await l.observe({ acquiredAtMs: 0, remaining: 3 });
    expect(log).toEqual(['budget low', 'shared low', 'shared done', 'budget done', 'shared observe']);

    // Reconcile's listings go first inside the budget window, still low at the shared limiter.
    log.length = 0;
    await (await budgetedLimiter(stub('shared'), stub('budget'), 'high').acquire(undefined, 'low')).done();
    expect(log).toEqual(['budget high', 'shared low', 'shared done', 'budget done']);

    log.length = 0;
    const failing = budgetedLimiter(stub('shared', true), stub('budget'));
    await expect(failing.acquire(undefined, 'low')).rejects.toThrow('quota');
    expect(log).toEqual(['budget low', 'shared low', 'budget done']);
  });
});
