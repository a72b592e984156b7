import { describe, expect, it } from 'vitest';
import { FairPool, type Lease } from '../../../src/util/fair-pool.js';
import { SlotHold } from '../../../src/util/slot-hold.js';

const A = { id: 'a', weight: 1 };
const B = { id: 'b', weight: 1 };
const C = { id: 'c', weight: 1 };

/** Lets every settled promise's callbacks run. */
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

/** Asks for `n` slots for `owner`, labelled `<id><i>`; `order` records the labels as they are granted. */
function ask(pool: FairPool, owner: { id: string; weight: number }, n: number, order: string[], from = 0): Promise<Lease>[] {
  return Array.from({ length: n }, (_, i) =>
    pool.acquire(owner).then((lease) => {
      order.push(`${owner.id}${from + i}`);
      return lease;
    }),
  );
}

/** Releases the granted slots one by one, each after the grant it caused, until nobody waits. */
async function drain(pool: FairPool, granted: Promise<Lease>[]): Promise<void> {
  for (const p of granted) {
    (await p).release();
    await settle();
  }
  expect(pool.waiting).toBe(0);
}

describe('FairPool', () => {
  it('a lone owner uses every slot', async () => {
    const pool = new FairPool(3);
    const order: string[] = [];
    const leases = ask(pool, A, 3, order);
    await settle();
    expect(order).toEqual(['a0', 'a1', 'a2']);
    expect(pool.free).toBe(0);
    for (const l of await Promise.all(leases)) l.release();
    expect(pool.free).toBe(3);
  });

  it('a late owner gets the next free slot, not the slot after the backlog of another', async () => {
    const pool = new FairPool(1);
    const order: string[] = [];
    const held = await pool.acquire(A);
    const backlog = ask(pool, A, 5, order);
    await settle();
    const late = ask(pool, B, 1, order);
    held.release();
    await settle();
    expect(order).toEqual(['b0']);
    await drain(pool, [late[0]!, ...backlog]);
    expect(order).toEqual(['b0', 'a0', 'a1', 'a2', 'a3', 'a4']);
  });

  it('takes turns between owners that wait, first come first served inside each', async () => {
    const pool = new FairPool(1);
    const order: string[] = [];
    const held = await pool.acquire(A);
    const all = [...ask(pool, A, 3, order), ...ask(pool, B, 3, order), ...ask(pool, C, 2, order)];
    held.release();
    await settle();
    const queue = [...all];
    const granted: Promise<Lease>[] = [];
    // Release each grant in the order it was made.
    while (order.length > granted.length) {
      const label = order[granted.length]!;
      const index = { a: 0, b: 3, c: 6 }[label[0] as 'a' | 'b' | 'c'] + Number(label.slice(1));
      granted.push(queue[index]!);
      (await queue[index]!).release();
      await settle();
    }
    // A already runs one: B and C go first, then turns.
    expect(order).toEqual(['b0', 'c0', 'a0', 'b1', 'c1', 'a1', 'b2', 'a2']);
  });

  it('gives an owner of weight w that many grants per turn', async () => {
    const pool = new FairPool(1);
    const order: string[] = [];
    const heavy = { id: 'h', weight: 3 };
    const held = await pool.acquire(B);
    const hs = ask(pool, heavy, 6, order);
    const bs = ask(pool, B, 3, order);
    held.release();
    await settle();
    const byLabel = new Map<string, Promise<Lease>>([
      ...hs.map((p, i) => [`h${i}`, p] as const),
      ...bs.map((p, i) => [`b${i}`, p] as const),
    ]);
    for (let i = 0; i < 9; i++) {
      (await byLabel.get(order[i]!)!).release();
      await settle();
    }
    expect(order).toEqual(['h0', 'h1', 'h2', 'b0', 'h3', 'h4', 'h5', 'b1', 'b2']);
    expect(pool.free).toBe(1);
  });

  it('skips an owner that has nobody waiting: no slot is kept for it', async () => {
    const pool = new FairPool(2);
    const a = await pool.acquire(A);
    const b = await pool.acquire(B);
    b.release();
    expect(pool.free).toBe(1);
    const order: string[] = [];
    const more = ask(pool, A, 1, order);
    await settle();
    expect(order).toEqual(['a0']);
    a.release();
    (await more[0]!).release();
    expect(pool.free).toBe(2);
  });

  it('gives a slot back once however often release is called', async () => {
    const pool = new FairPool(2);
    const lease = await pool.acquire(A);
    lease.release();
    lease.release();
    expect(pool.free).toBe(2);
  });

  it('run gives the slot back when the function throws', async () => {
    const pool = new FairPool(1);
    await expect(pool.run(A, () => Promise.reject(new Error('handler failed')))).rejects.toThrow('handler failed');
    expect(pool.free).toBe(1);
    await expect(pool.run(B, async () => 'ok')).resolves.toBe('ok');
    expect(pool.free).toBe(1);
  });

  it('an aborted wait leaves the line: the slot goes to the next waiter, none is lost', async () => {
    const pool = new FairPool(1);
    const held = await pool.acquire(A);
    const abort = new AbortController();
    const gone = pool.acquire(B, { signal: abort.signal });
    const order: string[] = [];
    const next = ask(pool, C, 1, order);
    abort.abort(new Error('shutting down'));
    await expect(gone).rejects.toThrow('shutting down');
    held.release();
    await settle();
    expect(order).toEqual(['c0']);
    (await next[0]!).release();
    expect(pool.free).toBe(1);
    expect(pool.waiting).toBe(0);
  });

  it('puts a run taking its slot back first in its owner line', async () => {
    const pool = new FairPool(1);
    const order: string[] = [];
    const held = await pool.acquire(A);
    const queued = ask(pool, A, 2, order);
    const back = pool.acquire(A, { first: true }).then((l) => {
      order.push('a-back');
      return l;
    });
    held.release();
    await settle();
    expect(order).toEqual(['a-back']);
    await drain(pool, [back, ...queued]);
  });
});

describe('SlotHold', () => {
  it('pause lets another owner run; resume takes the slot back first in its owner line', async () => {
    const pool = new FairPool(1);
    const hold = new SlotHold(pool, A, await pool.acquire(A));
    const order: string[] = [];
    const queuedA = ask(pool, A, 1, order);
    const queuedB = ask(pool, B, 1, order);
    hold.pause();
    await settle();
    expect(order).toEqual(['b0']);
    const back = hold.resume().then(() => order.push('resumed'));
    (await queuedB[0]!).release();
    await back;
    // A's turn: the resumed run goes before A's queued one.
    expect(order).toEqual(['b0', 'resumed']);
    expect(hold.held).toBe(true);
    hold.close();
    hold.close();
    await settle();
    expect(order).toEqual(['b0', 'resumed', 'a0']);
    (await queuedA[0]!).release();
    expect(pool.free).toBe(1);
  });

  it('close while a resume waits leaves the line and keeps no slot', async () => {
    const pool = new FairPool(1);
    const hold = new SlotHold(pool, A, await pool.acquire(A));
    hold.pause();
    const other = await pool.acquire(B);
    const back = hold.resume();
    hold.close();
    await expect(back).rejects.toThrow('ended');
    other.release();
    expect(pool.free).toBe(1);
    expect(pool.waiting).toBe(0);
  });
});
