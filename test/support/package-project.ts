/**
 * For test/e2e/package: a project made by `switchyard init` from the packed
 * tarball, run as its user runs it (`npm run dev` with only PATH, HOME and the
 * ports), and the workflow sources written into it (docs/handlers.md's SLA
 * example as written, and a handler that sleeps, waits, is cancelled and keeps
 * state, with its testHandler test).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../src/redis/managed.js';
import { waitFor } from './wait.js';

const HANDLERS_DOC = fileURLToPath(new URL('../../docs/handlers.md', import.meta.url));

/** The ```ts block of docs/handlers.md holding `marker` (its first line), as written. */
export function docsBlock(marker: string): string {
  const doc = readFileSync(HANDLERS_DOC, 'utf8');
  const at = doc.indexOf(marker);
  if (at < 0) throw new Error(`docs/handlers.md has no block with ${marker}`);
  return doc.slice(doc.lastIndexOf('```ts\n', at) + 6, doc.indexOf('```\n', at));
}

/** A running `npm run dev` of a project: what it printed, the sandbox's URL, the receiver's port. */
export interface DevRun {
  output(): string;
  readonly sandbox: string;
  readonly port: number;
  /** Waits for `re` in the output, failing with the output. */
  waitFor(re: RegExp, ms?: number): Promise<void>;
}

/** Runs `npm run dev` in `app` (free ports; only PATH, HOME, LANG and `extra` in its environment) while `use` runs. */
export async function withDev(app: string, extra: Record<string, string>, use: (dev: DevRun) => Promise<void>): Promise<void> {
  const [port, sandboxPort] = [await freePort(), await freePort()];
  const env = {
    PATH: process.env['PATH'] ?? '',
    HOME: process.env['HOME'] ?? '',
    LANG: 'C.UTF-8',
    PORT: String(port),
    SANDBOX_PORT: String(sandboxPort),
    ...extra,
  };
  const child = spawn('npm', ['run', 'dev'], { cwd: app, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const dev: DevRun = {
    output: () => out,
    sandbox: `http://127.0.0.1:${sandboxPort}`,
    port,
    waitFor: (re, ms = 30_000) =>
      waitFor(() => re.test(out), ms).then(
        () => undefined,
        () => {
          throw new Error(`no ${String(re)} in the output of npm run dev:\n${out}`);
        },
      ),
  };
  try {
    await dev.waitFor(/worker started/, 60_000);
    await use(dev);
  } finally {
    if (child.pid)
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
    await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
  }
}

/** The notes the sandbox of a dev run was asked to write: [status, body]. */
export async function sandboxNotes(dev: DevRun): Promise<[number, string | undefined][]> {
  const res = await fetch(`${dev.sandbox}/_sandbox/requests?method=POST&path=/conversations/*/notes`);
  return ((await res.json()) as { data: { status: number; body: { body?: string } | null }[] }).data.map((n) => [n.status, n.body?.body]);
}

/** A handler of the project using every workflow member: ctx.state, ctx.sleep, ctx.waitForEvent (typed), cancelOn. */
export const NUDGE_HANDLER = `import { defineHandler, type WorkspaceEvent } from 'switchyard';

/** An inbound message: count it, let a short cool-off pass, wait a little for a reply; with none, note a nudge. A close cancels the run. */
export default defineHandler({
  id: 'follow-up-nudge',
  on: ['message.received'],
  abilities: ['conversations:write'],
  state: { key: 'conversation' },
  cancelOn: [{ event: 'conversation.closed', match: 'conversation' }],
  async handle(event, ctx) {
    if (event.data.direction !== 'inbound') return;
    const count = await ctx.state.update((c) => (typeof c === 'number' ? c : 0) + 1);
    await ctx.sleep('cool-off', '3s');
    const reply = await ctx.waitForEvent('reply', { event: 'message.sent', match: 'conversation', timeout: '8s', lookback: false });
    if (reply) {
      // The event waited for, typed: a message.sent with its message fields.
      const sent: WorkspaceEvent<'message.sent'> = reply;
      const by: number | null = reply.data.user_id;
      ctx.log.info({ reply: sent.id, by }, 'answered; no nudge');
      return;
    }
    await ctx.step('nudge', async () => (await ctx.api.notes.create(event.data.conversation_id, { body: \`Nudge: \${String(count)} unanswered\` })).id);
  },
});
`;

/** What must not compile: a field the waited-for event does not have. */
export const NUDGE_TYPE_ERRORS = `import { defineHandler } from 'switchyard';
export default defineHandler({
  id: 'zz-wrong-field',
  on: ['message.received'],
  async handle(_event, ctx) {
    const closed = await ctx.waitForEvent('closed', { event: 'conversation.closed', match: 'conversation', timeout: '1m' });
    const direction: string | undefined = closed?.data.direction;
    return direction === undefined ? undefined : undefined;
  },
});
`;

/** Its test through switchyard/testing: the virtual clock, events, state. */
export const NUDGE_TEST = `import { describe, expect, it } from 'vitest';
import { createEvent, testHandler } from 'switchyard/testing';
import nudge from '../handlers/follow-up-nudge.js';

describe('follow-up-nudge', () => {
  const now = new Date('2025-03-03T10:00:00Z');
  const message = createEvent('message.received');

  it('no reply: sleeps, waits, times out, notes a nudge counted in ctx.state', async () => {
    const run = await testHandler(nudge, message, { now, state: 2 });
    expect(run.outcome).toBe('completed');
    expect(run.waits.map((w) => \`\${w.name} \${w.outcome} \${w.due}\`)).toEqual(['cool-off slept 2025-03-03T10:00:03.000Z', 'reply timed_out 2025-03-03T10:00:11.000Z']);
    expect(run.state).toBe(3);
    expect(run.calls.map((c) => [c.method, c.path, c.body])).toEqual([['POST', '/conversations/38/notes', { body: 'Nudge: 3 unanswered' }]]);
  });

  it('a reply after the cool-off: answered, nothing written', async () => {
    const run = await testHandler(nudge, message, { now, events: [{ event: createEvent('message.sent'), after: '4s' }] });
    expect(run.waits.map((w) => w.outcome)).toEqual(['slept', 'matched']);
    expect(run.calls).toEqual([]);
  });

  it('closed during the cool-off: cancelled', async () => {
    const run = await testHandler(nudge, message, { now, events: [{ event: createEvent('conversation.closed'), after: '1s' }] });
    expect(run.outcome).toBe('cancelled');
    expect(run.calls).toEqual([]);
  });
});
`;
