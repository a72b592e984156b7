import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollKeys } from '../../../../src/sources/poll/poller.js';
import { sandboxCall, startPipeline, type Pipeline } from '../../../support/pipeline.js';
import { waitFor } from '../../../support/wait.js';
import { polledRuns } from '../../../support/handlers/polled/runs.js';

const HANDLERS = fileURLToPath(new URL('../../../support/handlers/polled', import.meta.url));
const MOVES = ['confirmed', 'preparing', 'out_for_delivery', 'delivered'] as const;

describe('polled sources: derived events from the sandbox listings, through the pipeline', () => {
  let p: Pipeline;
  /** The order the first test delivered. */
  let delivered = 0;
  const runs = (handler: string, id: number) => polledRuns().filter((r) => r.handler === handler && r.id === id);
  /** Waits until `n` more polls of `path` reached the sandbox. */
  const polls = async (path: string, n: number) => {
    const before = (await p.requests({ method: 'GET', path })).length;
    await waitFor(async () => (await p.requests({ method: 'GET', path })).length >= before + n, 20_000, 50);
  };

  beforeAll(async () => {
    polledRuns().length = 0;
    p = await startPipeline({ handlersDir: HANDLERS, env: { POLL_EVERY: '200ms' } });
    const keys = pollKeys(p.prefix);
    // The first poll takes the baseline: what exists before it is not news.
    await waitFor(async () => (await p.redis.exists(keys.ordersCursor, keys.tasksBaseline)) === 2, 20_000, 50);
  });
  afterAll(async () => {
    await p?.close();
  });

  it('a new order is order.created once; each status move is one order.status_changed run, in order; repeated polls add nothing', async () => {
    const created = await sandboxCall(p, 'POST', '/orders', { contact_id: 35, items: [{ name: 'Poster', quantity: 1, unit_price: 12 }] });
    expect(created.status).toBe(201);
    const id = (created.json.data as { id: number }).id;
    await waitFor(() => runs('order-created', id).length === 1, 20_000, 50);

    // One move per poll (a poll sees the current state: moves between two polls fold into one change),
    // without waiting for the runs, so later changes are queued while earlier ones still run: orderBy keeps them in order.
    for (const status of MOVES) {
      const moved = await sandboxCall(p, 'PATCH', `/orders/${id}/status`, { status });
      expect(moved.status).toBe(200);
      // The second poll counted from here started after the move.
      await polls('/orders', 2);
    }
    await waitFor(() => runs('order-moves', id).length >= MOVES.length, 20_000, 50);
    await polls('/orders', 3);
    // Let anything a repeated poll might have queued reach the handlers.
    await waitFor(async () => ((await p.events.getJobCounts('waiting', 'active', 'delayed')).waiting ?? 0) === 0, 10_000, 50);

    delivered = id;
    const moves = runs('order-moves', id);
    expect(moves.map((r) => r.status)).toEqual([...MOVES]);
    expect(moves.map((r) => r.previous)).toEqual(['new', ...MOVES.slice(0, -1)]);
    expect(new Set(moves.map((r) => r.key)).size).toBe(MOVES.length);
    expect(moves[0]?.key).toMatch(new RegExp(`^order\\.status_changed:${id}:.+:confirmed$`));
    expect(runs('order-created', id)).toHaveLength(1);
    expect(runs('order-created', id)[0]?.status).toBe('new');
  }, 90_000);

  it("a task is task.due once when its due_at passes on the API's clock (the sandbox clock moved forward)", async () => {
    const now = ((await (await fetch(`${p.api.url}/_sandbox/clock`)).json()) as { data: { now: string } }).data.now;
    const due = new Date(Date.parse(now) + 3_600_000).toISOString();
    const task = await sandboxCall(p, 'POST', '/tasks', { title: 'Call back', due_at: due });
    expect(task.status).toBe(201);
    const id = (task.json.data as { id: number }).id;
    await polls('/tasks', 2);
    expect(runs('task-due', id)).toHaveLength(0);

    const moved = await fetch(`${p.api.url}/_sandbox/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ advance: '2h' }),
    });
    expect(moved.status).toBe(200);
    await waitFor(() => runs('task-due', id).length === 1, 20_000, 50);
    await polls('/tasks', 3);
    expect(runs('task-due', id)).toHaveLength(1);
    expect(runs('task-due', id)[0]?.key).toBe(`task.due:${id}:${due}`);
  }, 90_000);

  it('a settled order is forgotten by the snapshot an hour after it settled; returned later, it is one change from delivered, not a new order', async () => {
    expect(delivered).toBeGreaterThan(0);
    const keys = pollKeys(p.prefix);
    expect(await p.redis.hget(keys.ordersSeen, String(delivered))).toMatch(/^delivered\|/);
    expect(await p.redis.zscore(keys.ordersSettled, String(delivered))).not.toBeNull();
    // Two hours on (the task test moved the clock): a new order moves the cursor, the delivered one falls behind.
    await fetch(`${p.api.url}/_sandbox/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ advance: '2h' }),
    });
    const other = await sandboxCall(p, 'POST', '/orders', { contact_id: 36, items: [{ name: 'Mug', quantity: 1, unit_price: 8 }] });
    const otherId = (other.json.data as { id: number }).id;
    await waitFor(() => runs('order-created', otherId).length === 1, 20_000, 50);
    await waitFor(async () => (await p.redis.hget(keys.ordersSeen, String(delivered))) === null, 20_000, 50);
    expect(await p.redis.zscore(keys.ordersSettled, String(delivered))).toBeNull();
    expect(await p.redis.hget(keys.ordersSeen, String(otherId))).toMatch(/^new\|/);

    const returned = await sandboxCall(p, 'PATCH', `/orders/${delivered}/status`, { status: 'returned' });
    expect(returned.status).toBe(200);
    await waitFor(() => runs('order-moves', delivered).length === MOVES.length + 1, 20_000, 50);
    await polls('/orders', 3);
    await waitFor(async () => ((await p.events.getJobCounts('waiting', 'active', 'delayed')).waiting ?? 0) === 0, 10_000, 50);
    expect(runs('order-moves', delivered).at(-1)).toMatchObject({ status: 'returned', previous: 'delivered' });
    expect(runs('order-moves', delivered)).toHaveLength(MOVES.length + 1);
    expect(runs('order-created', delivered)).toHaveLength(1);
    expect(p.lines.some((l) => l.includes('were not in its snapshot'))).toBe(false);
  }, 90_000);
});
