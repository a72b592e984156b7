import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { defineHandler, type Handler, type HandlerState } from '../../../src/handler/define.js';

const Nurture = z.object({ sent: z.number(), lastAt: z.string().optional() });
type Nurture = z.output<typeof Nurture>;

describe('ctx.state typed once in the definition (state.schema)', () => {
  test('get, set and update are typed by the schema, without casts', () => {
    const h = defineHandler({
      id: 'nurture',
      on: ['lead.created'],
      state: { key: 'contact', schema: Nurture },
      async handle(_event, ctx) {
        expectTypeOf(ctx.state).toEqualTypeOf<HandlerState<Nurture>>();
        const current = await ctx.state.get();
        expectTypeOf(current).toEqualTypeOf<{ sent: number; lastAt?: string } | null>();
        await ctx.state.set({ sent: (current?.sent ?? 0) + 1 });
        // @ts-expect-error a value of another shape is refused by the type
        await ctx.state.set({ sent: 'one' });
        const next = await ctx.state.update((c) => ({ sent: (c?.sent ?? 0) + 1 }));
        expectTypeOf(next.sent).toEqualTypeOf<number>();
      },
    });
    const held: Handler<'lead.created'> = h;
    const any: Handler = h;
    expectTypeOf([held, any]).toBeArray();
  });

  test('without a schema the state stays unknown (as before)', () => {
    defineHandler({
      id: 'plain',
      on: ['lead.created'],
      state: { key: 'contact' },
      async handle(_event, ctx) {
        expectTypeOf(await ctx.state.get()).toEqualTypeOf<unknown>();
      },
    });
  });
});

describe('a keyed match is typed by the event it matches', () => {
  test("where sees the waited event in waitForEvent, and each cancelOn entry's own event", () => {
    defineHandler({
      id: 'keyed',
      on: ['message.received'],
      cancelOn: [
        { event: 'conversation.closed', match: { on: 'conversation', where: (e) => e.data.subject === 'spam' } },
        { event: 'message.sent', match: { on: 'conversation', where: (e) => e.data.direction === 'outbound' } },
      ],
      async handle(_event, ctx) {
        await ctx.waitForEvent('reply', {
          event: 'message.sent',
          match: { on: 'conversation', where: (e) => e.data.body.length > 0 },
          timeout: '1h',
        });
        await ctx.waitForEvent('other', {
          event: 'message.sent',
          // @ts-expect-error a message has no subject
          match: { on: 'conversation', where: (e) => e.data.subject === 'x' },
          timeout: '1h',
        });
      },
    });
  });
});
