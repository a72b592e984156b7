import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/command.js';
import { doctorCommand } from '../../../src/cli/doctor.js';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { memoryIo } from '../../support/io.js';
import { match } from '../../support/match.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { T } from '../../support/sandbox.js';

// `switchyard doctor` on a deployment of many workspaces (WORKSPACES_FILE), against the sandbox and
// its two seeded workspaces, each with its own tokens: one section per workspace, a bad token fails
// doctor naming its workspace, and no token or secret is ever printed.

const RECIPES = fileURLToPath(new URL('../../../handlers', import.meta.url));
const ONLY_ACME = fileURLToPath(new URL('../../support/handlers/doctor-ws', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sy-doctor-ws-'));
const SECRETS = ['whsec_DOCTOR_acme', 'whsec_DOCTOR_other'];
let files = 0;

interface Check {
  name: string;
  status: string;
  detail: string;
  fix?: string;
  workspace?: string;
}

describe('switchyard doctor with WORKSPACES_FILE', () => {
  let api: RunningSandbox;
  beforeAll(async () => {
    api = await createSandbox().listen(0, '127.0.0.1');
  });
  afterAll(async () => api.close());

  /** A file of the sandbox's two workspaces with these tokens; doctor's output (text or --json) on it. */
  const run = async (tokens: { acme: string; other: string }, ...argv: string[]) => runIn(RECIPES, tokens, ...argv);
  const runIn = async (handlersDir: string, tokens: { acme: string; other: string }, ...argv: string[]) => {
    const file = join(dir, `workspaces-${files++}.json`);
    const workspaces = [
      { id: 'acme', apiUrl: api.baseUrl, token: tokens.acme, secrets: [SECRETS[0]] },
      { id: 'other', apiUrl: api.baseUrl, token: tokens.other, secrets: [SECRETS[1]] },
    ];
    writeFileSync(file, JSON.stringify({ workspaces }));
    const io = memoryIo({
      REDIS_URL: testRedisUrl(),
      QUEUE_PREFIX: uniquePrefix('doctor'),
      HANDLERS_DIR: handlersDir,
      WORKSPACES_FILE: file,
    });
    const code = await doctorCommand.run(argv, io);
    for (const value of [...SECRETS, tokens.acme, tokens.other]) expect(io.out() + io.err()).not.toContain(value);
    return { code, out: io.out() };
  };
  const checksOf = (out: string) => (JSON.parse(out) as { checks: Check[] }).checks;

  it('checks a schedule limited to some workspaces against those workspaces’ tokens only', async () => {
    // acme-report runs in acme only: the other workspace's token (a read-only one) lacks tasks:write, and that is fine.
    const { code, out } = await runIn(ONLY_ACME, { acme: T.full, other: T.read }, '--json');
    const checks = checksOf(out);
    expect(checks.find((c) => c.workspace === 'acme' && c.name === 'schedule acme-report')?.status).toBe('ok');
    expect(checks.filter((c) => c.workspace === 'other' && c.name.startsWith('schedule'))).toEqual([]);
    expect(code).toBe(0);
  });

  it("checks each workspace's token and abilities, one section each", async () => {
    const { code, out } = await run({ acme: T.full, other: T.other }, '--json');
    const checks = checksOf(out);
    expect(checks.filter((c) => c.status === 'fail')).toEqual([]);
    expect(code).toBe(0);
    expect(checks.find((c) => c.name === 'workspaces')?.detail).toMatch(/^2 in .*\.json: acme, other$/);
    for (const ws of ['acme', 'other']) {
      expect(checks.find((c) => c.workspace === ws && c.name === 'api')?.detail).toMatch(
        /^token accepted \(http:\/\/127\.0\.0\.1:\d+\/api\/v1\)/,
      );
      expect(checks.find((c) => c.workspace === ws && c.name === 'handler lead-won')?.status).toBe('ok');
      expect(checks.find((c) => c.workspace === ws && c.name === 'parked runs')?.status).toBe('ok');
    }
    // Configuration, handlers and Redis are the deployment's: checked once, in no workspace's section.
    expect(checks.filter((c) => c.name === 'redis' && c.workspace === undefined)).toHaveLength(1);
    expect(checks.find((c) => c.name === 'webhook secrets')).toBeUndefined();
  });

  it('fails on a bad token of one workspace, naming that workspace; the other passes', async () => {
    const { code, out } = await run({ acme: T.full, other: 'sbx_not_a_token' }, '--json');
    expect(code).toBe(1);
    const failed = checksOf(out).filter((c) => c.status === 'fail');
    expect(failed).toEqual([
      {
        name: 'api',
        status: 'fail',
        workspace: 'other',
        detail: match.stringMatching(/^GET \/me failed \(unauthorized\)/),
        fix: match.stringMatching(/^create a new token .* and give it to workspace other in .*\.json$/),
      },
    ]);
  });

  it('names the workspace whose token lacks abilities, in sections on a terminal', async () => {
    const { code, out } = await run({ acme: T.contacts, other: T.other });
    expect(code).toBe(1);
    const acme = out.slice(out.indexOf('workspace acme:\n'), out.indexOf('workspace other:\n'));
    expect(acme).toMatch(/^FAIL {2}handler follow-up-task: the token lacks /m);
    expect(out.slice(out.indexOf('workspace other:\n'))).not.toMatch(/^FAIL/m);
    // The deployment's checks come first, outside any section.
    expect(out.indexOf('ok    configuration:')).toBeLessThan(out.indexOf('workspace acme:\n'));
  });

  it('--workspace checks that one only; an id the file does not have is a usage error', async () => {
    const { code, out } = await run({ acme: T.full, other: 'sbx_not_a_token' }, '--json', '--workspace', 'acme');
    expect(code).toBe(0);
    expect(new Set(checksOf(out).map((c) => c.workspace))).toEqual(new Set([undefined, 'acme']));
    await expect(run({ acme: T.full, other: T.other }, '--workspace', 'acmee')).rejects.toThrow(UsageError);
  });
});
