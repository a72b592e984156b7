/**
 * `replay --inline` (inlineTarget) runs workflows to their end without
 * waiting: sleeps pass at once (printed with their due time), a wait is
 * answered by a matching event of the replay's input or times out (null),
 * `cancelOn` is checked against the input, `ctx.state` is kept in memory for
 * the replay; each is printed in order with the run's API calls. Against an
 * in-process sandbox on a loopback port.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineHandler, type Handler } from '../../../src/index.js';
import { createLogger } from '../../../src/log/logger.js';
import { inlineTarget, readInputs, type ReplayItem } from '../../../src/replay/index.js';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';

const FIXTURES = fileURLToPath(new URL('../../../fixtures', import.meta.url));
// message.received: conversation 38, received 2025-03-04T09:58:13.402Z; message.sent: the reply in 38, received 10:02:41.118Z;
// conversation.closed: 38 closed, received 10:20:01.774Z.
const RECEIVED = 'evt_01JNK7Q2M8V4D9XG3T5R6Y1A0B';
const SENT = 'evt_01JNK7YB3F0QW8C2ZK9H4N6E7D';
const CLOSED = 'evt_01JNK8ZC0A7M3Q5T1V9X2B4D6F';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ burst: 1000 }).listen(0);
});
afterAll(async () => sandbox?.close());

const items = async (...names: string[]): Promise<ReplayItem[]> =>
  readInputs(
    names.map((n) => `${FIXTURES}/${n}.json`),
    FIXTURES,
  );

/** Replays `replayed` (of `input`, default the same) inline through `handlers`; the outcome of each replayed delivery. */
async function replay(handlers: Handler[], replayed: ReplayItem[], input: ReplayItem[] = replayed) {
  const target = inlineTarget({
    handlers,
    api: { baseUrl: sandbox.baseUrl, token: 'sbx_full_acme', burst: 1000 },
    env: {},
    log: createLogger({ level: 'silent' }),
    input,
  });
  const out = [];
  for (const item of replayed) out.push(await target(item));
  return out;
}

const notes = async (): Promise<string[]> =>
  (
    (await (await fetch(`${sandbox.url}/_sandbox/requests?method=POST&path=/conversations/38/notes`)).json()) as {
      data: { body: { body: string } }[];
    }
  ).data.map((r) => r.body.body);

describe('replay --inline of a workflow', () => {
  it('a sleep passes at once, printed with the due time it would have had; the run writes after it; ctx.state is printed, redacted', async () => {
    const napper = defineHandler({
      id: 'napper',
      on: ['message.received'],
      state: { key: 'conversation' },
      async handle(event, ctx) {
        await ctx.sleep('nap', '15m');
        await ctx.state.set({ woke: true, email: 'alice@example.com', note: 'call +49 30 1234567', token: 'tok_secret' });
        await ctx.step('note', async () => ctx.api.notes.create(event.data.conversation_id, { body: 'napper woke' }));
      },
    });
    const started = Date.now();
    const [outcome] = await replay([napper], await items('message.received'));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(outcome).toMatchObject({ kind: 'accepted', key: RECEIVED });
    expect(outcome!.lines).toEqual([
      expect.stringMatching(/^ {2}✓ napper completed in \d+ ms$/),
      '      sleep "nap" 15m — skipped (inline replay does not wait; due 2025-03-04T10:13:13.402Z)',
      '      state set (conversation:38) ← {"woke":true,"email":"[email]","note":"call [phone]","token":"[redacted]"} (in memory for this replay)',
      expect.stringMatching(/^ {6}POST {3}notes\.create → 201$/),
    ]);
    expect(outcome!.lines!.join('\n')).not.toMatch(/alice@|1234567|tok_secret/);
    expect(await notes()).toContain('napper woke');
  });

  const waiter = defineHandler({
    id: 'waiter',
    on: ['message.received'],
    state: { key: 'conversation' },
    async handle(_event, ctx) {
      const reply = await ctx.waitForEvent('reply', { event: 'message.sent', match: 'conversation', timeout: '1h' });
      await ctx.state.update((seen) => ({
        replies: [...((seen as { replies?: (string | null)[] } | null)?.replies ?? []), reply ? reply.id : null],
      }));
    },
  });

  it('a wait is answered by the matching event of the replay input (also one not replayed itself), and returns it', async () => {
    const input = await items('message.received', 'message.sent');
    const [outcome] = await replay([waiter], input.slice(0, 1), input);
    expect(outcome).toMatchObject({ kind: 'accepted' });
    expect(outcome!.lines).toEqual([
      expect.stringMatching(/✓ waiter completed/),
      `      wait "reply" for message.sent (timeout 1h) — answered by message.sent ${SENT} received 2025-03-04T10:02:41.118Z (from the replay input)`,
      `      state update (conversation:38) ← {"replies":["${SENT}"]} (in memory for this replay)`,
    ]);
  });

  it("a wait no event of the input answers times out: null, saying so; ctx.state is kept across the replay's deliveries", async () => {
    const input = await items('message.received');
    const outcomes = await replay([waiter], [...input, ...input], [...input, ...input]);
    expect(outcomes.map((o) => o.lines)).toEqual(
      [0, 1].map((n): unknown[] => [
        expect.stringMatching(/✓ waiter completed/),
        '      wait "reply" for message.sent (timeout 1h) — timed out: no matching event in the replay input before 2025-03-04T10:58:13.402Z; returns null (inline replay does not wait)',
        `      state update (conversation:38) ← {"replies":[${Array(n + 1)
          .fill('null')
          .join(',')}]} (in memory for this replay)`,
      ]),
    );
  });

  it("a reply in another conversation does not answer the wait (the worker's match rules)", async () => {
    const input = await items('message.received');
    const other = {
      ...input[0]!,
      source: 'other',
      receivedAt: '2025-03-04T10:00:00.000Z',
      bytes: Buffer.from((await items('message.sent'))[0]!.bytes.toString().replace('"conversation_id": 38', '"conversation_id": 99')),
    };
    expect(other.bytes.toString()).toContain('"conversation_id": 99');
    const [outcome] = await replay([waiter], input, [...input, other]);
    expect(outcome!.lines![1]).toMatch(/— timed out: no matching event/);
  });

  it('a cancelOn event of the input cancels the sleeping run: printed, nothing after the sleep runs, not a failure', async () => {
    const sleeper = defineHandler({
      id: 'sleeper',
      on: ['message.received'],
      cancelOn: [{ event: 'conversation.closed', match: 'conversation' }],
      async handle(event, ctx) {
        await ctx.sleep('grace', '1h');
        await ctx.api.notes.create(event.data.conversation_id, { body: 'sleeper was not cancelled' });
      },
    });
    const input = await items('message.received', 'conversation.closed');
    const [outcome] = await replay([sleeper], input.slice(0, 1), input);
    expect(outcome).toMatchObject({ kind: 'accepted' });
    expect(outcome!.lines).toEqual([
      expect.stringMatching(
        /^ {2}⊘ sleeper cancelled after \d+ ms \(a cancelOn event of the replay input came while it slept or waited\)$/,
      ),
      `      sleep "grace" 1h — cancelled by conversation.closed ${CLOSED} received 2025-03-04T10:20:01.774Z (cancelOn, from the replay input): nothing after it runs`,
    ]);
    expect(await notes()).not.toContain('sleeper was not cancelled');
  });

  it('a cancelOn event after the sleep is due does not cancel it', async () => {
    const short = defineHandler({
      id: 'short-sleeper',
      on: ['message.received'],
      cancelOn: [{ event: 'conversation.closed', match: 'conversation' }],
      async handle(_event, ctx) {
        await ctx.sleep('brief', '5m');
      },
    });
    const input = await items('message.received', 'conversation.closed');
    const [outcome] = await replay([short], input.slice(0, 1), input);
    expect(outcome!.lines).toEqual([
      expect.stringMatching(/✓ short-sleeper completed/),
      '      sleep "brief" 5m — skipped (inline replay does not wait; due 2025-03-04T10:03:13.402Z)',
    ]);
  });

  it("a misused workflow call is the worker's configuration error: dead at once, with its message", async () => {
    const typo = defineHandler({
      id: 'typo',
      on: ['message.received'],
      async handle(_e, ctx) {
        await ctx.waitForEvent('reply', { event: 'message.recieved' as never, match: 'conversation', timeout: '1h' });
      },
    });
    const [outcome] = await replay([typo], await items('message.received'));
    expect(outcome!.lines!.join('\n')).toContain('typo dead');
    expect(outcome!.lines!.join('\n')).toContain(
      'HandlerConfigError: ctx.waitForEvent("reply") in handler "typo": "event" must be an event name, got "message.recieved"; did you mean "message.received"?',
    );
  });
});
