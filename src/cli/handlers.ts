import { loadHandlers } from '../worker/loader.js';
import { parseCommandArgs } from './args.js';
import { EXIT, type Command } from './command.js';
import { cliConfig } from './connect.js';

const HELP = `Usage: switchyard handlers [--json]

Loads the handler modules of HANDLERS_DIR (default ./handlers), as the worker
would, and lists each handler with its events and token abilities. A module
that cannot be loaded is reported with its file (exit 1).

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
    const loaded = await loadHandlers(config.handlersDir, config.handlers);
    const rows = loaded.map((l) => ({ id: l.handler.id, on: [...l.handler.on], abilities: [...l.handler.abilities], file: l.file }));
    if (values.json) {
      io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      return EXIT.ok;
    }
    if (rows.length === 0) {
      io.stdout.write(`no handler modules in ${config.handlersDir}\n`);
      return EXIT.ok;
    }
    for (const r of rows) {
      io.stdout.write(`${r.id}\n  on:        ${r.on.join(', ')}\n  abilities: ${r.abilities.join(', ') || '(none declared)'}\n  file:      ${r.file}\n`);
    }
    return EXIT.ok;
  },
};
