import { describe, expect, it } from 'vitest';
import { defineHandler } from '../../../src/handler/define.js';
import { createEvent, MemoryStepStore, testHandler } from '../../../src/testing/index.js';

/**
 * testHandler's `fromStep` and `previous` (issue 34): a fix proven the way `switchyard rerun --from-step` will run
 * it, without Redis: the steps before the named one return what `previous` gives, it and what follows run fresh.
 */

let lookups = 0;

/** Looks the conversation up (counted), drafts a note from it, writes it, then finishes. */
const drafter = defineHandler({
  id: 'drafter',
  on: ['message.received'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    const found = await ctx.step('lookup', async () => {
      lookups++;
      return { conversation: event.data.conversation_id, label: 'looked up now' };
    });
    const text = await ctx.step('draft', async () => `fixed: ${found.label}`);
    const note = await ctx.api.notes.create(found.conversation, { body: text });
    await ctx.step('finish', async () => note.id);
  },
});

const message = createEvent('message.received');

describe('testHandler from a step', () => {
  it('returns the earlier steps from previous without running them, and runs the named step and the rest fresh', async () => {
    lookups = 0;
    const run = await testHandler(drafter, message, {
      fromStep: 'draft',
      previous: { lookup: { conversation: 38, label: 'from the original run' } },
    });
    expect(run.outcome).toBe('completed');
    expect(lookups).toBe(0);
    expect(run.steps.map((s) => [s.name, s.reused])).toEqual([
      ['lookup', true],
      ['draft', false],
      ['finish', false],
    ]);
    expect(run.calls.map((c) => [c.path, c.body])).toEqual([['/conversations/38/notes', { body: 'fixed: from the original run' }]]);
  });

  it("writes with a re-run's Idempotency-Keys, not the delivery's own", async () => {
    const plain = await testHandler(drafter, message);
    const rerun = await testHandler(drafter, message, { fromStep: 'lookup' });
    expect(rerun.steps.map((s) => s.reused)).toEqual([false, false, false]);
    expect(rerun.calls[0]?.idempotencyKey).toMatch(/^sy_/);
    expect(rerun.calls[0]?.idempotencyKey).not.toBe(plain.calls[0]?.idempotencyKey);
    // The same re-run again (a retry) sends the same keys.
    const again = await testHandler(drafter, message, { fromStep: 'lookup' });
    expect(again.calls[0]?.idempotencyKey).toBe(rerun.calls[0]?.idempotencyKey);
  });

  it('keeps what runs fresh in the step store given, apart from previous, so a retry from the step reuses it', async () => {
    const steps = new MemoryStepStore();
    const previous = { lookup: { conversation: 38, label: 'original' } };
    lookups = 0;
    const first = await testHandler(drafter, message, { fromStep: 'draft', previous, steps });
    expect(first.steps[0]).toEqual({ name: 'lookup', result: previous.lookup, reused: true });
    const retry = await testHandler(drafter, message, { fromStep: 'draft', previous, steps, attempt: 2 });
    expect(retry.steps.map((s) => [s.name, s.reused])).toEqual([
      ['lookup', true],
      ['draft', true],
      ['finish', true],
    ]);
    expect(lookups).toBe(0);
  });

  it('refuses a step the run never reaches and previous that does not fit, saying what was expected', async () => {
    await expect(
      testHandler(drafter, message, { fromStep: 'drfat', previous: { lookup: { conversation: 38, label: 'x' } } }),
    ).rejects.toThrow('testHandler: the run never reached step "drfat" (fromStep); the steps it ran: "lookup", "draft", "finish"');
    await expect(testHandler(drafter, message, { previous: { lookup: 1 } })).rejects.toThrow('previous is given without fromStep');
    await expect(testHandler(drafter, message, { fromStep: 'draft', previous: { draft: 'x' } })).rejects.toThrow(
      'previous gives a result for "draft", the step the run starts from',
    );
    await expect(testHandler(drafter, message, { fromStep: '' })).rejects.toThrow('fromStep must be a step name');
  });
});
