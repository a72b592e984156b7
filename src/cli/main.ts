import { readFileSync } from 'node:fs';
import { ConfigError } from '../config/index.js';
import { EXIT, UsageError, type CliIo, type Command } from './command.js';
import { commands } from './registry.js';

const USAGE = () => `Usage: switchyard <command> [options]

Commands:
${commands.map((c) => `  ${c.name.padEnd(10)} ${c.summary}`).join('\n')}

Run \`switchyard <command> --help\` for a command's options and an example;
\`switchyard --version\` prints the version.
`;

/** The installed package's version (package.json sits two levels above dist/cli/ and src/cli/). */
function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return String(pkg.version);
}

/** Dispatches to a command; the only place that calls process.exit. */
async function main(): Promise<void> {
  const [name, ...rest] = process.argv.slice(2);
  const controller = new AbortController();
  let signals = 0;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      signals++;
      if (signals > 1) process.exit(130);
      controller.abort();
    });
  }
  const io: CliIo = {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    stopSignal: controller.signal,
  };

  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE());
    process.exit(name === undefined ? EXIT.usage : EXIT.ok);
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${version()}\n`);
    process.exit(EXIT.ok);
  }
  const entry = commands.find((c) => c.name === name);
  if (!entry) {
    process.stderr.write(`switchyard: unknown command "${name}"\n\n${USAGE()}`);
    process.exit(EXIT.usage);
  }
  const command: Command = await entry.load();
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(command.help);
    process.exit(EXIT.ok);
  }
  try {
    const code = await command.run(rest, io);
    process.exit(code);
  } catch (err) {
    if (err instanceof ConfigError) {
      // Every configuration problem at once, then exit 1 (the CLI contract in docs/cli.md).
      process.stderr.write(`switchyard: ${err.message}\n`);
      process.exit(EXIT.failed);
    }
    if (err instanceof UsageError) {
      process.stderr.write(`switchyard ${command.name}: ${err.message}\n\n${command.help}`);
      process.exit(EXIT.usage);
    }
    // Never a stack trace to a user: the message only (DEBUG=switchyard shows more).
    process.stderr.write(`switchyard ${command.name}: ${err instanceof Error ? err.message : String(err)}\n`);
    if (io.env['DEBUG']?.includes('switchyard') && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    process.exit(EXIT.failed);
  }
}

await main();
