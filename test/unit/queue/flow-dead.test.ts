import { describe, expect, test } from 'vitest';
import { defineHandler } from '../../../src/handler/define.js';
import { deadRunAction } from '../../../src/queue/flow-dead.js';
import type { OrderRef } from '../../../src/queue/jobs.js';

/** The one onDead decision: what a run dead for good does to its key's line (processor and 'failed' listener alike). */
describe('deadRunAction', () => {
  const order: OrderRef = { key: 'conversation:7', member: '000000000000001|d/evt/h', at: 1 };
  const ordered = (onDead?: 'release' | 'block') =>
    defineHandler({ id: 'h', on: ['message.sent'], orderBy: 'conversation', ...(onDead ? { onDead } : {}), handle: async () => {} });

  test('an ordered run releases its key by default and with onDead: release', () => {
    expect(deadRunAction({ order }, ordered())).toBe('release');
    expect(deadRunAction({ order }, ordered('release'))).toBe('release');
  });

  test('onDead: block holds the key until the dead run is retried or purged', () => {
    expect(deadRunAction({ order }, ordered('block'))).toBe('hold');
  });

  test('a run of a handler no longer known releases its key (nothing would retry it in its place)', () => {
    expect(deadRunAction({ order }, undefined)).toBe('release');
  });

  test('a run with no order line has nothing to release, whatever its handler says', () => {
    expect(deadRunAction({}, ordered('block'))).toBe('none');
    expect(deadRunAction({}, undefined)).toBe('none');
  });
});
