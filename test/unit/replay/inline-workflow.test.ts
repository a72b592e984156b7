import { describe, expect, it } from 'vitest';
import { describeEntry, printableState } from '../../../src/replay/inline-workflow.js';
import type { VirtualWait } from '../../../src/worker/virtual-workflow.js';

/** The lines `replay --inline` prints for a workflow's sleeps, waits and state accesses. */
describe('describeEntry', () => {
  const sleep = (startedAt: string, due: string): VirtualWait => ({ name: 'nap', kind: 'sleep', startedAt, due, outcome: 'slept' });

  it('a sleep still to come is skipped with its due time; one already due returns at once', () => {
    expect(describeEntry({ type: 'wait', wait: sleep('2025-03-04T10:00:00.000Z', '2025-03-07T10:00:00.000Z') })).toBe(
      'sleep "nap" 3d — skipped (inline replay does not wait; due 2025-03-07T10:00:00.000Z)',
    );
    expect(describeEntry({ type: 'wait', wait: sleep('2025-03-04T10:00:00.000Z', '2025-03-04T10:00:00.000Z') })).toBe(
      'sleep "nap" 0ms — already due (2025-03-04T10:00:00.000Z): returns at once',
    );
  });

  it('a state read of nothing says so; a write says it stays in memory', () => {
    expect(describeEntry({ type: 'state', access: { op: 'get', key: 'contact:35', value: null } })).toBe(
      'state get (contact:35) → null (none set)',
    );
    expect(describeEntry({ type: 'state', access: { op: 'set', key: 'contact:35', value: { n: 1 } } })).toBe(
      'state set (contact:35) ← {"n":1} (in memory for this replay)',
    );
  });

  it('a function key holding an email is masked', () => {
    expect(describeEntry({ type: 'state', access: { op: 'get', key: 'fn:alice@example.com', value: 1 } })).toBe(
      'state get (fn:[email]) → 1',
    );
  });
});

describe('printableState', () => {
  it('masks secrets, emails and phone numbers as logs do, and cuts a long value at 200 characters', () => {
    expect(printableState({ password: 'p', contact: { email: 'a@b.example', phone: '5550100' }, text: 'ring +1 415 555 0123' })).toBe(
      '{"password":"[redacted]","contact":{"email":"[email]","phone":"[phone]"},"text":"ring [phone]"}',
    );
    const long = printableState({ list: Array.from({ length: 100 }, (_, i) => i) });
    expect(long).toHaveLength(200);
    expect(long.endsWith('…')).toBe(true);
  });
});
