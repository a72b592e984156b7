import { describe, expectTypeOf, test } from 'vitest';
import { defineHandler, defineSchedule, type HandlerWorkspace, type ScheduleContext } from '../../../src/index.js';
import { testHandler, testSchedule, type TestHandlerOptions, type TestScheduleOptions } from '../../../src/testing/index.js';

describe('ctx.workspace', () => {
  test('a handler and a schedule see the workspace of their run, read-only', () => {
    defineHandler({
      id: 'ws',
      on: ['lead.won'],
      handle(_event, ctx) {
        expectTypeOf(ctx.workspace).toEqualTypeOf<HandlerWorkspace>();
        expectTypeOf(ctx.workspace.id).toEqualTypeOf<string>();
        // @ts-expect-error read-only
        ctx.workspace.id = 'other';
        // @ts-expect-error read-only
        ctx.workspace = { id: 'other' };
      },
    });
    defineSchedule({
      id: 'ws-tick',
      every: '1h',
      handle(ctx) {
        expectTypeOf(ctx.workspace.id).toEqualTypeOf<string>();
      },
    });
    expectTypeOf<ScheduleContext['workspace']>().toEqualTypeOf<HandlerWorkspace>();
  });

  test('the test kit takes the workspace of the run as a string', () => {
    expectTypeOf<TestHandlerOptions['workspace']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<TestScheduleOptions['workspace']>().toEqualTypeOf<string | undefined>();
    const h = defineHandler({ id: 'h', on: ['lead.won'], handle() {} });
    void testHandler(h, 'lead.won', { workspace: 'acme' });
    void testSchedule(defineSchedule({ id: 's', every: '1h', handle() {} }), { workspace: 'acme' });
    // @ts-expect-error a workspace is named by its id
    void testHandler(h, 'lead.won', { workspace: { id: 'acme' } });
  });
});
