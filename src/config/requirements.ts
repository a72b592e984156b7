import { isLoopbackHost } from '../util/index.js';

// The checks of loadConfig (./config.ts) that span variables or depend on the process:
// what the schema of one variable cannot say. Each adds its problem to `problems`.

type Env = Readonly<Record<string, string | undefined>>;
type Problems = { variable: string; problem: string }[];

/** Which variables the process needs (`LoadConfigOptions`). */
interface Needs {
  requireSecrets?: boolean;
  requireApiToken?: boolean;
}

const given = (env: Env, name: string): boolean => (env[name] ?? '').trim() !== '';

/** Every check across variables, on the environment with its `_FILE` secrets resolved (`env`: as given). */
export function checkRequirements(resolved: Env, needs: Needs, problems: Problems, env: Env = resolved): void {
  if (given(resolved, 'WORKSPACES_FILE')) {
    // The file names each workspace's secrets, URL and token: the one-workspace variables would be ignored.
    workspacesFileAlone(env, problems);
    adminPair(resolved, problems);
    return;
  }
  if (needs.requireSecrets) secretsRequired(resolved, problems);
  adminPair(resolved, problems);
  if (needs.requireApiToken && given(resolved, 'WORKSPACE_API_URL')) {
    apiTokenRequired(resolved, problems);
    apiUrlSecure(resolved, problems);
  }
}

/**
 * WORKSPACES_FILE replaces the one-workspace variables: given beside it, one of them would be silently ignored.
 * Judged on the environment as given (`env`): a `_FILE` variable is named itself, not the variable it fills.
 */
function workspacesFileAlone(env: Env, problems: Problems): void {
  for (const name of ['WEBHOOK_SECRETS', 'WEBHOOK_SECRETS_FILE', 'WORKSPACE_API_URL', 'WORKSPACE_API_TOKEN', 'WORKSPACE_API_TOKEN_FILE']) {
    if (!given(env, name)) continue;
    problems.push({
      variable: name,
      problem: `set together with WORKSPACES_FILE, which names each workspace's own ${name.startsWith('WEBHOOK') ? 'secrets' : name.includes('URL') ? 'apiUrl' : 'token'}; expected one or the other: unset ${name}`,
    });
  }
  // `/<id>` at the root would answer every one-segment path (/healthz, /metrics, /admin) as an unknown workspace.
  if (/^\/+$/.test((env['WEBHOOK_PATH'] ?? '').trim()))
    problems.push({
      variable: 'WEBHOOK_PATH',
      problem:
        'expected a path below the root with WORKSPACES_FILE (each workspace is served at <WEBHOOK_PATH>/<id>, ' +
        'and /<id> would take /healthz, /readyz, /metrics and /admin), e.g. /webhooks, got "/"',
    });
}

function secretsRequired(resolved: Env, problems: Problems): void {
  // Judged from the variable itself, not the parse result: a bad value elsewhere must not make it look missing.
  const secretsGiven = (resolved['WEBHOOK_SECRETS'] ?? '').split(',').some((s) => s.trim() !== '');
  if (secretsGiven || problems.some((p) => p.variable.startsWith('WEBHOOK_SECRETS'))) return;
  problems.push({
    variable: 'WEBHOOK_SECRETS',
    problem:
      'required to verify deliveries and missing (an empty value counts as missing). Set it to the signing secret from the ' +
      "workspace's webhook settings, e.g. WEBHOOK_SECRETS=whsec_current,whsec_previous (first = current), " +
      'or point WEBHOOK_SECRETS_FILE at a file holding it',
  });
}

function adminPair(resolved: Env, problems: Problems): void {
  const hasUser = given(resolved, 'ADMIN_USER');
  if (hasUser === given(resolved, 'ADMIN_PASSWORD')) return;
  problems.push({
    variable: hasUser ? 'ADMIN_PASSWORD' : 'ADMIN_USER',
    problem: 'ADMIN_USER and ADMIN_PASSWORD must be set together (the dashboard stays off when both are unset)',
  });
}

function apiTokenRequired(resolved: Env, problems: Problems): void {
  if (given(resolved, 'WORKSPACE_API_TOKEN') || problems.some((p) => p.variable.startsWith('WORKSPACE_API_TOKEN'))) return;
  problems.push({
    variable: 'WORKSPACE_API_TOKEN',
    problem:
      'required when WORKSPACE_API_URL is set, and missing: ' +
      'every handler run and schedule tick that calls the API would be dead-lettered. ' +
      'Set it to a token of that workspace (or WORKSPACE_API_TOKEN_FILE to a file holding it), or unset WORKSPACE_API_URL',
  });
}

/** Plain http only for a loopback host (a WORKSPACE_API_URL the schema refused is left to its problem). */
function apiUrlSecure(resolved: Env, problems: Problems): void {
  if (problems.some((p) => p.variable === 'WORKSPACE_API_URL')) return;
  const url = new URL((resolved['WORKSPACE_API_URL'] ?? '').trim());
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    const expected = 'expected https (plain http only for a local sandbox on 127.0.0.1 or localhost: the token must not travel in clear)';
    problems.push({ variable: 'WORKSPACE_API_URL', problem: `${expected}, got http://${url.host}` });
  }
}
