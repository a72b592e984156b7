import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { waitsCommand } from '../../../src/cli/waits.js';
import { RunRecords } from '../../../src/queue/waits/runs.js';
import { memoryIo } from '../../support/io.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';

describe('switchyard waits (real Redis)', () => {
  const redis = new Redis(testRedisUrl());
  afterAll(() => redis.disconnect());

  it('lists the parked runs soonest due first, as a table and as JSON; none: says so', async () => {
    const prefix = uniquePrefix('waits');
    const env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: prefix };
    let io = memoryIo(env);
    expect(await waitsCommand.run([], io)).toBe(0);
    expect(io.out()).toBe('no run is sleeping or waiting\n');
    const records = new RunRecords(redis, prefix);
    const now = Date.now();
    await records.save('d/evt_2/follow-up', new Map([['t:reply', '{}']]), 60_000, {
      scope: 'd/evt_2/follow-up', name: 'reply', handler: 'follow-up', deliveryKey: 'evt_2', kind: 'wait-for-event', dueAt: now + 3_600_000,
      event: 'message.received', key: 'conversation:42', queue: 'handlers', jobId: 'd/evt_2/follow-up',
    });
    await records.save('d/evt_1/nudge', new Map(), 60_000, {
      scope: 'd/evt_1/nudge', name: 'nap', handler: 'nudge', deliveryKey: 'evt_1', kind: 'sleep', dueAt: now + 60_000, queue: 'handlers', jobId: 'd/evt_1/nudge',
    });
    io = memoryIo(env);
    expect(await waitsCommand.run([], io)).toBe(0);
    const lines = io.out().trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+HANDLER\s+DELIVERY\s+KIND\s+FOR\s+DUE$/);
    expect(lines[1]).toMatch(/^nap\s+nudge\s+evt_1\s+sleep\s+-\s+\S+ \(in 60s\)$/);
    expect(lines[2]).toMatch(/^reply\s+follow-up\s+evt_2\s+wait\s+message\.received on conversation:42\s+\S+ \(in 60m\)$/);
    io = memoryIo(env);
    await waitsCommand.run(['--json'], io);
    expect(io.out().trim().split('\n').map((l) => (JSON.parse(l) as { name: string }).name)).toEqual(['nap', 'reply']);
    // A run that resumes leaves the list.
    await records.save('d/evt_1/nudge', new Map(), 60_000, null);
    expect((await records.parked()).map((r) => r.name)).toEqual(['reply']);
  });
});
