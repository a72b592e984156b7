import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { isLoopbackHost } from '../util/index.js';
import { WORKSPACE_ID, type WorkspaceSpec } from './workspaces.js';

// WORKSPACES_FILE: read and checked by loadConfig. Every problem names its entry
// (`workspaces[1] ("beta"): …`) and says what was expected; no message ever quotes a
// value of the file (a token or secret may sit anywhere in it, even where it should not).

const FIELDS = 'id, apiUrl, one of token/tokenEnv/tokenFile, secrets, and optionally burst and weight';
const EXAMPLE = '{"workspaces": [{"id": "acme", "apiUrl": "https://…/api/v1", "token": "…", "secrets": ["whsec_…"]}]}';

const intFrom = (min: number, max: number, def: string) => {
  const expected = `expected an integer from ${min} to ${max} (default ${def})`;
  return z.number({ error: expected }).int(expected).min(min, expected).max(max, expected).optional();
};
const text = (expected: string) => z.string({ error: expected });

const entry = z.strictObject(
  {
    id: text('expected the workspace id as text, e.g. "acme"').regex(
      WORKSPACE_ID,
      'expected lower-case letters, digits and dashes (at most 40), starting with a letter or digit',
    ),
    apiUrl: text('expected the API base URL as text, e.g. "https://api.example.com/api/v1"'),
    token: text('expected the API token as text').min(1, 'expected a non-empty token').optional(),
    tokenEnv: text('expected the name of an environment variable').min(1, 'expected a variable name').optional(),
    tokenFile: text('expected the path of a file holding the token').min(1, 'expected a path').optional(),
    secrets: z
      .array(text('expected each secret as text').min(1, 'expected a non-empty secret'), {
        error: 'expected a list of webhook signing secrets, e.g. ["whsec_current", "whsec_previous"]',
      })
      .min(1, 'expected at least one webhook secret (the current one first)'),
    burst: intFrom(1, 10_000, 'WORKSPACE_API_BURST'),
    weight: intFrom(1, 100, '1'),
  },
  { error: `expected an object with ${FIELDS}` },
);

const file = z.strictObject(
  {
    workspaces: z.array(z.unknown(), { error: `expected a list of workspaces, e.g. ${EXAMPLE}` }).min(1, 'expected at least one workspace'),
  },
  { error: `expected an object, e.g. ${EXAMPLE}` },
);

/** A problem of the file, as loadConfig lists them. */
export interface WorkspacesProblem {
  readonly variable: string;
  readonly problem: string;
}

/** One zod issue in words: where, and what was expected (unknown fields named, never a value). */
function issueText(issue: z.core.$ZodIssue, what: string): string {
  const where = issue.path.join('.') || what;
  if (issue.code === 'unrecognized_keys') {
    return `${where}: unknown field${issue.keys.length === 1 ? '' : 's'} ${issue.keys.join(', ')}; expected ${what === 'entry' ? FIELDS : 'workspaces'}`;
  }
  return `${where}: ${issue.message}`;
}

/** The file parsed as JSON, or a problem: unreadable, or where its syntax breaks (never the text around it). */
function readJson(path: string, say: (problem: string) => void): unknown {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (err) {
    say(`cannot read "${path}" (${(err as NodeJS.ErrnoException).code ?? 'error'}); expected a readable JSON file`);
    return undefined;
  }
  try {
    return JSON.parse(raw);
  } catch (err) {
    // V8's message quotes the text near the error, which may be a token: only its position is said.
    const at = /at position (\d+)/.exec((err as Error).message);
    const lines = at ? raw.slice(0, Number(at[1])).split('\n') : undefined;
    const where = lines ? ` at line ${lines.length}, column ${(lines[lines.length - 1] as string).length + 1}` : '';
    say(`"${path}" is not valid JSON (a syntax error${where}); expected ${EXAMPLE}`);
    return undefined;
  }
}

/**
 * Reads and checks WORKSPACES_FILE: every problem named by its entry
 * (`workspaces[1] ("beta"): secrets: …`), never a secret's value. `env` is where
 * `tokenEnv` is read; a relative `tokenFile` is read from the working directory.
 */
export function readWorkspacesFile(
  path: string,
  env: Readonly<Record<string, string | undefined>>,
  defaults: { burst: number },
  problems: WorkspacesProblem[],
): WorkspaceSpec[] | undefined {
  const say = (problem: string) => problems.push({ variable: 'WORKSPACES_FILE', problem });
  const raw = readJson(path, say);
  if (raw === undefined) return undefined;
  const top = file.safeParse(raw);
  if (!top.success) {
    say(`${path}: ${top.error.issues.map((i) => issueText(i, 'the file')).join('; ')}`);
    return undefined;
  }
  const before = problems.length;
  const seen = new Set<string>();
  const out = top.data.workspaces.flatMap((item, i) => {
    const name = entryName(item, i);
    const ws = readEntry(item, env, defaults, (p) => say(`${name}: ${p}`));
    const id = (item as { id?: unknown } | null)?.id;
    if (typeof id === 'string' && WORKSPACE_ID.test(id)) {
      if (seen.has(id)) say(`${name}: id: "${id}" is used by an earlier entry too; expected each workspace once`);
      seen.add(id);
    }
    return ws ? [ws] : [];
  });
  return problems.length === before ? out : undefined;
}

/** `workspaces[1] ("beta")`: the entry's index, and its id when it is a valid one. */
function entryName(item: unknown, i: number): string {
  const id = (item as { id?: unknown } | null)?.id;
  return `workspaces[${i}]${typeof id === 'string' && WORKSPACE_ID.test(id) ? ` ("${id}")` : ''}`;
}

function readEntry(
  item: unknown,
  env: Readonly<Record<string, string | undefined>>,
  defaults: { burst: number },
  say: (problem: string) => void,
): WorkspaceSpec | undefined {
  const parsed = entry.safeParse(item);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) say(issueText(issue, 'entry'));
    return undefined;
  }
  const e = parsed.data;
  const token = entryToken(e, env, say);
  const url = entryUrl(e.apiUrl, (p) => say(`apiUrl: ${p}`));
  if (token === undefined || url === undefined) return undefined;
  return Object.freeze({
    id: e.id,
    apiUrl: url,
    token,
    secrets: Object.freeze([...e.secrets]),
    burst: e.burst ?? defaults.burst,
    weight: e.weight ?? 1,
    ...(e.tokenEnv !== undefined ? { tokenEnv: e.tokenEnv } : {}),
  });
}

function entryToken(
  e: { token?: string | undefined; tokenEnv?: string | undefined; tokenFile?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
  say: (problem: string) => void,
): string | undefined {
  const given = (['token', 'tokenEnv', 'tokenFile'] as const).filter((k) => e[k] !== undefined);
  if (given.length !== 1) {
    say(`expected exactly one of token, tokenEnv or tokenFile, got ${given.length === 0 ? 'none' : given.join(' and ')}`);
    return undefined;
  }
  if (e.token !== undefined) return e.token;
  if (e.tokenEnv !== undefined) {
    const v = (env[e.tokenEnv] ?? '').trim();
    if (v === '') say(`tokenEnv: the variable ${e.tokenEnv} is unset or empty; expected it to hold the workspace's API token`);
    return v === '' ? undefined : v;
  }
  try {
    const v = readFileSync(e.tokenFile as string, 'utf8').trim();
    if (v === '') say(`tokenFile: "${e.tokenFile}" is empty; expected the workspace's API token`);
    return v === '' ? undefined : v;
  } catch (err) {
    say(`tokenFile: cannot read "${e.tokenFile}" (${(err as NodeJS.ErrnoException).code ?? 'error'}); expected a file holding the token`);
    return undefined;
  }
}

function entryUrl(v: string, say: (problem: string) => void): string | undefined {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    say('expected an http(s) URL such as https://api.example.com/api/v1, got an unparseable value');
    return undefined;
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && isLoopbackHost(u.hostname))) {
    say(
      `expected https (plain http only for a local sandbox on 127.0.0.1 or localhost: the token must not travel in clear), got ${u.protocol}//${u.host}`,
    );
    return undefined;
  }
  return v.replace(/\/+$/, '');
}
