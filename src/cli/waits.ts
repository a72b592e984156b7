import { filterParkedRuns, openHandlerQueues, RunRecords } from '../queue/index.js';
import { intFlag, parseCommandArgs, str } from './args.js';
import { EXIT, type Command } from './command.js';
import { cancelCommand, runFilterFlags, wakeCommand } from './waits-ops.js';
import { formatWaits, waitRows } from './waits-table.js';
import { withRedis } from './with-redis.js';
import { WORKSPACE_OPTION, workspaceHelp } from './flags.js';

export { formatWaits, selectWaits, type WaitRow } from './waits-table.js';

const WAITS_HELP = `Usage: switchyard waits [--handler ID] [--kind sleep|wait] [--due-within AGE] [--where PATH OP VALUE]… [--limit N] [--json]
       switchyard waits cancel <run> | --handler ID [--kind …] [--due-within …] [--where …] [--yes]
       switchyard waits wake <run>

The handler runs parked now in a durable sleep (ctx.sleep, ctx.sleepUntil)
or wait (ctx.waitForEvent), soonest due first: the handler, the sleep's or
wait's name, when it is due (a wait times out then, unless its event comes
first), the event and key a wait is waiting for, and the delivery the run
handles (\`switchyard trace <delivery>\` shows its history). A parked run
holds no worker slot, lock or API budget. Needs REDIS_URL (and QUEUE_PREFIX)
like \`switchyard deliveries\`.

\`waits cancel\` ends parked runs for good, \`waits wake\` wakes one now (a sleep
ends, a wait returns null); each is recorded in the delivery's history with
who did it. A run is named by the delivery key shown here (with --handler
when several handlers' runs of it are parked) or its job id d/<key>/<handler>.
\`switchyard waits cancel --help\` and \`waits wake --help\` say more.

Options:
  --handler ID       only this handler's runs
  --kind KIND        sleep (ctx.sleep, ctx.sleepUntil) or wait (ctx.waitForEvent)
  --due-within AGE   only runs due within AGE from now (30s, 15m, 2h, 3d)
  --where PATH OP VALUE  only runs whose own event matches (repeatable): data.conversation_id=38,
                     'data.body~refund' (contains), data.status!=open (as \`deliveries --where\`)
  --limit N          at most N rows (default 50; --json lists them all unless given)
  --json             one JSON object: { now, total, waits: [...] } (due times in ms and ISO)
${workspaceHelp(21)}
Examples:
  switchyard waits
  switchyard waits --handler sla-escalation --due-within 1h
  switchyard waits --json
  switchyard waits cancel evt_01HZX3 --handler sla-escalation --reason "bad deploy"
  switchyard waits wake evt_01HZX3 --handler trial-reminder
`;

export const waitsCommand: Command = {
  name: 'waits',
  help: WAITS_HELP,
  async run(argv, io) {
    if (argv[0] === 'cancel') return cancelCommand(argv.slice(1), io);
    if (argv[0] === 'wake') return wakeCommand(argv.slice(1), io);
    const { values } = parseCommandArgs(argv, {
      handler: { type: 'string' },
      kind: { type: 'string' },
      'due-within': { type: 'string' },
      where: { type: 'string', multiple: true },
      limit: { type: 'string' },
      json: { type: 'boolean' },
      ...WORKSPACE_OPTION,
    });
    if (values.help) {
      io.stdout.write(WAITS_HELP);
      return EXIT.ok;
    }
    const filter = runFilterFlags(values);
    const limit = intFlag('limit', str(values, 'limit'), 1, 1_000_000);
    return withRedis(io, 'waits', str(values, 'workspace'), async (redis, prefix) => {
      const now = Date.now();
      const all = await new RunRecords(redis, prefix).parked();
      const rows = waitRows(await filterParkedRuns({ queues: openHandlerQueues(redis, prefix), now: () => now }, all, filter), now);
      if (values.json) {
        io.stdout.write(`${JSON.stringify({ now, total: all.length, waits: limit === undefined ? rows : rows.slice(0, limit) })}\n`);
      } else {
        io.stdout.write(formatWaits(rows.slice(0, limit ?? 50), all.length));
      }
      return EXIT.ok;
    });
  },
};
