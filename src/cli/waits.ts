import { RunRecords, type ParkedRun } from '../queue/waits/runs.js';
import { parseCommandArgs } from './args.js';
import { EXIT, type Command } from './command.js';
import { cliConfig, cliRedis } from './connect.js';

const HELP = `Usage: switchyard waits [--json]

The handler runs parked now in a sleep (ctx.sleep, ctx.sleepUntil) or a wait
(ctx.waitForEvent), soonest due first: the sleep's or wait's name, the
handler, the delivery key of the run's own event (\`switchyard trace <key>\`
shows its attempts and a line per sleep and wait), the kind, what a wait
waits for and on which key, and when it is due (a wait: its timeout, unless
its event comes first). A parked run holds no worker slot; an ordered run
keeps its key's turn while it sleeps or waits.
Needs REDIS_URL (and QUEUE_PREFIX) like \`switchyard dlq\`.

Options:
  --json    one JSON object per run

Examples:
  switchyard waits
  switchyard waits --json
`;

/** The table of parked runs. */
export function formatWaits(rows: readonly ParkedRun[], now = Date.now()): string {
  if (rows.length === 0) return 'no run is sleeping or waiting\n';
  const due = (ms: number) => {
    const s = Math.round((ms - now) / 1000);
    return `${new Date(ms).toISOString()} (${s <= 0 ? 'now' : s < 120 ? `in ${s}s` : s < 7200 ? `in ${Math.round(s / 60)}m` : `in ${Math.round(s / 3600)}h`})`;
  };
  const table = rows.map((r) => [r.name, r.handler, r.deliveryKey, r.kind === 'sleep' ? 'sleep' : 'wait', r.event ? `${r.event} on ${r.key ?? '?'}` : '-', due(r.dueAt)]);
  const head = ['NAME', 'HANDLER', 'DELIVERY', 'KIND', 'FOR', 'DUE'];
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return `${[line(head), ...table.map(line)].join('\n')}\n`;
}

export const waitsCommand: Command = {
  name: 'waits',
  summary: 'the handler runs sleeping or waiting for an event now, and when each is due',
  help: HELP,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, { json: { type: 'boolean' } });
    if (values.help) {
      io.stdout.write(HELP);
      return EXIT.ok;
    }
    const config = cliConfig(io);
    const redis = await cliRedis(config, 'waits needs REDIS_URL (and QUEUE_PREFIX when not "switchyard") of your workers', io.cwd);
    try {
      const rows = await new RunRecords(redis, config.queuePrefix).parked();
      io.stdout.write(values.json ? rows.map((r) => `${JSON.stringify(r)}\n`).join('') : formatWaits(rows));
      return EXIT.ok;
    } finally {
      redis.disconnect();
    }
  },
};
