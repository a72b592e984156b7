import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { workflowCalls } from '../../../src/cli/handler-workflow.js';
import { handlersCommand } from '../../../src/cli/handlers.js';
import { memoryIo } from '../../support/io.js';

const SHIPPED = fileURLToPath(new URL('../../../handlers', import.meta.url));
const WORKFLOW = fileURLToPath(new URL('../../support/handlers/workflow', import.meta.url));

/** `switchyard handlers` shows what a handler does as a workflow: cancelOn, waitsFor, ctx.state and its workflow calls. */
describe('switchyard handlers: workflows', () => {
  it('shows cancelOn, waitsFor and the workflow calls of the shipped SLA handler, (none) for a plain one', async () => {
    const io = memoryIo({ HANDLERS_DIR: SHIPPED });
    await handlersCommand.run([], io);
    expect(io.out()).toMatch(
      /sla-escalation\n[\s\S]*?\n {2}workflow: {2}uses ctx\.step, ctx\.waitForEvent \(in its module\)\n {13}cancelOn conversation\.closed \(match conversation\)\n {13}waitsFor message\.sent\n {2}file:/,
    );
    expect(io.out()).toMatch(/follow-up-task\n[\s\S]*?\n {2}workflow: {2}\(none\)\n/);
  });

  it('shows ctx.state with its key and TTL, and gives all of it in --json', async () => {
    const io = memoryIo({ HANDLERS_DIR: WORKFLOW });
    await handlersCommand.run([], io);
    expect(io.out()).toMatch(
      /wf-counter\n[\s\S]*?\n {2}workflow: {2}uses ctx\.sleep, ctx\.state \(in its module\)\n {13}ctx\.state by contact, kept 30d after its last write\n/,
    );
    const json = memoryIo({ HANDLERS_DIR: WORKFLOW });
    await handlersCommand.run(['--json'], json);
    const rows = JSON.parse(json.out()) as { id: string; workflow: unknown }[];
    expect(rows.find((r) => r.id === 'wf-counter')?.workflow).toEqual({
      cancelOn: [],
      waitsFor: [],
      state: { key: 'contact', ttlMs: 30 * 86_400_000 },
      uses: ['ctx.sleep', 'ctx.state'],
    });
  });

  it('shows a keyed where match as its key and where', async () => {
    const io = memoryIo({ HANDLERS_DIR: fileURLToPath(new URL('../../support/handlers/workflow-calls', import.meta.url)) });
    await handlersCommand.run([], io);
    expect(io.out()).toMatch(/wf-where\n[\s\S]*?\n {13}cancelOn conversation\.opened \(match conversation where \(function\)\)\n/);
  });

  it('finds the calls however they are written', () => {
    expect(
      workflowCalls('await ctx.sleepUntil(at); const r = await ctx.waitForEvent<X>("w", o); ctx.step ("s", f); await ctx.state.set(1)'),
    ).toEqual(['ctx.step', 'ctx.sleepUntil', 'ctx.waitForEvent', 'ctx.state']);
    expect(workflowCalls('const sleep = 1; ctx.api.contacts.get(1); state.set')).toEqual([]);
  });
});
