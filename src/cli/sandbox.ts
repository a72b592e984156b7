import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createSandbox, type RunningSandbox, type Sandbox, type SandboxOptions, type SandboxWorkspace } from '../sandbox/index.js';
import { defaultWorkspaceKey, SeedExtras } from '../sandbox/internal.js';
import { intFlag, parseCommandArgs, str } from './args.js';
import { EXIT, UsageError, type CliIo, type Command } from './command.js';
import { workspacesFlag } from './dev-workspaces.js';
import { urlFlag } from './flags.js';

/** `--workspaces N`: N workspaces, the first with `--token`; with a webhook, each one's URL is `<url>/<key>` and secret `<secret>-<key>`. */
function manyWorkspaces(
  count: number,
  token: string | undefined,
  webhook: { webhookUrl: string; secret: string } | undefined,
): SandboxWorkspace[] {
  return Array.from({ length: count }, (_, i) => {
    const key = defaultWorkspaceKey(i);
    const url = webhook ? { webhookUrl: `${webhook.webhookUrl.replace(/\/+$/, '')}/${key}`, secret: `${webhook.secret}-${key}` } : {};
    return { ...(i === 0 && token ? { token } : {}), ...url };
  });
}

/** One line per workspace: its key, name and id, where its events go and with which secret. */
function workspaceLines(sandbox: Sandbox, list: readonly SandboxWorkspace[]): string[] {
  const all = [...sandbox.state.workspaces.values()];
  const width = Math.max(...all.map((ws) => ws.key.length));
  return [
    `Workspaces: ${all.length} (hooks take "workspace": <key or id>)`,
    ...all.map((ws, i) => {
      const w = list[i];
      const events = w?.webhookUrl ? `events to ${w.webhookUrl}, signed with ${w.secret}` : 'events recorded only (no --webhook-url)';
      return `  ${ws.key.padEnd(width)}  ${ws.name} (workspace ${ws.id}): ${events}`;
    }),
  ];
}

const HELP = `Usage: switchyard sandbox [--port 4010] [--host 127.0.0.1] [--token T]
                         [--webhook-url URL --secret S] [--burst 30] [--seed FILE] [--require-tls]
                         [--workspaces N]

Runs a stateful, in-memory simulator of the workspace REST API under /api/v1
and POSTs signed events (X-Service-Signature) to --webhook-url. Prints the base
URL and every seeded token with its label and abilities. Test hooks (request
log, faults, reset, clock, inbound messages) live under /_sandbox; see
docs/sandbox.md. State is lost when the process stops.

Options:
  --port N          port to listen on (default 4010; 0 picks a free one)
  --host H          address to bind (default 127.0.0.1, loopback only)
  --token T         fixed value of the full-access token of the first workspace
  --webhook-url URL where events are delivered (needs --secret)
  --secret S        signing secret for the events
  --burst N         requests per 10 seconds per token (default 30)
  --seed FILE       JSON file of extra contacts and products (see docs/sandbox.md)
  --require-tls     answer 403 unless X-Forwarded-Proto is https (the real API refuses plain HTTP)
  --workspaces N    N workspaces (2 to 100): Acme, Other Co, then empty ones (ws3, ws4, …), each
                    with its own full-access token; with --webhook-url each one's events go to
                    URL/<key> signed with S-<key> (printed), a workspace's events to its URL only

Example:
  switchyard sandbox --webhook-url http://127.0.0.1:3000/webhooks --secret whsec_123
  switchyard sandbox --workspaces 3 --webhook-url http://127.0.0.1:3000/webhooks --secret whsec_123
  curl -H "Authorization: Bearer sbx_full_acme" http://127.0.0.1:4010/api/v1/me
`;

async function loadSeed(cwd: string, file: string): Promise<SeedExtras> {
  let text: string;
  try {
    text = await readFile(resolve(cwd, file), 'utf8');
  } catch (err) {
    throw new UsageError(`--seed: cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`--seed: ${file} is not valid JSON`);
  }
  const parsed = SeedExtras.safeParse(json);
  if (!parsed.success) {
    throw new UsageError(`--seed: ${file}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}

function untilStopped(io: CliIo): Promise<void> {
  return new Promise((res) => {
    if (io.stopSignal.aborted) return res();
    io.stopSignal.addEventListener('abort', () => res(), { once: true });
  });
}

/** `switchyard sandbox`: run the simulator until the process is asked to stop. */
export const sandboxCommand: Command = {
  name: 'sandbox',
  help: HELP,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, {
      port: { type: 'string' },
      host: { type: 'string' },
      token: { type: 'string' },
      'webhook-url': { type: 'string' },
      secret: { type: 'string' },
      burst: { type: 'string' },
      seed: { type: 'string' },
      'require-tls': { type: 'boolean' },
      workspaces: { type: 'string' },
    });
    if (values.help) {
      io.stdout.write(HELP);
      return EXIT.ok;
    }
    const port = intFlag('port', str(values, 'port'), 0, 65535) ?? 4010;
    const burst = intFlag('burst', str(values, 'burst'), 1, 100_000) ?? 30;
    const webhookUrl = str(values, 'webhook-url');
    const secret = str(values, 'secret');
    if (webhookUrl) {
      urlFlag('webhook-url', webhookUrl);
      if (!secret) throw new UsageError('--webhook-url needs --secret (events are always signed)');
    }
    const token = str(values, 'token');
    if (token !== undefined && !/^\S+$/.test(token)) throw new UsageError('--token: must be a non-empty string without spaces');
    const seedFile = str(values, 'seed');
    const count = workspacesFlag(str(values, 'workspaces'), 2);
    const webhook = webhookUrl ? { webhookUrl, secret: secret! } : undefined;
    const options: SandboxOptions = {
      burst,
      ...(count ? { workspaces: manyWorkspaces(count, token, webhook) } : { ...(token ? { token } : {}), ...webhook }),
      ...(seedFile ? { seed: await loadSeed(io.cwd, seedFile) } : {}),
      ...(values['require-tls'] ? { requireTls: true } : {}),
    };

    const sandbox = createSandbox(options);
    let running: RunningSandbox;
    try {
      running = await sandbox.listen(port, str(values, 'host') ?? '127.0.0.1');
    } catch (err) {
      io.stderr.write(`sandbox: cannot listen on port ${port}: ${err instanceof Error ? err.message : String(err)}\n`);
      return EXIT.failed;
    }
    const out = (line = ''): void => {
      io.stdout.write(`${line}\n`);
    };
    out(`Sandbox listening on ${running.url}`);
    out(`Base URL: ${running.baseUrl}`);
    if (count) for (const line of workspaceLines(sandbox, options.workspaces ?? [])) out(line);
    else out(webhookUrl ? `Events: signed POSTs to ${webhookUrl}` : 'Events: recorded only (no --webhook-url); see /_sandbox/events');
    out(`Burst: ${burst} requests per 10 s per token`);
    out('Tokens:');
    for (const t of sandbox.tokens) {
      const notes = [t.expires_at ? `expires ${t.expires_at}` : '', t.legacy ? 'legacy key' : ''].filter(Boolean).join(', ');
      out(`  ${t.label.padEnd(22)} ${t.token.padEnd(20)} workspace ${t.workspace_id}${notes ? ` (${notes})` : ''}`);
      out(`  ${''.padEnd(22)} ${t.abilities.join(' ')}`);
    }
    out(`Hooks: ${running.url}/_sandbox (no auth; see docs/sandbox.md)`);
    await untilStopped(io);
    await running.close();
    return EXIT.ok;
  },
};
