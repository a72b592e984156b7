/**
 * `switchyard replay --inline` of workflows, the built CLI on the shipped
 * fixtures against a sandbox on a loopback port: the shipped sla-escalation
 * recipe's wait answered by the input's reply, cancelled by its close, or
 * timed out (then its writes, dry); a handler that sleeps and keeps state.
 * Nothing waits for real: each run ends at once, its lines say what it did.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';

const FIXTURES = fileURLToPath(new URL('../../../fixtures', import.meta.url));
const HANDLERS = fileURLToPath(new URL('../../../handlers', import.meta.url));
const NAPPER = fileURLToPath(new URL('../../support/handlers/replay-workflow', import.meta.url));
const fixture = (name: string): string => `${FIXTURES}/${name}.json`;

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ burst: 1000 }).listen(0);
});
afterAll(async () => sandbox?.close());

async function replay(handlersDir: string, args: string[]): Promise<{ code: number | null; out: string }> {
  const cli = runCli(['replay', ...args, '--inline', '--dry-run', '--concurrency', '1'], {
    WORKSPACE_API_URL: sandbox.baseUrl,
    WORKSPACE_API_TOKEN: 'sbx_full_acme',
    HANDLERS_DIR: handlersDir,
    SLA_ASSIGNEE: '21',
    SLA_MINUTES: '60',
  });
  try {
    const code = await cli.exited;
    return { code, out: cli.output() };
  } finally {
    await cli.stop('SIGKILL', 1000);
  }
}

const WAIT = 'wait "agent-reply" for message.sent (timeout 1h)';

describe('replay --inline of workflows (built CLI, shipped fixtures)', () => {
  it('sla-escalation: its wait is answered by the reply among the fixtures, though --handler replays only the message', async () => {
    const { code, out } = await replay(HANDLERS, [FIXTURES, '--handler', 'sla-escalation']);
    expect(code, out).toBe(0);
    expect(out).toMatch(/\n {2}✓ sla-escalation completed in \d+ ms\n/);
    expect(out).toContain(
      `      ${WAIT} — answered by message.sent evt_01JNK7YB3F0QW8C2ZK9H4N6E7D received 2025-03-04T10:02:41.118Z (from the replay input)\n`,
    );
    expect(out).toMatch(/1 deliveries in .*: 1 accepted, 0 duplicate, 0 rejected, 0 failed/);
    expect(out).not.toMatch(/ dry /);
  });

  it('sla-escalation: the conversation closed before the deadline cancels the run, nothing is written', async () => {
    const { code, out } = await replay(HANDLERS, [
      fixture('message.received'),
      fixture('conversation.closed'),
      '--handler',
      'sla-escalation',
    ]);
    expect(code, out).toBe(0);
    expect(out).toMatch(
      /\n {2}⊘ sla-escalation cancelled after \d+ ms \(a cancelOn event of the replay input came while it slept or waited\)\n/,
    );
    expect(out).toContain(
      `      ${WAIT} — cancelled by conversation.closed evt_01JNK8ZC0A7M3Q5T1V9X2B4D6F received 2025-03-04T10:20:01.774Z (cancelOn, from the replay input): nothing after it runs\n`,
    );
    expect(out).not.toMatch(/conversations\.|notes\./);
  });

  it('sla-escalation: no reply in the input: the wait times out (null) and the escalation is printed, dry', async () => {
    const { code, out } = await replay(HANDLERS, [fixture('message.received'), '--handler', 'sla-escalation']);
    expect(code, out).toBe(0);
    expect(out).toMatch(
      new RegExp(
        [
          ' {2}✓ sla-escalation completed in \\d+ ms',
          ` {6}${WAIT.replace(/[()]/g, '\\$&')} — timed out: no matching event in the replay input before 2025-03-04T10:58:13\\.402Z; returns null \\(inline replay does not wait\\)`,
          ' {6}GET +conversations\\.get → 200',
          ' {6}PATCH +conversations\\.update → 200 \\(dry\\)',
          ' {8}dry PATCH /conversations/38 .*',
          ' {6}POST +notes\\.create → 201 \\(dry\\)',
          ' {8}dry POST /conversations/38/notes .*"mentions":\\[21\\].*',
        ].join('\\n'),
      ),
    );
  });

  it("a sleep passes at once with its due time; ctx.state is kept across the replay's deliveries", async () => {
    const { code, out } = await replay(NAPPER, [fixture('message.received'), fixture('message.received'), '--new-ids']);
    expect(code, out).toBe(0);
    const runs = out.split(/^accepted +message\.received .*$/m).slice(1);
    expect(runs).toHaveLength(2);
    runs.forEach((run, i) => {
      expect(run).toMatch(
        new RegExp(
          [
            ' {2}✓ replay-napper completed in \\d+ ms',
            ' {6}sleep "nap" 15m — skipped \\(inline replay does not wait; due 2025-03-04T10:13:13\\.402Z\\)',
            ` {6}state update \\(conversation:38\\) ← ${i + 1} \\(in memory for this replay\\)`,
            ' {6}POST +notes\\.create → 201 \\(dry\\)',
            ` {8}dry POST /conversations/38/notes .*"body":"message ${i + 1} after a nap"`,
          ].join('\\n'),
        ),
      );
    });
  });
});
