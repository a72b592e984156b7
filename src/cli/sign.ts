import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { sign } from '../events/index.js';
import { parseCommandArgs, str } from './args.js';
import { EXIT, UsageError, type Command } from './command.js';
import { loadConfig } from '../config/index.js';
import { cliConfig, signingSecret } from './connect.js';
import { WORKSPACE_OPTION, workspaceHelp } from './flags.js';

const HELP = `Usage: switchyard sign [FILE|-] [--secret S] [--value]

Prints the signature header for the exact bytes of FILE (or stdin, the
default, or "-"): "<SIGNATURE_HEADER>: sha256=<hex>", ready for curl -H.
Nothing is trimmed: sign the same bytes you send (curl --data-binary).

Options:
  --secret S   signing secret (default: the first of WEBHOOK_SECRETS, or of the
               workspace's secrets, else the development secret of a running \`npm run dev\`)
  --value      print only sha256=<hex>
${workspaceHelp(15)}               (not needed with --secret)

Example:
  curl -H "$(switchyard sign body.json)" -H 'content-type: application/json' \\
       --data-binary @body.json http://127.0.0.1:3000/webhooks
`;

async function readStdin(stdin: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks);
}

export const signCommand: Command = {
  name: 'sign',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(
      argv,
      { secret: { type: 'string' }, value: { type: 'boolean' }, ...WORKSPACE_OPTION },
      true,
    );
    if (values.help) {
      io.stdout.write(HELP);
      return EXIT.ok;
    }
    if (positionals.length > 1) throw new UsageError(`expected one file (or - for stdin), got ${positionals.length}`);
    const given = str(values, 'secret');
    const workspace = str(values, 'workspace');
    // With --secret only the signature header is read: no workspace needs choosing then.
    const config =
      given !== undefined && workspace === undefined ? loadConfig(io.env, { requireSecrets: false }) : cliConfig(io, workspace);
    const secret = signingSecret(given, config, io);
    const file = positionals[0];
    let bytes: Buffer;
    if (file === undefined || file === '-') bytes = await readStdin(io.stdin);
    else {
      try {
        bytes = await readFile(resolve(io.cwd, file));
      } catch (err) {
        throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
    }
    const signature = sign(secret, bytes);
    io.stdout.write(values.value ? `${signature}\n` : `${config.signatureHeader}: ${signature}\n`);
    return EXIT.ok;
  },
};
