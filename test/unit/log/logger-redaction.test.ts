import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, redactText } from '../../../src/log/logger.js';

/** Strings whose phone number must be masked: [text, what the masked text is]. */
const MASKED: readonly (readonly [string, string])[] = [
  ['+49 30 1234567', '[phone]'],
  ['+49 170 1234567', '[phone]'],
  ['+4915112345678', '[phone]'],
  ['+1 (555) 010-9999', '[phone]'],
  ['+44 (0) 20 7946 0958', '[phone]'],
  ['+44-20-7946-0958', '[phone]'],
  ['+33.1.23.45.67.89', '[phone]'],
  ['call +49 30 1234567 now', 'call [phone] now'],
  ['tel:+4930123456', 'tel:[phone]'],
  ['(555) 010-9999', '[phone]'],
  ['(030) 1234567', '[phone]'],
  ['555-010-9999', '[phone]'],
  ['555.010.9999', '[phone]'],
  ['555 010 9999', '[phone]'],
  ['030 1234567', '[phone]'],
  ['0170-1234567', '[phone]'],
  ['020 7946 0958', '[phone]'],
  ['tel 0049 30 1234567', 'tel [phone]'],
  ['0044-20-7946-0958', '[phone]'],
  ['contact ada@example.com called from +1 (555) 010-9999.', 'contact [email] called from [phone].'],
  ['{"phone":"5550100123"}', '{"phone":"[phone]"}'],
  ['{"phone_number": "12"}', '{"phone_number": "[phone]"}'],
  ['{"email":"not-an-address"}', '{"email":"[email]"}'],
];

/** Strings that must come out unchanged: nothing in them is personal data. */
const KEPT: readonly string[] = [
  // IPv4, IPv6, host:port
  'connect ECONNREFUSED 127.0.0.1:6',
  'connect ECONNREFUSED 127.0.0.1:6379',
  'listen EADDRINUSE: address already in use 0.0.0.0:46200',
  'listen EADDRINUSE: address already in use :::46200',
  'shipped from 192.168.1.20',
  'from 10.255.255.254:65535 to 172.16.0.1',
  'upstream [2001:db8:85a3::8a2e:370:7334]:8443',
  'fe80::1ff:fe23:4567:890a',
  '::ffff:192.168.100.200',
  'redis-1.internal:6379',
  'localhost:46200',
  'https://api.example.test:8443/api/v1/contacts/100123456',
  // paths
  '/var/spool/0123/4567890',
  'spool/0123/4567890/queue',
  'open /srv/data/0170-1234567.json',
  // ISO timestamps and dates
  '2025-03-04T09:58:11+01:00',
  '2025-03-04T09:58:11.617Z',
  '2025-03-04 09:58:11',
  '2025-03-04',
  '04/03/2025',
  '20250304T095811Z',
  // plain ids and order numbers
  'order 100123456 shipped from 192.168.1.20',
  'contact 4915112345678 merged',
  'job 1234567890123 failed',
  'order #1043',
  'ids 101 102 103',
  'evt_01JNK7Q2M8V4D9XG3T5R6Y1A0B',
  'key 9f2c1e7a-3b4d-4c5e-8f60-123456789012',
  'sha256=5d41402abc4b2a76b9719d911017c592',
  // durations, sizes, counts, money
  'took 1500 ms',
  'retry in 30000ms (attempt 3/5)',
  'uptime 12345678s',
  'body 1048576 bytes',
  'total 1200.50 EUR',
  '1 234 567 items',
  // versions
  'node v20.11.1',
  'switchyard 0.1.0, redis 7.2.4',
  'version 10.123.4567',
  // offsets
  'offset +02:00',
  '+0100',
];

function capture() {
  const lines: string[] = [];
  const log = createLogger({
    level: 'debug',
    destination: new Writable({
      write(c, _e, cb) {
        lines.push(String(c));
        cb();
      },
    }),
  });
  return { log, out: () => lines.join('') };
}

describe('free-text redaction', () => {
  it.each(MASKED)('masks %j', (text, masked) => {
    expect(redactText(text)).toBe(masked);
  });

  it.each(KEPT)('keeps %j', (text) => {
    expect(redactText(text)).toBe(text);
  });

  it('keeps addresses, ports and ids in log messages and error fields, masks phones next to them', () => {
    const { log, out } = capture();
    const err = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6'), { code: 'ECONNREFUSED' });
    log.error(
      { err, reason: 'order 100123456 shipped from 192.168.1.20, customer +49 170 1234567' },
      'listen EADDRINUSE: address already in use 127.0.0.1:46200',
    );
    const line = JSON.parse(out()) as { msg: string; reason: string; err: { message: string; stack: string } };
    expect(line.msg).toBe('listen EADDRINUSE: address already in use 127.0.0.1:46200');
    expect(line.err.message).toBe('connect ECONNREFUSED 127.0.0.1:6');
    expect(line.err.stack).toContain('connect ECONNREFUSED 127.0.0.1:6');
    expect(line.reason).toBe('order 100123456 shipped from 192.168.1.20, customer [phone]');
  });

  it('redacts phone and email fields whatever their value looks like', () => {
    const { log, out } = capture();
    log.info({ contact: { id: 100123456, phone: '5550100', phone_number: '12', email: 'x' }, mobile: '0', order: 100123456 }, 'contact');
    const line = JSON.parse(out()) as { contact: Record<string, unknown>; mobile: string; order: number };
    expect(line.contact).toEqual({ id: 100123456, phone: '[redacted]', phone_number: '[redacted]', email: '[redacted]' });
    expect(line.mobile).toBe('[redacted]');
    expect(line.order).toBe(100123456);
  });
});
