import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineHandler } from '../../../src/index.js';
import { createEvent, testHandler } from '../../../src/testing/index.js';

/** `state: { key, schema }`: ctx.state typed by the schema in the definition (test/types/handler/state.test-d.ts), and each write checked against it. */
const opened = (subject: string) => createEvent('conversation.opened', { data: { id: 38, subject } });

describe('ctx.state typed and checked by state.schema', () => {
  const Counter = z.object({ sent: z.number().int() });
  const counter = defineHandler({
    id: 'counter',
    on: ['conversation.opened'],
    state: { key: 'conversation', schema: Counter },
    async handle(event, ctx) {
      const current = await ctx.state.get();
      // Typed by the schema: no cast.
      const next = (current?.sent ?? 0) + 1;
      await ctx.state.set(event.data.subject === 'bad' ? ({ sent: 'one' } as never) : { sent: next });
    },
  });

  it('a value of the schema is kept', async () => {
    const run = await testHandler(counter, opened('ok'), { state: { sent: 2 } });
    expect(run.outcome).toBe('completed');
    expect(run.state).toEqual({ sent: 3 });
  });

  it('a value the schema refuses dead-letters the run, naming the path', async () => {
    const run = await testHandler(counter, opened('bad'));
    expect(run.outcome).toBe('dead');
    expect(run.reason).toBe(
      'HandlerConfigError: ctx.state.set() in handler "counter" (state conversation:38): the value does not match the handler\'s state.schema (value.sent: Invalid input: expected number, received string)',
    );
  });
});
