import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError, type Command } from '../../../src/cli/command.js';
import { deliveriesCommand } from '../../../src/cli/deliveries.js';
import { dlqCommand } from '../../../src/cli/dlq.js';
import { reconcileCommand } from '../../../src/cli/reconcile.js';
import { replayCommand } from '../../../src/cli/replay.js';
import { recordReceiver } from '../../../src/cli/live-receiver.js';
import { rerunCommand } from '../../../src/cli/rerun.js';
import { sendCommand } from '../../../src/cli/send.js';
import { signCommand } from '../../../src/cli/sign.js';
import { sign } from '../../../src/events/signature.js';
import { traceCommand } from '../../../src/cli/trace.js';
import { waitsCommand } from '../../../src/cli/waits.js';
import { loadConfig } from '../../../src/config/config.js';
import type { DeliverySummary } from '../../../src/history/read.js';
import type { DeadEntry } from '../../../src/queue/dlq.js';
import { buildDelivery } from '../../../src/replay/index.js';
import { startService, type RunningService } from '../../../src/runtime/service.js';
import { prepareWorker } from '../../../src/runtime/worker.js';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { memoryIo } from '../../support/io.js';
import { match } from '../../support/match.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { T } from '../../support/sandbox.js';
import { memoryLogger, waitFor } from '../../support/service.js';

// `--workspace` of the CLI on a deployment of two workspaces (WORKSPACES_FILE): each workspace's
// deliveries arrive at its own receiver path, signed with its own secret (`send --workspace`), and
// deliveries, trace and dlq read only that workspace's history and queues. The deployment runs as
// one service (receiver and worker) serving both, as `switchyard start` runs it.

const HANDLERS = fileURLToPath(new URL('../../support/handlers/flaky', import.meta.url));
const RECIPES = fileURLToPath(new URL('../../../handlers', import.meta.url));
const flags = globalThis as { __syFlakyBroken?: boolean };
const dir = mkdtempSync(join(tmpdir(), 'sy-cli-workspaces-'));
const file = join(dir, 'workspaces.json');
const base = uniquePrefix('cliws');
const workspaces = [
  { id: 'acme', apiUrl: 'http://127.0.0.1:9/api/v1', token: 'tok_acme', secrets: ['whsec_acme_now', 'whsec_acme_old'] },
  { id: 'beta', apiUrl: 'http://127.0.0.1:9/api/v1', token: 'tok_beta', secrets: ['whsec_beta_now'] },
];
writeFileSync(file, JSON.stringify({ workspaces }));
const env = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: base, WORKSPACES_FILE: file, HANDLERS_DIR: HANDLERS };

async function run(cmd: Command, extra: Record<string, string>, ...argv: string[]) {
  const io = memoryIo({ ...env, ...extra });
  const code = await cmd.run(argv, io);
  return { code, out: io.out(), err: io.err() };
}
/** The UsageError (exit 2 in main.ts) a command line is refused with. */
async function refused(cmd: Command, ...argv: string[]): Promise<string> {
  const err = await cmd.run(argv, memoryIo(env)).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UsageError);
  return (err as Error).message;
}

describe('--workspace on a deployment of two workspaces', () => {
  let service: RunningService;
  let receiver: { PORT: string };
  let lines: string[];
  const keys: Record<string, string[]> = { acme: [], beta: [] };
  const listed = async (ws: string) =>
    (JSON.parse((await run(deliveriesCommand, {}, '--json', '--workspace', ws)).out) as { deliveries: DeliverySummary[] }).deliveries
      .map((d) => d.key)
      .sort();
  const dead = async (ws: string) =>
    (JSON.parse((await run(dlqCommand, {}, 'list', '--json', '--workspace', ws)).out) as { entries: DeadEntry[] }).entries;

  beforeAll(async () => {
    flags.__syFlakyBroken = true;
    const runtimeEnv = { ...env, PORT: '0', HOST: '127.0.0.1', SHUTDOWN_TIMEOUT: '3s' };
    const deployment = loadConfig(runtimeEnv, { requireSecrets: true });
    const logged = memoryLogger();
    lines = logged.lines;
    service = await startService({
      config: deployment,
      log: logged.log,
      receiver: true,
      worker: await prepareWorker(deployment, logged.log, runtimeEnv),
    });
    const port = new URL(service.receiver?.http.url as string).port;
    receiver = { PORT: port };
    // Each delivery to its workspace's receiver path, signed with its secret: `send --workspace` finds both.
    for (const [ws, leads] of [
      ['acme', [101, 102]],
      ['beta', [201]],
    ] as const) {
      for (const lead of leads) {
        const r = await run(sendCommand, receiver, 'lead.won', '--set', `data.id=${lead}`, '--workspace', ws);
        expect(r).toMatchObject({ code: 0, out: match.stringMatching(/^accepted lead\.won /) });
        keys[ws]?.push((r.out.split(' ')[2] as string).trim());
      }
    }
    await waitFor(async () => (await dead('acme')).length === 2 && (await dead('beta')).length === 1, 20_000, 50);
  });
  afterAll(async () => {
    delete flags.__syFlakyBroken;
    await service?.close();
  });

  it('deliveries lists only the workspace’s own deliveries', async () => {
    await waitFor(async () => (await listed('acme')).length === 2 && (await listed('beta')).length === 1, 10_000, 50);
    expect(await listed('acme')).toEqual([...(keys['acme'] as string[])].sort());
    expect(await listed('beta')).toEqual(keys['beta']);
  });

  it('trace finds a delivery in its own workspace only, and names the workspace it is in', async () => {
    const key = keys['acme']?.[0] as string;
    const own = await run(traceCommand, {}, key, '--workspace', 'acme');
    expect(own.code).toBe(0);
    expect(own.out).toMatch(new RegExp(`^delivery ${key}  lead\\.won`));
    const other = await run(traceCommand, {}, key, '--workspace', 'beta');
    expect(other.code).toBe(1);
    expect(other.err).toBe(
      `trace: nothing recorded for "${key}" in workspace beta; it is a delivery of workspace acme: switchyard trace ${key} --workspace acme\n`,
    );
    const unknown = await run(traceCommand, {}, 'evt_nowhere', '--workspace', 'beta');
    expect(unknown.err).toMatch(/^trace: nothing recorded for "evt_nowhere": no delivery with this key/);
  });

  it('dlq list, show and purge work on the workspace’s own queues', async () => {
    expect((await dead('acme')).map((e) => e.key).sort()).toEqual([...(keys['acme'] as string[])].sort());
    expect((await dead('beta')).map((e) => e.reason)).toEqual([expect.stringMatching(/broken on lead 201/)]);
    const show = await run(dlqCommand, {}, 'show', keys['beta']?.[0] as string, '--workspace', 'acme');
    expect(show.code).toBe(1);
    const purged = await run(dlqCommand, {}, 'purge', '--all', '--workspace', 'beta');
    expect(purged.code).toBe(0);
    expect(await dead('beta')).toEqual([]);
    expect(await dead('acme')).toHaveLength(2);
  });

  it('send signs with the workspace’s own secret: sent to another workspace’s path, it is refused', async () => {
    const url = `http://127.0.0.1:${receiver.PORT}/webhooks/acme`;
    const wrong = await run(sendCommand, {}, 'lead.won', '--workspace', 'beta', '--to', url);
    expect(wrong.code).toBe(1);
    expect(wrong.out).toMatch(/HTTP 401/);
  });

  it('send delivers to <WEBHOOK_PATH>/<id> of the dev/start running in the project (its record names the deployment’s path)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'sy-cli-live-'));
    const forget = recordReceiver({ stateDir: home, webhookPath: '/webhooks' }, '/', 'start', `http://127.0.0.1:${receiver.PORT}`);
    try {
      const r = await run(sendCommand, { SWITCHYARD_HOME: home }, 'lead.won', '--set', 'data.id=203', '--workspace', 'beta');
      expect(r.err).toContain(
        `note: delivering to the running switchyard start here (pid ${process.pid}) at http://127.0.0.1:${receiver.PORT}/webhooks/beta`,
      );
      expect(r).toMatchObject({ code: 0, out: match.stringMatching(/^accepted lead\.won /) });
      const key = (r.out.split(' ')[2] as string).trim();
      await waitFor(async () => (await listed('beta')).includes(key), 10_000, 50);
    } finally {
      forget();
    }
  });

  it('send --direct and replay --direct put deliveries into the workspace’s own inbox', async () => {
    const before = await listed('beta');
    const body = buildDelivery('lead.won', { sets: ['data.id=202'] });
    const path = join(dir, 'lead-202.json');
    writeFileSync(path, body.bytes);
    const r = await run(replayCommand, {}, path, '--direct', '--workspace', 'beta', '--json');
    expect(r.code).toBe(0);
    await waitFor(async () => (await listed('beta')).length === before.length + 1, 10_000, 50);
    expect(await listed('beta')).toContain(body.key);
    expect(await listed('acme')).not.toContain(body.key);
  });

  it('no token or secret of the file is in any line the service logged', () => {
    expect(lines.join('')).toMatch(/receiver listening/);
    for (const w of workspaces) for (const value of [w.token, ...w.secrets]) expect(lines.join('')).not.toContain(value);
  });

  it('every command refuses to guess among two workspaces, listing them; an unknown id gets a did-you-mean', async () => {
    const choose = 'this deployment serves 2 workspaces (acme, beta): say which with --workspace <id>';
    expect(await refused(deliveriesCommand)).toBe(choose);
    expect(await refused(traceCommand, 'evt_x')).toBe(choose);
    expect(await refused(waitsCommand)).toBe(choose);
    expect(await refused(waitsCommand, 'cancel', 'evt_x')).toBe(choose);
    expect(await refused(waitsCommand, 'wake', 'evt_x')).toBe(choose);
    expect(await refused(dlqCommand, 'list')).toBe(choose);
    expect(await refused(dlqCommand, 'resume')).toBe(choose);
    expect(await refused(reconcileCommand, '--since', '1h')).toBe(choose);
    expect(await refused(rerunCommand, 'status')).toBe(choose);
    expect(await refused(rerunCommand, 'cancel', 'rr-x')).toBe(choose);
    expect(await refused(rerunCommand, '--handler', 'flaky', '--dry-run')).toBe(choose);
    expect(await refused(sendCommand, 'lead.won')).toBe(choose);
    expect(await refused(replayCommand, join(dir, 'lead-202.json'))).toBe(choose);
    expect(await refused(deliveriesCommand, '--workspace', 'acem')).toMatch(
      /^--workspace acem: no such workspace in .*workspaces\.json \(did you mean acme\?\); expected one of acme, beta$/,
    );
  });

  it('sign signs with the workspace’s current secret; --secret needs no workspace', async () => {
    const path = join(dir, 'body.json');
    writeFileSync(path, '{"id":"evt_sign"}');
    const own = await run(signCommand, {}, path, '--value', '--workspace', 'acme');
    expect(own.out).toBe(`${sign('whsec_acme_now', Buffer.from('{"id":"evt_sign"}'))}\n`);
    const given = await run(signCommand, {}, path, '--value', '--secret', 'x');
    expect(given.out).toBe(`${sign('x', Buffer.from('{"id":"evt_sign"}'))}\n`);
    expect(await refused(signCommand, path)).toBe('this deployment serves 2 workspaces (acme, beta): say which with --workspace <id>');
  });

  it('waits and rerun status read the chosen workspace', async () => {
    const waits = await run(waitsCommand, {}, '--json', '--workspace', 'acme');
    expect(JSON.parse(waits.out)).toMatchObject({ total: 0, waits: [] });
    const reruns = await run(rerunCommand, {}, 'status', '--json', '--workspace', 'beta');
    expect(JSON.parse(reruns.out)).toEqual([]);
  });
});

describe('--workspace: the API of the chosen workspace, with its token', () => {
  let api: RunningSandbox;
  let apiEnv: Record<string, string>;
  beforeAll(async () => {
    api = await createSandbox().listen(0, '127.0.0.1');
    const apiFile = join(dir, 'sandbox-workspaces.json');
    const entry = (id: string, token: string) => ({ id, apiUrl: api.baseUrl, token, secrets: [`whsec_${id}`] });
    writeFileSync(apiFile, JSON.stringify({ workspaces: [entry('acme', T.full), entry('other', T.other)] }));
    apiEnv = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: uniquePrefix('cliwsapi'), WORKSPACES_FILE: apiFile, HANDLERS_DIR: RECIPES };
  });
  afterAll(async () => api?.close());

  /** How many API calls the sandbox logged for each seeded workspace's full-access token. */
  const calls = async () => {
    const count = async (label: string) => {
      const r = await fetch(`${api.url}/_sandbox/requests?token=${label}`);
      return ((await r.json()) as { data: unknown[] }).data.length;
    };
    return { acme: await count('full'), other: await count('other-workspace-full') };
  };
  const runApi = async (cmd: Command, ...argv: string[]) => {
    const io = memoryIo(apiEnv);
    const code = await cmd.run(argv, io);
    return { code, out: io.out(), err: io.err() };
  };

  it('reconcile reads the chosen workspace’s API with its token only', async () => {
    const before = await calls();
    const r = await runApi(reconcileCommand, '--since', '1h', '--dry-run', '--json', '--workspace', 'other');
    expect(r.code).toBe(0);
    const after = await calls();
    expect(after.other).toBeGreaterThan(before.other);
    expect(after.acme).toBe(before.acme);
  });

  it('replay --inline runs the handlers against the chosen workspace’s API with its token only', async () => {
    const body = buildDelivery('lead.won', { sets: ['data.id=901'] });
    const path = join(dir, 'lead-901.json');
    writeFileSync(path, body.bytes);
    const before = await calls();
    await runApi(replayCommand, path, '--inline', '--handler', 'lead-won', '--workspace', 'acme');
    const after = await calls();
    expect(after.acme).toBeGreaterThan(before.acme);
    expect(after.other).toBe(before.other);
  });
});

describe('--workspace on a deployment of one', () => {
  it('is optional, default is accepted, any other id is refused', async () => {
    const one = { REDIS_URL: testRedisUrl(), QUEUE_PREFIX: uniquePrefix('cliws1') };
    const ok = await deliveriesCommand.run(['--json', '--workspace', 'default'], memoryIo(one));
    expect(ok).toBe(0);
    const err = await deliveriesCommand.run(['--workspace', 'acme'], memoryIo(one)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/^--workspace acme: this deployment serves one workspace \(no WORKSPACES_FILE\)/);
  });
});
