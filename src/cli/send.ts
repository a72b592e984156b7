import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { BuildError, buildDelivery } from '../replay/index.js';
import { sign } from '../events/index.js';
import { printable } from '../util/index.js';
import { parseCommandArgs, str, strs } from './args.js';
import { EXIT, UsageError, type Command } from './command.js';
import { cliConfig, deliveryTarget, signingSecret } from './connect.js';
import { WORKSPACE_OPTION, workspaceHelp } from './flags.js';

const HELP = `Usage: switchyard send <event> [--set path=value]... [--data FILE] [options]

Builds a realistic delivery for an event of the catalogue (defaults from the
shipped fixture, a fresh id, created_at now), applies the overrides, signs it
and sends it. Paths are rooted at the envelope (data.contact_id, created_at);
a path not starting with id, event, created_at or data is taken inside data.
Values are JSON when they parse (42, true, null, "42"), else text.

Options:
  --set path=value   override one field (repeatable)
  --data FILE        JSON file replacing the whole data object (then --set applies)
  --to URL           receiver URL (default: the running \`dev\`/\`start\` of this project,
                     else http://127.0.0.1:$PORT$WEBHOOK_PATH; with --workspace, .../<id>)
  --secret S         signing secret (default: the first of WEBHOOK_SECRETS, or of the
                     workspace's secrets, else the development secret of a running \`npm run dev\`)
${workspaceHelp(21)}  --direct           into Redis (REDIS_URL) instead of HTTP
  --print            print the body and its signature header; send nothing
  --force            send even when the catalogue says the data is invalid

Examples:
  switchyard send conversation.closed --set data.contact_id=36   (a contact of the sandbox's seed)
  switchyard send lead.won --print
`;

export const sendCommand: Command = {
  name: 'send',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(
      argv,
      {
        set: { type: 'string', multiple: true },
        data: { type: 'string' },
        to: { type: 'string' },
        secret: { type: 'string' },
        direct: { type: 'boolean' },
        print: { type: 'boolean' },
        force: { type: 'boolean' },
        ...WORKSPACE_OPTION,
      },
      true,
    );
    if (values.help) {
      io.stdout.write(HELP);
      return EXIT.ok;
    }
    if (positionals.length !== 1) throw new UsageError(`expected exactly one event name, got ${positionals.length}`);
    const dataFile = str(values, 'data');
    let data: unknown;
    if (dataFile !== undefined) {
      try {
        data = JSON.parse(await readFile(resolve(io.cwd, dataFile), 'utf8'));
      } catch (err) {
        throw new UsageError(`--data: cannot read JSON from ${dataFile}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    let built;
    try {
      built = buildDelivery(positionals[0] as string, { sets: strs(values, 'set'), ...(dataFile !== undefined ? { data } : {}) });
    } catch (err) {
      if (err instanceof BuildError) throw new UsageError(err.message);
      throw err;
    }
    if (!built.validation.ok && !values.force) {
      const issues = built.validation.issues?.length ? `\n  ${built.validation.issues.join('\n  ')}` : '';
      throw new UsageError(
        `the delivery would be invalid: ${built.validation.message}${issues}\n(--force sends it anyway, e.g. to see it dead-lettered)`,
      );
    }
    const config = cliConfig(io, str(values, 'workspace'));
    if (values.print) {
      const signature = sign(signingSecret(str(values, 'secret'), config, io), built.bytes);
      io.stdout.write(`${config.signatureHeader}: ${signature}\n${built.bytes.toString('utf8')}\n`);
      return EXIT.ok;
    }
    const { target, close } = await deliveryTarget(
      config,
      { direct: Boolean(values.direct), to: str(values, 'to'), secret: str(values, 'secret') },
      io,
    );
    try {
      const o = await target({ source: 'send', bytes: built.bytes, headers: {}, receivedAt: undefined });
      const status = o.status ? ` (HTTP ${o.status})` : '';
      const detail = o.detail ? `: ${printable(o.detail)}` : '';
      io.stdout.write(`${o.kind} ${built.name} ${printable(o.key)}${status}${detail}\n`);
      return o.kind === 'accepted' || o.kind === 'duplicate' ? EXIT.ok : EXIT.failed;
    } finally {
      await close();
    }
  },
};
