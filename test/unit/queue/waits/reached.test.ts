/** A run record's `t:<name>` (src/queue/waits/reached.ts): compact, read back exactly, and the previous JSON still read. */
import { describe, expect, it } from 'vitest';
import { decodeReached, encodeReached, type Reached } from '../../../../src/queue/waits/reached.js';
import { jobIdFor } from '../../../../src/events/envelope.js';

const scope = jobIdFor('evt_0123456789abcdef0123456789abcdef', 'bw-waiter');
const due = Date.parse('2026-12-03T10:00:00.123Z');
const since = Date.parse('2026-11-26T09:59:58.001Z');

describe('a reached sleep or wait in a run record', () => {
  it('a sleep and a plain wait are short (≤ 64 bytes: the record stays a listpack) and read back as they were', () => {
    const sleep: Reached = { k: 'sleep', due };
    const wait: Reached = { k: 'wait', due, since, id: `${scope}:w:reply`, ev: 'message.received', key: 'conversation:1000000' };
    for (const [r, name] of [
      [sleep, 'nap'],
      [wait, 'reply'],
    ] as const) {
      const raw = encodeReached(r, scope, name);
      expect(raw.length).toBeLessThanOrEqual(64);
      expect(decodeReached(raw, scope, name)).toEqual(r);
    }
  });

  it('a key with `|`, a wait id of its own and a function-matched wait read back as they were', () => {
    const cases: Reached[] = [
      { k: 'wait', due, since, id: `${scope}:w:x`, ev: 'message.sent', key: 'fn:h:0:a|b' },
      { k: 'wait', due, since, id: 'custom', ev: 'message.sent', key: 'conversation:1' },
      { k: 'wait', due, since, id: `${scope}:w:x`, ev: 'message.sent', key: 'any:message.sent', own: '42', n: 3 },
    ];
    for (const r of cases) expect(decodeReached(encodeReached(r, scope, 'x'), scope, 'x')).toEqual(r);
  });

  it('reads the JSON the previous layout wrote (with its id)', () => {
    const old = { k: 'wait', due, since, id: `${scope}:w:reply`, ev: 'message.received', key: 'conversation:7' };
    expect(decodeReached(JSON.stringify(old), scope, 'reply')).toEqual(old);
    expect(decodeReached(JSON.stringify({ k: 'sleep', due }), scope, 'nap')).toEqual({ k: 'sleep', due });
  });
});
