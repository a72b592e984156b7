import { describe, expect, it } from 'vitest';
import type { Permit, RateLimiter } from '../../../src/api/index.js';
import { slotYieldingLimiter } from '../../../src/clients/slot-yield.js';
import { FairPool } from '../../../src/util/fair-pool.js';
import { SlotHold } from '../../../src/util/slot-hold.js';

/** A limiter whose acquire answers what `next` says; counts the permits marked done. */
function scripted(next: () => Promise<Permit>) {
  const seen = { done: 0 };
  const limiter: RateLimiter = {
    acquire: () => next(),
    observe: async () => undefined,
    pause: async () => undefined,
    exhaustQuota: async () => undefined,
  };
  const permit = (): Permit => ({
    waitedMs: 0,
    acquiredAtMs: 0,
    done: async () => {
      seen.done++;
    },
  });
  return { limiter, permit, seen };
}

/** A slot that records what the wrapper did with it. */
function recordingSlot(resume: () => Promise<void> = async () => undefined) {
  const log: string[] = [];
  return {
    log,
    slot: {
      pause: () => log.push('pause'),
      resume: () => {
        log.push('resume');
        return resume();
      },
      pin: () => {
        log.push('pin');
        return () => log.push('unpin');
      },
    },
  };
}

const later = <T>(ms: number, v: () => T): Promise<T> => new Promise((r) => setTimeout(() => r(v()), ms));

describe('slotYieldingLimiter', () => {
  it('keeps the slot when the permit comes at once', async () => {
    const s = scripted(async () => s.permit());
    const r = recordingSlot();
    const permit = await slotYieldingLimiter(s.limiter, () => r.slot, 50).acquire();
    // Pinned while its request is in flight, unpinned when it is done.
    expect(r.log).toEqual(['pin']);
    await permit.done();
    expect(r.log).toEqual(['pin', 'unpin']);
    expect(s.seen.done).toBe(1);
  });

  it('gives the slot up while the permit is late and takes it back before returning', async () => {
    const s = scripted(() => later(80, () => s.permit()));
    const r = recordingSlot();
    await slotYieldingLimiter(s.limiter, () => r.slot, 10).acquire();
    expect(r.log).toEqual(['pause', 'resume', 'pin']);
  });

  it('takes the slot back when the late acquire fails, and passes the failure on', async () => {
    const s = scripted(() => later(40, () => Promise.reject(new Error('quota spent'))).then((p) => p));
    const r = recordingSlot();
    await expect(slotYieldingLimiter(s.limiter, () => r.slot, 10).acquire()).rejects.toThrow('quota spent');
    expect(r.log).toEqual(['pause', 'resume']);
  });

  it('marks the permit done when the run ended before it could take its slot back', async () => {
    const s = scripted(() => later(40, () => s.permit()));
    const r = recordingSlot(() => Promise.reject(new Error('the run ended')));
    await expect(slotYieldingLimiter(s.limiter, () => r.slot, 10).acquire()).rejects.toThrow('the run ended');
    expect(s.seen.done).toBe(1);
  });

  it('outside a run (no slot) is the limiter itself', async () => {
    const s = scripted(() => later(30, () => s.permit()));
    await expect(slotYieldingLimiter(s.limiter, () => undefined, 5).acquire()).resolves.toMatchObject({ waitedMs: 0 });
  });

  it('a call waiting while another call of the run is in flight past its permit keeps the slot (the run goes on meanwhile)', async () => {
    const pool = new FairPool(1);
    const owner = { id: 'a', weight: 1 };
    const run = new SlotHold(pool, owner, await pool.acquire(owner));
    let late: () => void = () => undefined;
    const gate = new Promise<void>((r) => (late = r));
    let calls = 0;
    const s = scripted(() => (++calls === 1 ? Promise.resolve(s.permit()) : gate.then(() => s.permit())));
    const limiter = slotYieldingLimiter(s.limiter, () => run, 5);
    const first = await limiter.acquire();
    const second = limiter.acquire();
    await new Promise((r) => setTimeout(r, 30));
    expect(run.held).toBe(true);
    // Once the first request is done, the second's wait gives the slot up: another workspace may use it.
    await first.done();
    const other = pool.acquire({ id: 'b', weight: 1 });
    const third = limiter.acquire();
    await new Promise((r) => setTimeout(r, 30));
    expect(run.held).toBe(false);
    (await other).release();
    late();
    await (await second).done();
    await (await third).done();
    expect(run.held).toBe(true);
    run.close();
  });

  it('a retake after the run ended rejects (the caller sees the call’s own error, not a throw)', async () => {
    const pool = new FairPool(1);
    const owner = { id: 'a', weight: 1 };
    const run = new SlotHold(pool, owner, await pool.acquire(owner));
    run.close();
    const s = scripted(() => later(20, () => Promise.reject(new Error('quota spent'))).then((p) => p));
    await expect(slotYieldingLimiter(s.limiter, () => run, 5).acquire()).rejects.toThrow('quota spent');
  });
});
