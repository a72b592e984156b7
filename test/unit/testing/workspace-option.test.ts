/** testHandler and testSchedule take `workspace`: the run's ctx.workspace.id (default `default`); a bad value is a TypeError. */
import { describe, expect, it } from 'vitest';
import { defineHandler, defineSchedule } from '../../../src/index.js';
import { createEvent, testHandler, testSchedule } from '../../../src/testing/index.js';

const seen: string[] = [];
const handler = defineHandler({
  id: 'ws-note',
  on: ['conversation.closed'],
  handle: (_e, ctx) => void seen.push(ctx.workspace.id),
});
const schedule = defineSchedule({
  id: 'ws-tick',
  every: '1h',
  handle: (ctx) => void seen.push(ctx.workspace.id),
});
const closed = () => createEvent('conversation.closed', { data: { id: 38 } });

describe('workspace option of the test kit', () => {
  it('testHandler runs the handler with ctx.workspace of the given id, `default` without', async () => {
    seen.length = 0;
    expect((await testHandler(handler, closed(), { workspace: 'acme' })).outcome).toBe('completed');
    expect((await testHandler(handler, closed())).outcome).toBe('completed');
    expect(seen).toEqual(['acme', 'default']);
  });

  it('testSchedule likewise', async () => {
    seen.length = 0;
    expect((await testSchedule(schedule, { workspace: 'beta' })).outcome).toBe('completed');
    expect((await testSchedule(schedule)).outcome).toBe('completed');
    expect(seen).toEqual(['beta', 'default']);
  });

  it('refuses a value that is not a workspace id, saying what is expected', async () => {
    await expect(testHandler(handler, closed(), { workspace: 'Acme Corp' })).rejects.toThrow(
      `testHandler: workspace must be a workspace id as in WORKSPACES_FILE (lower-case letters, digits and dashes, e.g. 'acme'), got "Acme Corp"`,
    );
    await expect(testSchedule(schedule, { workspace: 7 as never })).rejects.toThrow(
      /^testSchedule: workspace must be a workspace id .* got 7$/,
    );
  });

  it('testSchedule refuses a workspace the schedule does not name (it would never run there)', async () => {
    const only = defineSchedule({ id: 'acme-tick', every: '1h', workspaces: ['acme', 'beta'], handle: () => undefined });
    expect((await testSchedule(only, { workspace: 'beta' })).outcome).toBe('completed');
    await expect(testSchedule(only)).rejects.toThrow(
      `testSchedule: schedule "acme-tick" runs only in acme, beta (its workspaces), never in "default"; pass workspace: 'acme'`,
    );
  });
});
