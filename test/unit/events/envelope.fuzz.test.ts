/**
 * Fuzzing of envelope parsing (`parseEnvelope`, src/events/envelope.ts): total
 * over every byte string and every JSON value, and the delivery-key rules
 * (README, "How a delivery flows") hold: the key is the envelope id when there is a usable one,
 * else `sha256:` + hex SHA-256 of the exact bytes; the same bytes always give
 * the same key; job ids derived from keys are valid BullMQ ids and injective.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jobIdFor, parseEnvelope, type Envelope } from '../../../src/events/envelope.js';

const enc = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const RUNS = { numRuns: 1_000 };

const idValue = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ minLength: 195, maxLength: 210 }),
  fc.constantFrom('', '   ', '123', 'evt_1', 'a:b/c%d'),
  fc.integer(),
  fc.double(),
  fc.constant(Number.MAX_SAFE_INTEGER + 2),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.nat(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.nat(), { maxKeys: 2 }),
);
const nameValue = fc.oneof(
  fc.constantFrom('message.received', 'lead.won', 'x', '', '  '),
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.constant(null),
  fc.constant(undefined),
);

/** Envelope-shaped objects: the canonical field names and the tolerated aliases, in any mix, plus noise. */
const envelopeLike = fc.record(
  {
    id: idValue,
    event_id: idValue,
    delivery_id: idValue,
    event: nameValue,
    type: nameValue,
    event_type: nameValue,
    data: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined)),
    payload: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined)),
    created_at: fc.oneof(fc.string({ maxLength: 30 }), fc.integer(), fc.constant(undefined)),
    extra: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: [] },
);

function expectWellFormed(env: Envelope, bytes: Uint8Array): void {
  expect(typeof env.key).toBe('string');
  expect(env.key.length).toBeGreaterThan(0);
  expect(env.key === env.id || env.key === sha(bytes)).toBe(true);
  expect(env.id === null || (env.id.trim() !== '' && env.id.length <= 200)).toBe(true);
  expect(env.name === null || (typeof env.name === 'string' && env.name.trim() !== '')).toBe(true);
  expect(env.problem === null || ['invalid_json', 'not_an_object', 'missing_event_name'].includes(env.problem)).toBe(true);
  expect(env.problem === 'missing_event_name' || env.problem === null ? true : env.name === null).toBe(true);
  const job = jobIdFor(env.key);
  expect(job).not.toContain(':');
  expect(job).not.toMatch(/^\d+$/);
}

/** The first of the fields that is neither null nor absent decides (the tolerant-parse rule). */
function firstPresent(obj: Record<string, unknown>, fields: string[]): unknown {
  for (const f of fields) if (obj[f] !== undefined && obj[f] !== null) return obj[f];
  return undefined;
}

describe('parseEnvelope (fuzzed)', () => {
  it('never throws on arbitrary bytes (invalid UTF-8 included) and is deterministic', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (b) => {
        const a = parseEnvelope(b);
        expectWellFormed(a, b);
        expect(parseEnvelope(new Uint8Array(b)).key).toBe(a.key);
      }),
      RUNS,
    );
  });

  it('never throws on any JSON value, and classifies non-objects and missing names', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
        const b = enc(JSON.stringify(v));
        const env = parseEnvelope(b);
        expectWellFormed(env, b);
        if (typeof v !== 'object' || v === null || Array.isArray(v)) {
          expect(env).toMatchObject({ problem: 'not_an_object', key: sha(b), id: null, name: null });
        }
      }),
      RUNS,
    );
  });

  it('key rules hold for envelope-shaped objects with aliases and junk values', () => {
    fc.assert(
      fc.property(envelopeLike, fc.boolean(), (obj, pretty) => {
        const text = JSON.stringify(obj, null, pretty ? 2 : undefined);
        const b = enc(text);
        const env = parseEnvelope(b);
        expectWellFormed(env, b);
        const parsed = JSON.parse(text) as Record<string, unknown>;
        // event_id / delivery_id first; a bare id only when the resource sits apart in data/payload.
        const isUsable = (v: unknown) =>
          (typeof v === 'string' && v.trim() !== '' && v.length <= 200) || (typeof v === 'number' && Number.isSafeInteger(v));
        const eventId = firstPresent(parsed, ['event_id', 'delivery_id']);
        const hasData = firstPresent(parsed, ['data', 'payload']) !== undefined;
        const rawId = isUsable(eventId) ? eventId : hasData ? parsed['id'] : undefined;
        const usable = isUsable(rawId);
        expect(env.key).toBe(usable ? String(rawId) : sha(b));
        const rawName = firstPresent(parsed, ['event', 'type', 'event_type']);
        const name = typeof rawName === 'string' && rawName.trim() !== '' ? rawName : null;
        expect(env.name).toBe(name);
        expect(env.problem).toBe(name === null ? 'missing_event_name' : null);
        // With a usable id the key does not depend on formatting; without one it is the hash of the exact bytes.
        const other = enc(JSON.stringify(parsed, null, pretty ? undefined : 2));
        if (usable) expect(parseEnvelope(other).key).toBe(env.key);
        else if (text !== JSON.stringify(parsed, null, pretty ? undefined : 2)) expect(parseEnvelope(other).key).not.toBe(env.key);
      }),
      RUNS,
    );
  });

  it('a text argument that differs from the bytes does not throw either (the route passes both)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), fc.string({ maxLength: 100 }), (b, t) => {
        expectWellFormed(parseEnvelope(b, t), b);
      }),
      { numRuns: 300 },
    );
  });

  it('deeply nested JSON is a verdict, not a stack overflow', () => {
    for (const depth of [1_000, 10_000, 100_000]) {
      const b = enc(`{"id":"evt_deep_${depth}","event":"message.received","data":${'['.repeat(depth)}${']'.repeat(depth)}}`);
      expect(() => parseEnvelope(b)).not.toThrow();
    }
  });

  it('job ids are injective over keys (distinct keys never share a job id, with or without a handler id)', () => {
    const key = fc.oneof(fc.string({ maxLength: 12 }), fc.stringMatching(/^[a-z0-9:%/]{0,8}$/));
    fc.assert(
      fc.property(key, key, fc.option(key, { nil: undefined }), fc.option(key, { nil: undefined }), (k1, k2, h1, h2) => {
        fc.pre(k1 !== k2 || h1 !== h2);
        expect(jobIdFor(k1, h1)).not.toBe(jobIdFor(k2, h2));
      }),
      { numRuns: 2_000 },
    );
  });
});
