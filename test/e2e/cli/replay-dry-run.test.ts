/**
 * `switchyard replay fixtures/ --inline --dry-run`, the built CLI against a
 * sandbox on a free loopback port: the recipes run, their writes are printed
 * and never sent (the sandbox's request log holds reads only, its state is
 * unchanged, it emitted no event).
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { runCli } from '../../support/cli.js';
import { match } from '../../support/match.js';

const FIXTURES = fileURLToPath(new URL('../../../fixtures', import.meta.url));
const HANDLERS = fileURLToPath(new URL('../../../handlers', import.meta.url));
/** Every shipped recipe on; the business hours put the message.received fixture outside them, so away-reply sends. */
const ALL_RECIPES_ON = { MERGE_DUPLICATES: 'true', BUSINESS_HOURS: 'Sat 09:00-10:00 UTC', FOLLOW_UP_DAYS: '2' };

let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await createSandbox({ burst: 1000 }).listen(0);
});
afterAll(async () => {
  await sandbox?.close();
});

const json = async <T>(path: string, init?: RequestInit): Promise<T> =>
  ((await (await fetch(`${sandbox.url}${path}`, init)).json()) as { data: T }).data;
const api = <T>(path: string) => json<T>(`/api/v1${path}`, { headers: { authorization: 'Bearer sbx_full_acme' } });

/** What the replay's writes would change: record ids, the contact's stage and labels, the thread's messages, the tasks, the events. */
async function state(): Promise<unknown> {
  const snapshot = {
    workspaces: await json('/_sandbox/workspaces'),
    bob: await api('/contacts/36?include=labels,lifecycle'),
    messages: await api('/conversations/38/messages?per_page=100'),
    tasks: await api('/tasks?per_page=100'),
    events: await json('/_sandbox/events'),
  };
  await fetch(`${sandbox.url}/_sandbox/requests`, { method: 'DELETE' });
  return snapshot;
}

/** The API requests the sandbox logged, as `METHOD /path`. */
const logged = async (): Promise<string[]> =>
  (await json<{ method: string; path: string }[]>('/_sandbox/requests')).map((r) => `${r.method} ${r.path}`);
const isRead = (r: string): boolean => r.startsWith('GET ') || r === 'POST /contacts/search';

async function replay(...extra: string[]): Promise<{ code: number | null; out: string }> {
  const cli = runCli(['replay', FIXTURES, '--inline', '--dry-run', '--concurrency', '1', ...extra], {
    WORKSPACE_API_URL: sandbox.baseUrl,
    WORKSPACE_API_TOKEN: 'sbx_full_acme',
    HANDLERS_DIR: HANDLERS,
    ...ALL_RECIPES_ON,
  });
  try {
    const code = await cli.exited;
    return { code, out: cli.output() };
  } finally {
    await cli.stop('SIGKILL', 1000);
  }
}

describe('replay --inline --dry-run against the sandbox', () => {
  it('runs every recipe to success, prints each would-be write marked dry, and sends none: reads only, state unchanged', async () => {
    const before = await state();
    const { code, out } = await replay();
    expect(code, out).toBe(0);
    for (const id of ['follow-up-task', 'lead-won', 'away-reply', 'merge-duplicates']) expect(out).toMatch(new RegExp(`✓ ${id} completed`));
    expect(out).toMatch(/14 deliveries in .*: 14 accepted, 0 duplicate, 0 rejected, 0 failed/);
    const key = 'Idempotency-Key: sy_replay_[\\w-]{32}';
    expect(out).toMatch(
      new RegExp(
        `POST +tasks\\.create → 201 \\(dry\\)\\n +dry POST /tasks  ${key}  \\{"title":"Follow up with Alice Adams","type":"call","due_at":"[^"]+","contact_id":35,"assignee_id":21\\}\\n`,
      ),
    );
    expect(out).toMatch(
      new RegExp(
        `POST +messages\\.send → 201 \\(dry\\)\\n +dry POST /conversations/38/messages  ${key}  \\{"type":"text","text":"Thanks for your message![^"]*"\\}\\n`,
      ),
    );
    expect(out).toMatch(
      new RegExp(`PUT +contacts\\.setLifecycle → 200 \\(dry\\)\\n +dry PUT /contacts/36/lifecycle  ${key}  \\{"stage":"Customer"\\}\\n`),
    );
    expect(out).toMatch(
      new RegExp(
        `POST +contacts\\.labels\\.add → 200 \\(dry\\)\\n +dry POST /contacts/36/labels  ${key}  \\{"labels":\\["customer"\\]\\}\\n`,
      ),
    );
    expect(out.match(/^ +dry /gm)).toHaveLength(4);
    // lead-won's check of the stage it moved to saw the Customer stage's outcome: no warning.
    expect(out).not.toMatch(/WON_STAGE is not a stage/);

    const requests = await logged();
    expect(requests).toEqual(expect.arrayContaining(['GET /contacts/35', 'GET /conversations/38/messages']));
    expect(requests.filter((r) => !isRead(r))).toEqual([]);
    expect(await state()).toEqual(before);
  });

  it('--json lists the writes as fields (method, path, Idempotency-Key, body, delivery, handler, dry); still nothing written', async () => {
    const before = await state();
    const { code, out } = await replay('--json');
    expect(code, out).toBe(0);
    const summary = JSON.parse(out.split('\n').find((l) => l.startsWith('{'))!) as {
      accepted: number;
      dryRun: boolean;
      writes: Record<string, string>[];
    };
    expect(summary).toMatchObject({ accepted: 14, failed: 0, dryRun: true });
    expect(summary.writes.map((w) => `${w['handler']} ${w['method']} ${w['path']}`).sort()).toEqual([
      'away-reply POST /conversations/38/messages',
      'follow-up-task POST /tasks',
      'lead-won POST /contacts/36/labels',
      'lead-won PUT /contacts/36/lifecycle',
    ]);
    for (const w of summary.writes) {
      expect(w).toMatchObject({
        dry: true,
        idempotencyKey: match.stringMatching(/^sy_replay_/),
        delivery: match.stringMatching(/^evt_/),
        body: match.any(Object),
      });
    }
    expect(summary.writes.find((w) => w['op'] === 'contacts.labels.add')).toMatchObject({ status: 200, body: { labels: ['customer'] } });
    expect((await logged()).filter((r) => !isRead(r))).toEqual([]);
    expect(await state()).toEqual(before);
  });

  it('without --inline is a usage error (exit 2)', async () => {
    const cli = runCli(['replay', FIXTURES, '--dry-run'], {});
    try {
      expect(await cli.exited).toBe(2);
      expect(cli.output()).toMatch(/--dry-run applies to --inline only/);
    } finally {
      await cli.stop('SIGKILL', 1000);
    }
  });
});
