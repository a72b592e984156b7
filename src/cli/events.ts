import { EVENT_NAMES, isEventName, suggestEventName, type EventName, eventFields } from '../events/index.js';
import { parseCommandArgs } from './args.js';
import { EXIT, UsageError, type Command } from './command.js';

const HELP = `Usage: switchyard events [NAME...] [--names] [--json]

Lists the event names of the catalogue and the fields of their data (dotted
paths, "?" when optional), derived from the same schemas validation uses.

Options:
  --names   names only, one per line
  --json    [{ "name", "fields": [{ "path", "type", "optional" }] }]

Example:
  switchyard events conversation.closed
`;

export const eventsCommand: Command = {
  name: 'events',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(argv, { names: { type: 'boolean' }, json: { type: 'boolean' } }, true);
    if (values.help) {
      io.stdout.write(HELP);
      return EXIT.ok;
    }
    for (const p of positionals) {
      if (!isEventName(p)) {
        const hint = suggestEventName(p);
        throw new UsageError(`unknown event "${p}"${hint ? `; did you mean "${hint}"?` : ''}`);
      }
    }
    const names: readonly EventName[] = positionals.length ? (positionals as EventName[]) : EVENT_NAMES;
    if (values.json) {
      io.stdout.write(
        `${JSON.stringify(
          names.map((name) => ({ name, fields: eventFields(name) })),
          null,
          2,
        )}\n`,
      );
    } else if (values.names) {
      io.stdout.write(`${names.join('\n')}\n`);
    } else {
      for (const name of names) {
        io.stdout.write(`${name}\n`);
        for (const f of eventFields(name)) io.stdout.write(`  data.${f.path}${f.optional ? '?' : ''}  ${f.type}\n`);
      }
    }
    return EXIT.ok;
  },
};
