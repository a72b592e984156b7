import { describe, expect, it } from 'vitest';
import { KeptBodyError, packBody, unpackBody } from '../../../src/history/bodies.js';
import { eventBody, messageData } from '../../support/events.js';

/* The stored form of a kept body (KEEP_BODIES): compressed, and read back as the exact bytes received. */

describe('kept bodies: stored form', () => {
  it('a realistic body is stored compressed and read back byte for byte', () => {
    const raw = Buffer.from(
      eventBody('message.received', messageData('message.received', 38, 'I would like a refund for order 1234, please')),
    );
    const stored = packBody(raw);
    expect(stored.byteLength).toBeLessThan(raw.byteLength);
    expect(stored.includes(Buffer.from('refund'))).toBe(false);
    expect(unpackBody('k', stored).equals(raw)).toBe(true);
  });

  it('bytes that are not UTF-8, and a body compression would not shrink, come back exactly', () => {
    for (const raw of [Buffer.from([0xff, 0xfe, 0x00, 0x7b, 0x22, 0xc3]), Buffer.from('{}'), Buffer.alloc(0)]) {
      expect(unpackBody('k', packBody(raw)).equals(raw)).toBe(true);
      expect(packBody(raw).byteLength).toBeLessThanOrEqual(raw.byteLength + 1);
    }
  });

  it('a stored value of an unknown form or damaged is refused naming the delivery, not read as something else', () => {
    const damaged = packBody(Buffer.from('x'.repeat(500)));
    damaged[1] = 0xff;
    for (const bad of [Buffer.from('{"id":1}'), Buffer.alloc(0), damaged]) {
      expect(() => unpackBody('evt_1', bad)).toThrow(KeptBodyError);
      expect(() => unpackBody('evt_1', bad)).toThrow(/kept body of delivery "evt_1" cannot be read/);
    }
  });
});
