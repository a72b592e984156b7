import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { doctorCommand } from '../../../src/cli/doctor.js';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { memoryIo } from '../../support/io.js';
import { match } from '../../support/match.js';
import { testRedisUrl } from '../../support/redis.js';

const RECIPES = fileURLToPath(new URL('../../../handlers', import.meta.url));
const WITH_SCHEDULE = fileURLToPath(new URL('../../support/handlers/schedule-tools', import.meta.url));

describe('switchyard doctor', () => {
  let api: RunningSandbox;
  beforeAll(async () => {
    api = await createSandbox().listen(0);
  });
  afterAll(async () => api.close());

  const run = async (env: Record<string, string>) => {
    const io = memoryIo({ REDIS_URL: testRedisUrl(), HANDLERS_DIR: RECIPES, WORKSPACE_API_URL: api.baseUrl, ...env });
    const code = await doctorCommand.run(['--json'], io);
    return { code, checks: (JSON.parse(io.out()) as { checks: { name: string; status: string; detail: string; fix?: string }[] }).checks };
  };

  it('passes with a full-access token and a reachable Redis', async () => {
    const { code, checks } = await run({ WEBHOOK_SECRETS: 's', WORKSPACE_API_TOKEN: 'sbx_full_acme' });
    expect(checks.filter((c) => c.status === 'fail')).toEqual([]);
    expect(code).toBe(0);
    expect(checks.find((c) => c.name === 'redis')?.detail).toMatch(/version \d/);
    expect(checks.find((c) => c.name === 'handler lead-won')?.status).toBe('ok');
    expect(checks.find((c) => c.name === 'handler lead-won settings')).toMatchObject({
      status: 'ok',
      detail: 'valid (WON_STAGE, LEAD_WON_LABEL)',
    });
  });

  it("checks each handler's settings as the worker will read them, naming the variable and what is expected", async () => {
    const { code, checks } = await run({
      WEBHOOK_SECRETS: 's',
      WORKSPACE_API_TOKEN: 'sbx_full_acme',
      FOLLOW_UP_DAYS: 'soon',
      BUSINESS_HOURS: 'Mon-Fri 09:00-17:00 Mars/Olympus',
    });
    expect(code).toBe(1);
    expect(checks.find((c) => c.name === 'handler follow-up-task settings')).toMatchObject({
      status: 'fail',
      detail: 'FOLLOW_UP_DAYS is invalid: expected a number of days',
      fix: match.stringMatching(/^set them in the environment/),
    });
    expect(checks.find((c) => c.name === 'handler away-reply settings')?.detail).toBe(
      'BUSINESS_HOURS is invalid: unknown time zone "Mars/Olympus"; expected e.g. "Mon-Fri 09:00-17:00 Europe/Berlin"',
    );
    expect(checks.find((c) => c.name === 'handler lead-won settings')?.status).toBe('ok');
  });

  it('names the abilities a narrow token lacks for the loaded handlers', async () => {
    const { code, checks } = await run({ WORKSPACE_API_TOKEN: 'sbx_contacts_acme' });
    expect(code).toBe(1);
    const followUp = checks.find((c) => c.name === 'handler follow-up-task');
    expect(followUp).toMatchObject({ status: 'fail' });
    expect(followUp?.detail).toMatch(/tasks:write/);
    expect(checks.find((c) => c.name === 'webhook secrets')?.status).toBe('warn');
  });

  it('checks schedules as the worker does: a bad or missing setting fails (as `dev` refuses it), abilities the token lacks too', async () => {
    const bad = await run({ HANDLERS_DIR: WITH_SCHEDULE, WEBHOOK_SECRETS: 's', WORKSPACE_API_TOKEN: 'sbx_full_acme', DIGEST_DAYS: 'soon' });
    expect(bad.code).toBe(1);
    expect(bad.checks.find((c) => c.name === 'handlers')?.detail).toMatch(/1 loaded from .*: label-contact; 1 schedule: digest$/);
    expect(bad.checks.find((c) => c.name === 'schedule digest settings')).toMatchObject({
      status: 'fail',
      detail: 'DIGEST_DAYS is invalid: expected number; DIGEST_LABEL is not set: expected string',
      fix: match.stringMatching(/every worker process/),
    });
    expect(bad.checks.find((c) => c.name === 'schedule digest')).toMatchObject({ status: 'ok', detail: 'abilities covered (tasks:read)' });
    const good = await run({
      HANDLERS_DIR: WITH_SCHEDULE,
      WEBHOOK_SECRETS: 's',
      WORKSPACE_API_TOKEN: 'sbx_full_acme',
      DIGEST_LABEL: 'Digest',
    });
    expect(good.checks.filter((c) => c.status === 'fail')).toEqual([]);
    expect(good.code).toBe(0);
    expect(good.checks.find((c) => c.name === 'schedule digest settings')).toMatchObject({
      status: 'ok',
      detail: 'valid (DIGEST_DAYS, DIGEST_LABEL)',
    });
    const narrow = await run({ HANDLERS_DIR: WITH_SCHEDULE, WORKSPACE_API_TOKEN: 'sbx_contacts_acme', DIGEST_LABEL: 'Digest' });
    expect(narrow.code).toBe(1);
    expect(narrow.checks.find((c) => c.name === 'schedule digest')).toMatchObject({ status: 'fail', detail: 'the token lacks tasks:read' });
    expect(narrow.checks.find((c) => c.name === 'handler label-contact')?.status).toBe('ok');
  });

  it('reports an expired token with what to do', async () => {
    const { code, checks } = await run({ WORKSPACE_API_TOKEN: 'sbx_expired_acme' });
    expect(code).toBe(1);
    expect(checks.find((c) => c.name === 'api')).toMatchObject({ status: 'fail' });
    expect(checks.find((c) => c.name === 'api')?.detail).toMatch(/token_expired/);
    expect(checks.find((c) => c.name === 'api')?.fix).toMatch(/new token/);
  });

  it('reports an unreachable Redis and configuration errors', async () => {
    const { code, checks } = await run({ REDIS_URL: 'redis://127.0.0.1:1', WORKSPACE_API_TOKEN: 'sbx_full_acme' });
    expect(code).toBe(1);
    expect(checks.find((c) => c.name === 'redis')?.status).toBe('fail');
    const bad = await run({ PORT: 'nope' });
    expect(bad.checks.find((c) => c.name === 'PORT')?.status).toBe('fail');
  });

  it('a plain-http URL of another host is a FAIL line of the checklist (the other checks still run), not an abort', async () => {
    const { code, checks } = await run({ WORKSPACE_API_URL: 'http://api.example.com/v1', WORKSPACE_API_TOKEN: 'sbx_full_acme' });
    expect(code).toBe(1);
    expect(checks.find((c) => c.name === 'api')).toMatchObject({
      status: 'fail',
      detail: match.stringMatching(
        /^WORKSPACE_API_URL must use https \(plain http only for loopback hosts\), got http:\/\/api\.example\.com/,
      ),
      fix: match.stringMatching(/https URL/),
    });
    expect(checks.find((c) => c.name === 'redis')?.status).toBe('ok');
    expect(checks.find((c) => c.name === 'handler lead-won settings')?.status).toBe('ok');
  });
});
