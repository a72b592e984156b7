import { describe, expect, it } from 'vitest';
import { closest } from '../../../src/util/closest.js';
import { sleep } from '../../../src/util/sleep.js';

describe('closest', () => {
  const names = ['message.received', 'message.sent', 'lead.won', 'lead.lost'] as const;

  it('suggests the nearest candidate, counting an adjacent swap as one edit and ignoring case', () => {
    expect(closest('message.recieved', names)).toBe('message.received');
    expect(closest('LEAD.WON', names)).toBe('lead.won');
  });

  it('suggests nothing when every candidate is further than max(2, a quarter of the input)', () => {
    expect(closest('contact.created', names)).toBeNull();
    expect(closest('xyz', [])).toBeNull();
  });

  it('gives a tie to the earlier candidate', () => {
    expect(closest('lead.wot', names)).toBe('lead.won');
    expect(closest('lead.wot', ['lead.lot', 'lead.won'])).toBe('lead.lot');
  });
});

describe('sleep', () => {
  it('resolves after the wait', async () => {
    const started = performance.now();
    await sleep(20);
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
  });

  it('rejects with the signal’s reason when aborted during the wait, without waiting it out', async () => {
    const ac = new AbortController();
    const reason = new Error('stopping');
    const started = performance.now();
    const waiting = sleep(60_000, ac.signal);
    ac.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const reason = new Error('already');
    await expect(sleep(60_000, AbortSignal.abort(reason))).rejects.toBe(reason);
  });
});
