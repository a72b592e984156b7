import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';
import { parseDuration, parseSize } from '../../../src/util/units.js';
import { match } from '../../support/match.js';

const problemsOf = (env: Record<string, string>, requireSecrets = true) => {
  try {
    loadConfig(env, { requireSecrets });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
};

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({ WEBHOOK_SECRETS: 'a, b' }, { requireSecrets: true });
    expect(c).toMatchObject({
      port: 3000,
      webhookPath: '/webhooks',
      webhookSecrets: ['a', 'b'],
      signatureHeader: 'x-service-signature',
      redisUrl: undefined,
      queuePrefix: 'switchyard',
      dedupeTtlMs: 7 * 86_400_000,
      maxBodyBytes: 1_048_576,
      handlersDir: './handlers',
      workspaceApiBurst: 30,
      logLevel: 'info',
      admin: undefined,
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('refuses to start without WEBHOOK_SECRETS, saying how to set it (empty counts as missing)', () => {
    for (const env of [{}, { WEBHOOK_SECRETS: '' }, { WEBHOOK_SECRETS: ' , ' }] as Record<string, string>[]) {
      const problems = problemsOf(env);
      expect(problems).toHaveLength(1);
      expect(problems[0]?.variable).toBe('WEBHOOK_SECRETS');
      expect(problems[0]?.problem).toMatch(/WEBHOOK_SECRETS=/);
    }
  });

  it('lets commands that do not verify run without secrets', () => {
    expect(loadConfig({}, { requireSecrets: false }).webhookSecrets).toEqual([]);
  });

  it('reports every problem at once, naming the variable and what is expected', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      DEDUPE_TTL: 'soon',
      MAX_BODY_BYTES: 'big',
      REDIS_URL: 'http://x',
      LOG_LEVEL: 'loud',
      WORKSPACE_API_URL: 'nope',
      ADMIN_USER: 'admin',
    });
    const byVar = Object.fromEntries(problems.map((p) => [p.variable, p.problem]));
    expect(Object.keys(byVar).sort()).toEqual(
      ['ADMIN_PASSWORD', 'DEDUPE_TTL', 'LOG_LEVEL', 'MAX_BODY_BYTES', 'PORT', 'REDIS_URL', 'WEBHOOK_SECRETS', 'WORKSPACE_API_URL'].sort(),
    );
    expect(byVar['PORT']).toMatch(/integer/);
    expect(byVar['DEDUPE_TTL']).toMatch(/7d/);
    expect(byVar['MAX_BODY_BYTES']).toMatch(/1mb/);
  });

  it('a bad value in another variable does not make WEBHOOK_SECRETS look missing', () => {
    const problems = problemsOf({ WEBHOOK_SECRETS: 'whsec_a', PORT: 'eighty' });
    expect(problems).toEqual([{ variable: 'PORT', problem: 'expected an integer from 0 to 65535 (default 3000), got "eighty"' }]);
    // An unreadable *_FILE is the one problem, not also a missing WEBHOOK_SECRETS.
    expect(
      problemsOf({ WEBHOOK_SECRETS_FILE: '/nonexistent/secret', LOG_LEVEL: 'loud' })
        .map((p) => p.variable)
        .sort(),
    ).toEqual(['LOG_LEVEL', 'WEBHOOK_SECRETS_FILE']);
  });

  it('each problem says what was given and what is expected', () => {
    const byVar = Object.fromEntries(
      problemsOf({
        WEBHOOK_SECRETS: 's',
        LOG_LEVEL: 'loud',
        INGEST_PUMP: 'maybe',
        WEBHOOK_PATH: 'hooks',
        SIGNATURE_HEADER: 'X Sig',
        QUEUE_PREFIX: 'my prefix',
        HOST: 'http://0.0.0.0:3000',
        CAPTURE_REDACT: 'perhaps',
      }).map((p) => [p.variable, p.problem]),
    );
    expect(byVar).toEqual({
      LOG_LEVEL: 'expected one of fatal, error, warn, info, debug, trace, silent (default info), got "loud"',
      INGEST_PUMP: 'expected auto (pump where a worker runs), on or off (default auto), got "maybe"',
      WEBHOOK_PATH: 'expected a path starting with "/", e.g. /webhooks, got "hooks"',
      SIGNATURE_HEADER: 'expected an HTTP header name such as X-Service-Signature, got "X Sig"',
      QUEUE_PREFIX: 'expected a prefix without spaces, e.g. switchyard or {switchyard} for Redis Cluster, got "my prefix"',
      HOST: match.stringMatching(/^expected an address to bind such as 127\.0\.0\.1 .*, got "http:\/\/0\.0\.0\.0:3000"$/),
      CAPTURE_REDACT: 'expected true or false, got "perhaps"',
    });
    expect(loadConfig({ HOST: '::1', LOG_LEVEL: 'DEBUG', SIGNATURE_HEADER: 'X-Hub-Sig' })).toMatchObject({
      host: '::1',
      logLevel: 'debug',
      signatureHeader: 'x-hub-sig',
    });
    expect(loadConfig({ HOST: 'localhost' }).host).toBe('localhost');
  });

  it('accepts durations like 7d and sizes like 1mb', () => {
    const c = loadConfig({ WEBHOOK_SECRETS: 's', DEDUPE_TTL: '36h', MAX_BODY_BYTES: '2mb', REDIS_URL: 'rediss://u:p@h:6380/2' });
    expect(c.dedupeTtlMs).toBe(36 * 3_600_000);
    expect(c.maxBodyBytes).toBe(2 * 1024 * 1024);
  });

  it('SNAPSHOT_EVERY: 5m by default, off turns it off, a duration under a second or unreadable is refused saying so', () => {
    expect(loadConfig({}).reconcile.snapshotEveryMs).toBe(300_000);
    expect(loadConfig({ SNAPSHOT_EVERY: '30s' }).reconcile.snapshotEveryMs).toBe(30_000);
    expect(loadConfig({ SNAPSHOT_EVERY: 'off' }).reconcile.snapshotEveryMs).toBeUndefined();
    for (const bad of ['500ms', 'often']) {
      expect(problemsOf({ SNAPSHOT_EVERY: bad }, false)).toEqual([
        { variable: 'SNAPSHOT_EVERY', problem: `expected a duration of at least 1s such as 5m, or off (default 5m), got "${bad}"` },
      ]);
    }
  });

  it('KEEP_BODIES: HISTORY_TTL by default, 0 or off keeps none, at most HISTORY_TTL, a bad value refused saying so', () => {
    expect(loadConfig({}).history).toMatchObject({ keepBodiesMs: 7 * 86_400_000, keepBodiesSet: false });
    expect(loadConfig({ HISTORY_TTL: '2d' }).history).toMatchObject({ keepBodiesMs: 2 * 86_400_000, keepBodiesSet: false });
    expect(loadConfig({ KEEP_BODIES: '36h' }).history).toMatchObject({ keepBodiesMs: 36 * 3_600_000, keepBodiesSet: true });
    for (const off of ['0', 'off', 'OFF'])
      expect(loadConfig({ KEEP_BODIES: off }).history).toMatchObject({ keepBodiesMs: 0, keepBodiesSet: true });
    expect(problemsOf({ KEEP_BODIES: 'a week' }, false)).toEqual([
      {
        variable: 'KEEP_BODIES',
        problem: 'expected a duration such as 7d, 48h or 30m, or 0 (or off) to keep no body (default: HISTORY_TTL), got "a week"',
      },
    ]);
    expect(problemsOf({ KEEP_BODIES: '14d' }, false)).toEqual([
      {
        variable: 'KEEP_BODIES',
        problem: 'expected at most HISTORY_TTL (7d): a kept body is found through its delivery\'s history, got "14d"',
      },
    ]);
  });

  it('never puts a secret value in an error message', () => {
    const err = (() => {
      try {
        loadConfig({ WEBHOOK_SECRETS: 'sup3rsecret', ADMIN_USER: 'u', PORT: 'x' });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err?.message).not.toContain('sup3rsecret');
  });

  it('reads secrets from *_FILE (container secrets)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-cfg-'));
    writeFileSync(join(dir, 's'), 'first\nsecond\n');
    writeFileSync(join(dir, 't'), 'tok\n');
    const c = loadConfig({ WEBHOOK_SECRETS_FILE: join(dir, 's'), WORKSPACE_API_TOKEN_FILE: join(dir, 't') }, { requireSecrets: true });
    expect(c.webhookSecrets).toEqual(['first', 'second']);
    expect(c.workspaceApiToken).toBe('tok');
    expect(problemsOf({ WEBHOOK_SECRETS_FILE: join(dir, 'missing') }).map((p) => p.variable)).toContain('WEBHOOK_SECRETS_FILE');
  });

  it('processes that run handlers refuse an API URL without a token, and plain http to another host, naming the variable', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env, { requireApiToken: true });
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems({ WORKSPACE_API_URL: 'https://ws.example.test/api/v1' })).toEqual([
      { variable: 'WORKSPACE_API_TOKEN', problem: match.stringMatching(/^required when WORKSPACE_API_URL is set, and missing/) },
    ]);
    expect(problems({ WORKSPACE_API_URL: 'http://ws.example.test/api/v1', WORKSPACE_API_TOKEN: 't' })).toEqual([
      {
        variable: 'WORKSPACE_API_URL',
        problem:
          'expected https (plain http only for a local sandbox on 127.0.0.1 or localhost: the token must not travel in clear), got http://ws.example.test',
      },
    ]);
    expect(problems({ WORKSPACE_API_URL: 'http://127.0.0.1:4010/api/v1', WORKSPACE_API_TOKEN: 't' })).toEqual([]);
    expect(problems({ WORKSPACE_API_URL: 'http://localhost:4010/api/v1', WORKSPACE_API_TOKEN: 't' })).toEqual([]);
    // Commands that only read (doctor, replay) take it as it is and say so in their own way.
    expect(() => loadConfig({ WORKSPACE_API_URL: 'http://ws.example.test/api/v1' })).not.toThrow();
  });
});

describe('units', () => {
  it.each([
    ['7d', 604_800_000],
    ['12h', 43_200_000],
    ['30m', 1_800_000],
    ['45s', 45_000],
    ['250ms', 250],
    ['90', 90_000],
    ['1.5h', 5_400_000],
  ])('duration %s', (t, ms) => {
    expect(parseDuration(t)).toBe(ms);
  });
  it.each([
    ['1mb', 1_048_576],
    ['512kb', 524_288],
    ['1048576', 1_048_576],
    ['1GB', 1_073_741_824],
  ])('size %s', (t, b) => {
    expect(parseSize(t)).toBe(b);
  });
  it('rejects nonsense', () => {
    expect(parseDuration('7x')).toBeNull();
    expect(parseSize('-1mb')).toBeNull();
  });
});
