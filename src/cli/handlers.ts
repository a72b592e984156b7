import { relative } from 'node:path';
import { dropSecrets } from '../worker/handler-env.js';
import { loadHandlerDir } from '../worker/loader.js';
import { parseCommandArgs } from './args.js';
import { EXIT, type Command } from './command.js';
import { cliConfig } from './connect.js';

const HELP = `Usage: switchyard handlers [--json]

Loads the handler modules of HANDLERS_DIR (default ./handlers), as the worker
would, and lists each handler with its events and token abilities, then the
helper modules beside them (modules that export no handler). Modules may be
.ts, .mts, .cts, .js, .mjs or .cjs, in a "module" or "commonjs" project.
A module that cannot be loaded, or a missing directory, is reported with the
file and what is expected (exit 1).

Example:
  HANDLERS_DIR=./handlers switchyard handlers
`;

export const handlersCommand: Command = {
  name: 'handlers',
  summary: 'list the loaded handlers with their events and abilities',
  help: HELP,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, { json: { type: 'boolean' } });
    if (values.help) {
      io.stdout.write(HELP);
      return EXIT.ok;
    }
    const config = cliConfig(io);
    dropSecrets(process.env); // handler modules run their top-level code in this process
    const { handlers, helpers } = await loadHandlerDir(config.handlersDir, config.handlers);
    const rows = handlers.map((l) => ({ id: l.handler.id, on: [...l.handler.on], abilities: [...l.handler.abilities], file: l.file }));
    if (values.json) {
      io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      return EXIT.ok;
    }
    if (rows.length === 0) io.stdout.write(`no handler modules in ${config.handlersDir}\n`);
    for (const r of rows) {
      io.stdout.write(`${r.id}\n  on:        ${r.on.join(', ')}\n  abilities: ${r.abilities.join(', ') || '(none declared)'}\n  file:      ${r.file}\n`);
    }
    if (helpers.length > 0) {
      io.stdout.write(`helper modules (no handler exported): ${helpers.map((f) => relative(io.cwd, f) || f).join(', ')}\n`);
    }
    return EXIT.ok;
  },
};
