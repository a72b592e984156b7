import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bodyKey, jobIdFor, parseEnvelope, parseJobId } from '../../../src/events/envelope.js';

const bytes = (s: string) => Buffer.from(s, 'utf8');

describe('parseEnvelope', () => {
  it('reads the canonical envelope', () => {
    const e = parseEnvelope(bytes('{"id":"evt_1","event":"message.received","created_at":"2026-01-01T00:00:00Z","data":{"id":5}}'));
    expect(e).toEqual({
      key: 'evt_1',
      id: 'evt_1',
      name: 'message.received',
      createdAt: '2026-01-01T00:00:00Z',
      data: { id: 5 },
      problem: null,
    });
  });

  it.each([
    ['{"type":"lead.won","payload":{"id":1},"event_id":"e9"}', 'lead.won', 'e9'],
    ['{"event_type":"lead.lost","data":{},"delivery_id":"d7"}', 'lead.lost', 'd7'],
    ['{"event":"lead.created","data":{},"id":42}', 'lead.created', '42'],
  ])('accepts the alternative field names in %s', (raw, name, id) => {
    const e = parseEnvelope(bytes(raw));
    expect(e.name).toBe(name);
    expect(e.key).toBe(id);
    expect(e.problem).toBeNull();
  });

  it("prefers event_id/delivery_id, and trusts a bare id only beside data/payload (a flat body's id may be the resource's)", () => {
    expect(parseEnvelope(bytes('{"id":"res_1","event_id":"evt_9","event":"lead.won","data":{}}')).key).toBe('evt_9');
    const created = parseEnvelope(bytes('{"type":"contact.created","id":7,"name":"Ada"}'));
    const changed = parseEnvelope(bytes('{"type":"contact.lifecycle_changed","id":7,"name":"Ada"}'));
    expect(created.key).toMatch(/^sha256:/);
    expect(changed.key).not.toBe(created.key);
  });

  it('keys a delivery without id by the SHA-256 of its exact bytes', () => {
    const raw = bytes('{"event":"message.sent","data":{}}');
    const e = parseEnvelope(raw);
    expect(e.id).toBeNull();
    expect(e.key).toBe('sha256:' + createHash('sha256').update(raw).digest('hex'));
    expect(parseEnvelope(bytes('{"event":"message.sent", "data":{}}')).key).not.toBe(e.key);
  });

  it.each([
    ['not json', 'invalid_json'],
    ['[1,2]', 'not_an_object'],
    ['"text"', 'not_an_object'],
    ['{"id":"x","data":{}}', 'missing_event_name'],
  ])('reports %j as %s and still gives a key', (raw, problem) => {
    const e = parseEnvelope(bytes(raw));
    expect(e.problem).toBe(problem);
    expect(e.key.length).toBeGreaterThan(0);
  });

  it('never throws, whatever the bytes (fuzz)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 300 }),
          fc.json().map((j) => bytes(j)),
          fc.anything().map((a) => bytes(JSON.stringify(a) ?? 'null')),
        ),
        (b) => {
          const e = parseEnvelope(b);
          expect(typeof e.key).toBe('string');
          expect(e.key === bodyKey(b) || e.id === e.key).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('handles deeply nested JSON without throwing', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(parseEnvelope(bytes(deep)).problem).not.toBeNull();
  });
});

describe('jobIdFor', () => {
  it('never contains ":" and is never all digits', () => {
    fc.assert(
      fc.property(fc.string(), fc.option(fc.string(), { nil: undefined }), (key, handler) => {
        const id = jobIdFor(key, handler);
        expect(id).not.toContain(':');
        expect(/^\d+$/.test(id)).toBe(false);
      }),
    );
  });

  it('is injective over (key, handler)', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), fc.string(), (k1, h1, k2, h2) => {
        fc.pre(k1 !== k2 || h1 !== h2);
        expect(jobIdFor(k1, h1)).not.toBe(jobIdFor(k2, h2));
      }),
    );
    expect(jobIdFor('sha256:ab')).toBe('d/sha256%3Aab');
  });
});

describe('parseJobId', () => {
  it('gives back the key and handler a job id was made of', () => {
    for (const [key, handler] of [
      ['evt_1', 'h'],
      ['a:b/c%d%3A', 'x/y:z'],
      ['k', undefined],
    ] as const) {
      expect(parseJobId(jobIdFor(key, handler))).toEqual(handler === undefined ? { key } : { key, handlerId: handler });
    }
    expect(parseJobId('job9')).toBeNull();
  });
});
