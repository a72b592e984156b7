import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { formatWaits, selectWaits } from '../../../src/cli/waits.js';
import { lineReporter } from '../../../src/replay/run.js';
import { formatTrace } from '../../../src/history/timeline.js';
import { formatReport } from '../../../src/sources/reconcile/run.js';
import { printable, printableLines } from '../../../src/util/printable.js';

// Every CLI printer passes the data it prints through one helper: no control character of a
// delivery id, a handler's error or an answer reaches the terminal (cursor moves, colours, fake lines).
// eslint-disable-next-line no-control-regex -- the characters under test
const CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const ESC_OR_BEL = (text: string) => text.includes('\u001b') || text.includes('\u0007');

describe('printable', () => {
  it('writes every control character as an escape and keeps the rest', () => {
    expect(printable('\u001b[31mred\u001b[0m')).toBe('\\u001b[31mred\\u001b[0m');
    expect(printable('a\nb\tc\rd\u0000e\u007f\u009b\u202eé✓')).toBe('a\\nb\\tc\\rd\\u0000e\\u007f\\u009b\\u202eé✓');
    expect(printable('evt_01HZX3 sha256:ab')).toBe('evt_01HZX3 sha256:ab');
    for (let c = 0; c < 0x2070; c++) expect(printable(String.fromCharCode(c))).not.toMatch(CONTROLS);
  });

  it('keeps the lines of a multi-line text, each escaped', () => {
    expect(printableLines('one\u001b[2J\r\ntwo\rthree')).toEqual(['one\\u001b[2J', 'two\\rthree']);
  });
});

describe('the CLI printers escape data', () => {
  it('waits', () => {
    const run = {
      scope: 's',
      name: 'reply\u001b[31m',
      handler: 'sla\u0007',
      deliveryKey: 'evt_\u001b[2J',
      kind: 'wait-for-event' as const,
      dueAt: 2_000,
      event: 'message.sent',
      key: 'conversation:\n1',
      queue: 'handlers',
      jobId: 'j',
    };
    const text = formatWaits(selectWaits([run], 1_000, {}), 1);
    expect(text).not.toMatch(CONTROLS);
    expect(text).toContain('evt_\\u001b[2J');
    expect(text).toContain('conversation:\\n1');
  });

  it('replay lines', () => {
    let out = '';
    const sink = new Writable({
      write(c, _e, cb) {
        out += String(c);
        cb();
      },
    });
    lineReporter(sink).outcome(
      { source: 'fixtures/\u001b[1mx.json', bytes: Buffer.from(''), headers: {}, receivedAt: undefined },
      {
        kind: 'failed',
        key: 'evt_\u001b[31m',
        event: 'lead.won',
        status: 401,
        detail: 'bad\u001b[0m\nsecond line',
        lines: ['  ✗ notes dead after 3 ms: \u001b[2Jgone'],
      },
      1,
      1,
    );
    expect(ESC_OR_BEL(out)).toBe(false);
    expect(out).toContain('evt_\\u001b[31m');
    expect(out).toContain('fixtures/\\u001b[1mx.json');
    expect(out).toContain('  bad\\u001b[0m\n  second line');
    expect(out).toContain('  ✗ notes dead after 3 ms: \\u001b[2Jgone');
  });

  it("trace: an attempt's error, a call's path and a step's name", () => {
    const text = formatTrace({
      key: 'k\u001b]0;title\u0007',
      receivedAt: '2026-01-01T00:00:00.000Z',
      queuedAt: null,
      bytes: null,
      secretIndex: null,
      source: 'webhook',
      event: 'lead.won',
      conversation: null,
      contact: null,
      state: null,
      handlers: { 'h\u001b': 'dead' },
      duplicates: 0,
      expiresInMs: null,
      entries: [
        {
          kind: 'attempt',
          at: Date.parse('2026-01-01T00:00:01Z'),
          startedAt: Date.parse('2026-01-01T00:00:00.5Z'),
          handler: 'h\u001b',
          attempt: 1,
          outcome: 'dead',
          error: { class: 'Error', message: 'boom \u001b[31m\nline two' },
          steps: [{ name: 'st\u001b', source: 'run' }],
          calls: [
            {
              method: 'GET',
              path: '/x\u001b',
              idempotencyKey: null,
              status: 500,
              ms: 1,
              waitMs: 0,
              try: 1,
              replayed: false,
              op: 'get',
              error: 'e\u001b',
            },
          ],
        },
      ],
    });
    expect(ESC_OR_BEL(text)).toBe(false);
    expect(text).toContain('k\\u001b]0;title\\u0007');
    expect(text).toContain('boom \\u001b[31m\n');
  });

  it('reconcile: the example ids taken from the API', () => {
    const counts = { found: 1, received: 0, enqueued: 1, pending: 0 };
    const text = formatReport({
      since: '2026-01-01T00:00:00.000Z',
      until: '2026-01-01T01:00:00.000Z',
      dryRun: true,
      apiCalls: 1,
      durationMs: 5,
      events: { 'conversation.closed': { ...counts, examples: ['conversation.closed:12\u001b[2J'] } },
      totals: counts,
      untracked: [],
    });
    expect(ESC_OR_BEL(text)).toBe(false);
    expect(text).toContain('conversation.closed:12\\u001b[2J');
  });
});
