import { describe, expect, it } from 'vitest';
import type { StoredDelivery } from '../../../src/queue/delivery.js';
import { decodeInboxItem, encodeInboxItem } from '../../../src/queue/inbox-item.js';

const base = {
  key: 'evt_1',
  name: 'message.received',
  receivedAt: '2026-11-22T00:00:00.000Z',
  secretIndex: 1,
  headers: { 'user-agent': 'a\nb' },
};

describe('inbox item codec', () => {
  it('keeps a UTF-8 body verbatim after one line of JSON', () => {
    const d: StoredDelivery = { ...base, body: '{"a":"x\\ny"}\n\n{"multi":"line 🚚"}' };
    const raw = encodeInboxItem(d);
    expect(raw.startsWith(`${JSON.stringify(base)}\n`)).toBe(true);
    expect(raw.endsWith(d.body as string)).toBe(true);
    expect(decodeInboxItem(raw)).toEqual(d);
  });

  it('built from the raw bytes, the item is byte for byte the text form', () => {
    const d: StoredDelivery = { ...base, body: '{"text":"Olá 🚚\\n"}\n' };
    const raw = encodeInboxItem(d, Buffer.from(d.body as string, 'utf8'));
    expect(Buffer.isBuffer(raw)).toBe(true);
    expect(raw.toString()).toBe(encodeInboxItem(d));
    expect(decodeInboxItem(raw.toString())).toEqual(d);
  });

  it('keeps a base64 body (bytes that are not UTF-8) as one JSON object', () => {
    const d: StoredDelivery = { ...base, bodyBase64: Buffer.from([0xff, 0xfe, 0x0a]).toString('base64') };
    const raw = encodeInboxItem(d);
    expect(raw).not.toContain('\n');
    expect(decodeInboxItem(raw)).toEqual(d);
  });

  it('reads the whole-JSON items inboxes held before', () => {
    const d: StoredDelivery = { ...base, body: 'line1\nline2' };
    expect(decodeInboxItem(JSON.stringify(d))).toEqual(d);
  });

  it('an empty body round-trips', () => {
    const d: StoredDelivery = { ...base, body: '' };
    expect(decodeInboxItem(encodeInboxItem(d))).toEqual(d);
  });

  it('refuses an item that is neither form', () => {
    expect(() => decodeInboxItem('not json\nbody')).toThrow();
  });
});
