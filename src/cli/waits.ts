import { printable, formatDuration, parseDuration } from '../util/index.js';
import { RunRecords, type ParkedRun } from '../queue/index.js';
import { intFlag, parseCommandArgs, str } from './args.js';
import { EXIT, UsageError, type Command } from './command.js';
import { withRedis } from './with-redis.js';

const WAITS_HELP = `Usage: switchyard waits [--handler ID] [--kind sleep|wait] [--due-within AGE] [--limit N] [--json]

The handler runs parked now in a durable sleep (ctx.sleep, ctx.sleepUntil)
or wait (ctx.waitForEvent), soonest due first: the handler, the sleep's or
wait's name, when it is due (a wait times out then, unless its event comes
first), the event and key a wait is waiting for, and the delivery the run
handles (\`switchyard trace <delivery>\` shows its history). A parked run
holds no worker slot, lock or API budget. Needs REDIS_URL (and QUEUE_PREFIX)
like \`switchyard deliveries\`.

Options:
  --handler ID       only this handler's runs
  --kind KIND        sleep (ctx.sleep, ctx.sleepUntil) or wait (ctx.waitForEvent)
  --due-within AGE   only runs due within AGE from now (30s, 15m, 2h, 3d)
  --limit N          at most N rows (default 50; --json lists them all unless given)
  --json             one JSON object: { now, total, waits: [...] } (due times in ms and ISO)

Examples:
  switchyard waits
  switchyard waits --handler sla-escalation --due-within 1h
  switchyard waits --json
`;

const KINDS = { sleep: 'sleep', wait: 'wait-for-event' } as const;

/** A parked run as `waits --json` gives it. */
export interface WaitRow extends ParkedRun {
  readonly due: string;
  /** ms until due (negative: overdue, being woken). */
  readonly dueInMs: number;
}

/** The parked runs that pass the filters, soonest due first. */
export function selectWaits(
  runs: readonly ParkedRun[],
  now: number,
  f: { handler?: string; kind?: ParkedRun['kind']; dueWithinMs?: number },
): WaitRow[] {
  return runs
    .filter(
      (r) =>
        (f.handler === undefined || r.handler === f.handler) &&
        (f.kind === undefined || r.kind === f.kind) &&
        (f.dueWithinMs === undefined || r.dueAt - now <= f.dueWithinMs),
    )
    .map((r) => ({ ...r, due: new Date(r.dueAt).toISOString(), dueInMs: r.dueAt - now }));
}

function when(ms: number): string {
  return ms < 0 ? `overdue ${formatDuration(-ms)}` : `in ${formatDuration(ms)}`;
}

/** The table `switchyard waits` prints. */
export function formatWaits(rows: readonly WaitRow[], total: number): string {
  if (total === 0) return 'No run is sleeping or waiting.\n';
  if (rows.length === 0) return `No parked run matches (${total} parked in all).\n`;
  const table = [
    ['DUE', 'HANDLER', 'KIND', 'NAME', 'WAITING FOR', 'DELIVERY'],
    ...rows.map((r) =>
      [
        `${r.due} (${when(r.dueInMs)})`,
        r.handler,
        r.kind === 'sleep' ? 'sleep' : 'wait',
        r.name,
        r.kind === 'sleep' ? '-' : `${r.event ?? '?'} ${r.key ?? ''}`.trim(),
        r.deliveryKey,
      ].map(printable),
    ),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  const lines = table.map((row) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
  return `${lines.join('\n')}\n${rows.length < total ? `(${rows.length} of ${total} parked runs shown)\n` : ''}`;
}

export const waitsCommand: Command = {
  name: 'waits',
  summary: 'runs parked in a durable sleep or wait, soonest due first',
  help: WAITS_HELP,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, {
      handler: { type: 'string' },
      kind: { type: 'string' },
      'due-within': { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    });
    if (values.help) {
      io.stdout.write(WAITS_HELP);
      return EXIT.ok;
    }
    const kindFlag = str(values, 'kind');
    if (kindFlag !== undefined && !(kindFlag in KINDS)) throw new UsageError(`--kind: expected sleep or wait, got "${kindFlag}"`);
    const dueWithin = str(values, 'due-within');
    let dueWithinMs: number | undefined;
    if (dueWithin !== undefined) {
      const ms = parseDuration(dueWithin);
      if (ms === null) throw new UsageError(`--due-within: expected a duration such as 30s, 15m, 2h or 3d, got "${dueWithin}"`);
      dueWithinMs = ms;
    }
    const limit = intFlag('limit', str(values, 'limit'), 1, 1_000_000);
    const handler = str(values, 'handler');
    return withRedis(io, 'waits', async (redis, prefix) => {
      const now = Date.now();
      const all = await new RunRecords(redis, prefix).parked();
      const rows = selectWaits(all, now, {
        ...(handler === undefined ? {} : { handler }),
        ...(kindFlag === undefined ? {} : { kind: KINDS[kindFlag as keyof typeof KINDS] }),
        ...(dueWithinMs === undefined ? {} : { dueWithinMs }),
      });
      if (values.json) {
        io.stdout.write(`${JSON.stringify({ now, total: all.length, waits: limit === undefined ? rows : rows.slice(0, limit) })}\n`);
      } else {
        io.stdout.write(formatWaits(rows.slice(0, limit ?? 50), all.length));
      }
      return EXIT.ok;
    });
  },
};
