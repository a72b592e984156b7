import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, redactText } from '../../../src/log/logger.js';

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
  // Without pino's own numbers (time, pid): a timestamp holds any digits, e.g. "555" in 1795795552749.
  return { log, out: () => lines.join('').replace(/"(time|pid)":\d+,/g, '') };
}

describe('logger redaction', () => {
  it('redacts authorization, tokens, secrets, signatures, phones and emails in structured fields', () => {
    const { log, out } = capture();
    log.info(
      {
        headers: { authorization: 'Bearer tok_live_123', 'x-service-signature': 'sha256=abcdef0123' },
        token: 'tok_live_123',
        secret: 'whsec_999',
        password: 'hunter2',
        contact: { name: 'Ada', phone: '+49 30 1234567', email: 'ada@example.com' },
      },
      'event',
    );
    const text = out();
    for (const leaked of ['tok_live_123', 'whsec_999', 'hunter2', 'sha256=abcdef0123', '+49 30 1234567', 'ada@example.com']) {
      expect(text).not.toContain(leaked);
    }
    expect(text).toContain('"name":"Ada"');
  });

  it('masks phone numbers and emails inside free-text fields (a 422 reason, an error)', () => {
    const { log, out } = capture();
    log.error(
      {
        reason: 'ValidationError: {"email":["zoe@example.com is taken"],"phone":"+49 170 1234567"}',
        err: new Error('lookup of bob@example.org failed'),
      },
      'handler failed',
    );
    expect(out()).not.toMatch(/zoe@example\.com|1234567|bob@example\.org/);
    expect(out()).toContain('[email]');
  });

  it('masks phone numbers and emails inside message text', () => {
    const { log, out } = capture();
    log.warn('contact ada@example.com called from +1 (555) 010-9999');
    expect(out()).not.toMatch(/ada@example\.com|555/);
    expect((JSON.parse(out()) as { msg: string }).msg).toBe('contact [email] called from [phone]');
    expect(redactText('mail bob@x.io now')).toBe('mail [email] now');
  });
});
