import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { jobIdFor } from '../../../src/events/envelope.js';
import { parseJobId } from '../../../src/history/keys.js';
import {
  attemptJson,
  cleanPath,
  MAX_CALLS,
  MAX_ENTRY_BYTES,
  reasonRecord,
  type AttemptEntry,
  type CallRecord,
} from '../../../src/history/record.js';
import { relative } from '../../../src/history/timeline.js';

const call = (i: number, extra: Partial<CallRecord> = {}): CallRecord => ({
  op: 'notes.create',
  method: 'POST',
  path: `/conversations/${i}/notes`,
  status: 201,
  idempotencyKey: `sy_${'k'.repeat(40)}${i}`,
  replayed: false,
  ms: 12,
  waitMs: 0,
  try: 1,
  ...extra,
});
const attempt = (calls: CallRecord[]): AttemptEntry => ({
  kind: 'attempt',
  at: 2,
  startedAt: 1,
  handler: 'h',
  attempt: 1,
  outcome: 'completed',
  steps: [{ name: 's', source: 'run' }],
  calls,
});

describe('history records', () => {
  it('job ids map back to their delivery key and handler, whatever the key holds', () => {
    for (const key of ['evt_1', 'sha256:abc', 'a/b:c%d', '100%']) {
      expect(parseJobId(jobIdFor(key))).toEqual({ key, handler: null });
      expect(parseJobId(jobIdFor(key, 'my-handler'))).toEqual({ key, handler: 'my-handler' });
    }
    expect(parseJobId('evt_1')).toBeNull();
    expect(parseJobId('b/h/conversation%3A4/1700000000000')).toBeNull();
    expect(parseJobId('d/bad%zz')).toBeNull();
  });

  it('paths are decoded with contact identifiers and personal data masked', () => {
    expect(cleanPath('/contacts/email%3Aann%40example.com/labels')).toBe('/contacts/email:[email]/labels');
    expect(cleanPath('/contacts/phone%3A5550100')).toBe('/contacts/phone:[phone]');
    expect(cleanPath('/contacts/36/labels/VIP%20customer')).toBe('/contacts/36/labels/VIP customer');
    expect(cleanPath('/search/ann%40example.com')).toBe('/search/[email]');
    expect(cleanPath('/bad/%E0%A4%A')).toBe('/bad/%E0%A4%A');
  });

  it('a reason "Name: message" gives the class; the message is masked', () => {
    expect(reasonRecord('ValidationError: email ann@example.com is taken')).toEqual({
      class: 'ValidationError',
      message: 'email [email] is taken',
    });
    expect(reasonRecord('no worker runs handler "x"')).toEqual({ class: 'reason', message: 'no worker runs handler "x"' });
  });

  it('an attempt keeps the first and the last calls past the count cap, and stays within the byte cap', () => {
    const many = Array.from({ length: 100 }, (_, i) => call(i));
    const a = JSON.parse(attemptJson(attempt(many))) as AttemptEntry;
    expect(a.calls.length).toBeLessThanOrEqual(MAX_CALLS);
    expect(a.calls.length + (a.callsDropped ?? 0)).toBe(100);
    expect(a.calls[0]?.path).toBe('/conversations/0/notes');
    expect(a.calls.at(-1)?.path).toBe('/conversations/99/notes');
    const fat = Array.from({ length: 40 }, (_, i) => call(i, { error: `E: ${'x'.repeat(190)}` }));
    const json = attemptJson(attempt(fat));
    expect(Buffer.byteLength(json)).toBeLessThanOrEqual(MAX_ENTRY_BYTES);
    const b = JSON.parse(json) as AttemptEntry;
    expect(b.calls.at(-1)?.path).toBe('/conversations/39/notes');
    expect(b.calls.length + (b.callsDropped ?? 0)).toBe(40);
    expect(JSON.parse(attemptJson(attempt([call(1)])))).toEqual(attempt([call(1)]));
  });

  it('relative times read well', () => {
    expect(relative(12.4)).toBe('+12 ms');
    expect(relative(3_450)).toBe('+3.5 s');
    expect(relative(5 * 60_000 + 2_000)).toBe('+5m 02s');
    expect(relative(2 * 3_600_000 + 10 * 60_000)).toBe('+2h 10m');
  });
});

describe('history settings', () => {
  const base = { WEBHOOK_SECRETS: 's' };
  it('defaults: on, kept 7 days, no redacted bodies, the exact bodies kept as long as the history (KEEP_BODIES)', () => {
    expect(loadConfig(base).history).toEqual({
      enabled: true,
      ttlMs: 7 * 86_400_000,
      bodies: false,
      keepBodiesMs: 7 * 86_400_000,
      keepBodiesSet: false,
    });
    expect(loadConfig({ ...base, HISTORY: 'off', HISTORY_TTL: '12h', HISTORY_BODIES: 'true' }).history).toEqual({
      enabled: false,
      ttlMs: 12 * 3_600_000,
      bodies: true,
      keepBodiesMs: 12 * 3_600_000,
      keepBodiesSet: false,
    });
  });
  it('bad values name the variable and what it expects', () => {
    expect(() => loadConfig({ ...base, HISTORY: 'maybe' })).toThrow(/HISTORY: expected on or off \(default on\), got "maybe"/);
    expect(() => loadConfig({ ...base, HISTORY_TTL: 'forever' })).toThrow(/HISTORY_TTL: expected a duration/);
    expect(() => loadConfig({ ...base, HISTORY_BODIES: 'yes please' })).toThrow(/HISTORY_BODIES: expected true or false/);
  });
});
