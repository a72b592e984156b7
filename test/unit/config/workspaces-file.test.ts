import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';

// WORKSPACES_FILE as loadConfig reads it: each error names its entry and what was expected,
// and no message ever quotes a token or a secret (they are searched for in every message).

const dir = mkdtempSync(join(tmpdir(), 'sy-workspaces-'));
let n = 0;
const SECRETS = ['whsec_SECRETVALUE_acme_1', 'whsec_SECRETVALUE_acme_0', 'whsec_SECRETVALUE_beta_1'];
const TOKENS = ['tok_TOKENVALUE_acme', 'tok_TOKENVALUE_beta', 'tok_TOKENVALUE_env', 'tok_TOKENVALUE_file'];

/** A file of `text` in the test's directory; its path. */
function file(text: string): string {
  const path = join(dir, `f${n++}`);
  writeFileSync(path, text);
  return path;
}
const acme = { id: 'acme', apiUrl: 'https://api.example.com/api/v1/', token: TOKENS[0], secrets: [SECRETS[0], SECRETS[1]] };
const beta = { id: 'beta', apiUrl: 'https://beta.example.com/api/v1', token: TOKENS[1], secrets: [SECRETS[2]] };
const withFile = (workspaces: unknown, env: Record<string, string> = {}) =>
  loadConfig({ WORKSPACES_FILE: file(JSON.stringify({ workspaces })), ...env }, { requireSecrets: true, requireApiToken: true });

/** The problems of a configuration that must be refused; each checked for tokens and secrets. */
function problemsOf(load: () => unknown): { variable: string; problem: string }[] {
  try {
    load();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as ConfigError).message;
    for (const value of [...SECRETS, ...TOKENS]) expect(message).not.toContain(value);
    return [...(err as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}
const problems = (workspaces: unknown, env: Record<string, string> = {}) =>
  problemsOf(() => withFile(workspaces, env)).map((p) => `${p.variable}: ${p.problem}`);

describe('WORKSPACES_FILE', () => {
  it('reads each workspace: its URL (no trailing slash), token, secrets, burst (default WORKSPACE_API_BURST) and weight', () => {
    const c = withFile([acme, { ...beta, burst: 60, weight: 3 }], { WORKSPACE_API_BURST: '45' });
    expect(c.workspaces).toEqual([
      { id: 'acme', apiUrl: 'https://api.example.com/api/v1', token: TOKENS[0], secrets: [SECRETS[0], SECRETS[1]], burst: 45, weight: 1 },
      { id: 'beta', apiUrl: 'https://beta.example.com/api/v1', token: TOKENS[1], secrets: [SECRETS[2]], burst: 60, weight: 3 },
    ]);
    expect(c.workspacesFile).toMatch(/f\d+$/);
    expect(c.workspaceId).toBe('default');
  });

  it('reads a token from tokenEnv or tokenFile (trimmed)', () => {
    const c = withFile(
      [
        { ...acme, token: undefined, tokenEnv: 'ACME_TOKEN' },
        { ...beta, token: undefined, tokenFile: file(`${TOKENS[3]}\n`) },
      ],
      {
        ACME_TOKEN: ` ${TOKENS[2]} `,
      },
    );
    expect(c.workspaces?.map((w) => w.token)).toEqual([TOKENS[2], TOKENS[3]]);
  });

  it('says a file it cannot read, and one that is not JSON (where, never the text near the error)', () => {
    const missing = problemsOf(() => loadConfig({ WORKSPACES_FILE: join(dir, 'nope.json') }));
    expect(missing.map((p) => p.variable)).toEqual(['WORKSPACES_FILE']);
    expect(missing[0]?.problem).toMatch(/^cannot read ".*nope\.json" \(ENOENT\); expected a readable JSON file$/);
    // The token is right where the syntax breaks: V8's own message would quote it.
    for (const text of [`{"workspaces": [{"id": "acme", "token": ${TOKENS[0]}}]}`, `{"workspaces": [{"token": "${TOKENS[0]}"`]) {
      const p = problemsOf(() => loadConfig({ WORKSPACES_FILE: file(text) }));
      expect(p).toHaveLength(1);
      expect(p[0]?.problem).toMatch(/is not valid JSON \(a syntax error( at line 1, column \d+)?\); expected \{"workspaces"/);
    }
    // A missing comma on line 3: its line and column (where "id" starts) are said.
    const line3 = `    {"token": "${TOKENS[0]}" "id": 1}`;
    const p = problemsOf(() => loadConfig({ WORKSPACES_FILE: file(`{\n  "workspaces": [\n${line3}`) }));
    expect(p[0]?.problem).toContain(`a syntax error at line 3, column ${line3.indexOf('"id"') + 1})`);
  });

  it('says what the file must hold', () => {
    const top = (text: string) => problemsOf(() => loadConfig({ WORKSPACES_FILE: file(text) })).map((p) => p.problem);
    expect(top('[]')).toEqual([expect.stringMatching(/: the file: expected an object, e\.g\. \{"workspaces"/)]);
    expect(top('{}')).toEqual([expect.stringMatching(/: workspaces: expected a list of workspaces/)]);
    expect(top('{"workspaces": []}')).toEqual([expect.stringMatching(/: workspaces: expected at least one workspace/)]);
    expect(top('{"workspaces": [{}], "secret": 1}')).toEqual([
      expect.stringMatching(/: the file: unknown field secret; expected workspaces/),
    ]);
  });

  it('names the entry of each missing or wrong field, and says what was expected', () => {
    expect(problems([{ apiUrl: 'https://x.example', token: 't' }, 'acme', { ...acme, tokn: 'x', burst: 0, weight: 101 }])).toEqual([
      'WORKSPACES_FILE: workspaces[0]: id: expected the workspace id as text, e.g. "acme"',
      'WORKSPACES_FILE: workspaces[0]: secrets: expected a list of webhook signing secrets, e.g. ["whsec_current", "whsec_previous"]',
      expect.stringMatching(
        /^WORKSPACES_FILE: workspaces\[1\]: entry: expected an object with id, apiUrl, one of token\/tokenEnv\/tokenFile, secrets/,
      ),
      'WORKSPACES_FILE: workspaces[2] ("acme"): burst: expected an integer from 1 to 10000 (default WORKSPACE_API_BURST)',
      'WORKSPACES_FILE: workspaces[2] ("acme"): weight: expected an integer from 1 to 100 (default 1)',
      expect.stringMatching(/^WORKSPACES_FILE: workspaces\[2\] \("acme"\): entry: unknown field tokn; expected id, apiUrl/),
    ]);
    expect(
      problems([
        { ...acme, apiUrl: undefined, secrets: [] },
        { ...beta, secrets: [''], burst: 1.5 },
      ]),
    ).toEqual([
      'WORKSPACES_FILE: workspaces[0] ("acme"): apiUrl: expected the API base URL as text, e.g. "https://api.example.com/api/v1"',
      'WORKSPACES_FILE: workspaces[0] ("acme"): secrets: expected at least one webhook secret (the current one first)',
      'WORKSPACES_FILE: workspaces[1] ("beta"): secrets.0: expected a non-empty secret',
      'WORKSPACES_FILE: workspaces[1] ("beta"): burst: expected an integer from 1 to 10000 (default WORKSPACE_API_BURST)',
    ]);
  });

  it('refuses a bad id and an id used twice', () => {
    expect(problems([{ ...acme, id: 'Acme Corp' }])).toEqual([
      'WORKSPACES_FILE: workspaces[0]: id: expected lower-case letters, digits and dashes (at most 40), starting with a letter or digit',
    ]);
    expect(problems([{ ...acme, id: `a${'b'.repeat(40)}` }])[0]).toMatch(/workspaces\[0\]: id: expected .*at most 40/);
    // The second is named even when the first is wrong otherwise.
    expect(problems([{ ...acme, token: undefined }, acme])).toEqual([
      'WORKSPACES_FILE: workspaces[0] ("acme"): expected exactly one of token, tokenEnv or tokenFile, got none',
      'WORKSPACES_FILE: workspaces[1] ("acme"): id: "acme" is used by an earlier entry too; expected each workspace once',
    ]);
  });

  it('wants exactly one of token, tokenEnv and tokenFile, and a token there', () => {
    expect(problems([{ ...acme, tokenEnv: 'ACME_TOKEN' }], { ACME_TOKEN: TOKENS[2] as string })).toEqual([
      'WORKSPACES_FILE: workspaces[0] ("acme"): expected exactly one of token, tokenEnv or tokenFile, got token and tokenEnv',
    ]);
    expect(problems([{ ...beta, token: '' }])).toEqual(['WORKSPACES_FILE: workspaces[0] ("beta"): token: expected a non-empty token']);
    expect(problems([{ ...acme, token: undefined, tokenEnv: 'ACME_TOKEN' }], { ACME_TOKEN: ' ' })).toEqual([
      `WORKSPACES_FILE: workspaces[0] ("acme"): tokenEnv: the variable ACME_TOKEN is unset or empty; expected it to hold the workspace's API token`,
    ]);
    const empty = file('\n');
    expect(problems([{ ...acme, token: undefined, tokenFile: empty }])).toEqual([
      `WORKSPACES_FILE: workspaces[0] ("acme"): tokenFile: "${empty}" is empty; expected the workspace's API token`,
    ]);
    const unreadable = join(dir, 'no-token');
    expect(problems([{ ...acme, token: undefined, tokenFile: unreadable }])).toEqual([
      `WORKSPACES_FILE: workspaces[0] ("acme"): tokenFile: cannot read "${unreadable}" (ENOENT); expected a file holding the token`,
    ]);
  });

  it('wants https, plain http only to a loopback host', () => {
    expect(
      problems([
        { ...acme, apiUrl: 'http://api.example.com/api/v1' },
        { ...beta, apiUrl: 'not a url' },
      ]),
    ).toEqual([
      expect.stringMatching(/^WORKSPACES_FILE: workspaces\[0\] \("acme"\): apiUrl: expected https .* got http:\/\/api\.example\.com$/),
      'WORKSPACES_FILE: workspaces[1] ("beta"): apiUrl: expected an http(s) URL such as https://api.example.com/api/v1, got an unparseable value',
    ]);
    for (const host of ['127.0.0.1:4010', 'localhost:4010', '[::1]:4010']) {
      expect(withFile([{ ...acme, apiUrl: `http://${host}/api/v1` }]).workspaces?.[0]?.apiUrl).toBe(`http://${host}/api/v1`);
    }
  });

  it('refuses the one-workspace variables beside it, each named (a _FILE form by its own name)', () => {
    const secretsFile = file(`${SECRETS[0]}\n`);
    const tokenFile = file(TOKENS[0] as string);
    const env = {
      WEBHOOK_SECRETS_FILE: secretsFile,
      WORKSPACE_API_URL: 'https://api.example.com/api/v1',
      WORKSPACE_API_TOKEN_FILE: tokenFile,
    };
    expect(problemsOf(() => withFile([acme], env)).map((p) => p.variable)).toEqual([
      'WEBHOOK_SECRETS_FILE',
      'WORKSPACE_API_URL',
      'WORKSPACE_API_TOKEN_FILE',
    ]);
    const plain = problemsOf(() => withFile([acme], { WEBHOOK_SECRETS: SECRETS[2] as string, WORKSPACE_API_TOKEN: TOKENS[1] as string }));
    expect(plain).toEqual([
      {
        variable: 'WEBHOOK_SECRETS',
        problem:
          "set together with WORKSPACES_FILE, which names each workspace's own secrets; expected one or the other: unset WEBHOOK_SECRETS",
      },
      {
        variable: 'WORKSPACE_API_TOKEN',
        problem:
          "set together with WORKSPACES_FILE, which names each workspace's own token; expected one or the other: unset WORKSPACE_API_TOKEN",
      },
    ]);
  });

  it('refuses WEBHOOK_PATH=/ beside it: /<id> would take /healthz, /metrics and /admin', () => {
    expect(problemsOf(() => withFile([acme], { WEBHOOK_PATH: '/' })).map((p) => [p.variable, p.problem.slice(0, 48)])).toEqual([
      ['WEBHOOK_PATH', 'expected a path below the root with WORKSPACES_F'],
    ]);
    expect(withFile([acme], { WEBHOOK_PATH: '/hooks' }).webhookPath).toBe('/hooks');
  });

  it('does not need WEBHOOK_SECRETS or WORKSPACE_API_TOKEN beside it (each entry has its own)', () => {
    expect(withFile([acme]).webhookSecrets).toEqual([]);
  });

  it('reports every problem of the file with those of other variables, at once', () => {
    const p = problemsOf(() => loadConfig({ PORT: 'x', WORKSPACES_FILE: file(JSON.stringify({ workspaces: [{ ...acme, id: 'A' }] })) }));
    expect(p.map((x) => x.variable)).toEqual(['PORT', 'WORKSPACES_FILE']);
  });
});
