import { describe, expect, it } from 'vitest';
import type { Permit, RateLimiter } from '../../../src/api/index.js';
import { slotYieldingLimiter } from '../../../src/clients/slot-yield.js';

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
    },
  };
}

const later = <T>(ms: number, v: () => T): Promise<T> => new Promise((r) => setTimeout(() => r(v()), ms));

describe('slotYieldingLimiter', () => {
  it('keeps the slot when the permit comes at once', async () => {
    const s = scripted(async () => s.permit());
    const r = recordingSlot();
    await slotYieldingLimiter(s.limiter, () => r.slot, 50).acquire();
    expect(r.log).toEqual([]);
  });

  it('gives the slot up while the permit is late and takes it back before returning', async () => {
    const s = scripted(() => later(80, () => s.permit()));
    const r = recordingSlot();
    await slotYieldingLimiter(s.limiter, () => r.slot, 10).acquire();
    expect(r.log).toEqual(['pause', 'resume']);
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
});
