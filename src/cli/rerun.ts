import { createInterface } from 'node:readline/promises';
import { userInfo } from 'node:os';
import { rerunBurst } from '../clients/index.js';
import { secretVariables, type Config } from '../config/index.js';
import { dropSecrets, loadHandlerDir } from '../handler/index.js';
import type { RedisClient } from '../redis/index.js';
import {
  cancelRerun,
  listReruns,
  planRerun,
  RerunSelectionError,
  rerunFailures,
  rerunStatus,
  startRerun,
  UnknownBatchError,
  type RerunDeps,
  type RerunSelection,
} from '../rerun/index.js';
import { intFlag, parseCommandArgs, str, strs, type ParsedArgs } from './args.js';
import { EXIT, UsageError, type CliIo, type Command, type ExitCode } from './command.js';
import { DELIVERY_FILTER_OPTIONS, deliveryFilterFlags } from './deliveries.js';
import { WORKSPACE_OPTION } from './flags.js';
import { HELP } from './rerun-help.js';
import { rerunOne } from './rerun-one.js';
import { formatBatches, formatPlan, formatStatus } from './rerun-print.js';
import { followBatch } from './rerun-wait.js';
import { withRedis } from './with-redis.js';

const OPTIONS = {
  ...DELIVERY_FILTER_OPTIONS,
  limit: { type: 'string' },
  'dry-run': { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  detach: { type: 'boolean' },
  'from-step': { type: 'string' },
  set: { type: 'string', multiple: true },
  json: { type: 'boolean' },
  ...WORKSPACE_OPTION,
} as const;

export const rerunCommand: Command = {
  name: 'rerun',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(argv, OPTIONS, true);
    if (values.help) {
      io.stdout.write(HELP);
      return EXIT.ok;
    }
    const [first, ...rest] = positionals;
    if (first === 'status') return status(io, values, rest);
    if (first === 'cancel') return cancel(io, values, rest);
    if (rest.length > 0) throw new UsageError(`expected at most one delivery, got ${positionals.length}: ${positionals.join(' ')}`);
    const handler = str(values, 'handler');
    if (!handler) throw new UsageError('--handler ID is required: the handler to run again (`switchyard handlers` lists them)');
    if (first !== undefined) return one(io, values, first, handler);
    if (str(values, 'from-step') !== undefined || strs(values, 'set').length > 0) {
      throw new UsageError('--from-step and --set apply to one delivery: switchyard rerun <delivery> --handler ID --from-step NAME');
    }
    return batch(io, values, selectionOf(values, handler));
  },
};

/** The filters as a selection (checked as `deliveries` checks them). */
function selectionOf(values: ParsedArgs['values'], handler: string): RerunSelection {
  const { handler: _h, ...f } = deliveryFilterFlags(values);
  if (f.event === 'schedule') throw new UsageError('--event schedule: a schedule run is not a delivery; rerun runs handlers on deliveries');
  const limit = intFlag('limit', str(values, 'limit'), 1, 1_000_000);
  return { handler, ...f, ...(limit !== undefined ? { limit } : {}) };
}

/** Runs `fn` with the engine's deps: Redis, the project's handlers, the re-runs' budget. */
async function withDeps(
  io: CliIo,
  values: ParsedArgs['values'],
  fn: (deps: RerunDeps, config: Config) => Promise<ExitCode>,
): Promise<ExitCode> {
  // Redis first: loading the handler modules drops Switchyard's secrets (REDIS_URL among them) from the environment.
  return withRedis(io, 'rerun', str(values, 'workspace'), async (redis: RedisClient, prefix: string, config: Config) => {
    dropSecrets(process.env, secretVariables(config)); // handler modules run their top-level code in this process
    const { handlers } = await loadHandlerDir(config.handlersDir);
    const budget = { burst: config.workspaceApiBurst, share: config.rerun.share, callsPer10s: rerunBurst(config) };
    const deps: RerunDeps = { redis, prefix, handlers: handlers.map((l) => l.handler), budget, by: `cli:${who()}` };
    try {
      return await fn(deps, config);
    } catch (err) {
      if (err instanceof RerunSelectionError) throw new UsageError(err.message);
      throw err;
    }
  });
}

function who(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

async function batch(io: CliIo, values: ParsedArgs['values'], selection: RerunSelection): Promise<ExitCode> {
  const dryRun = values['dry-run'] === true;
  const interactive = (io.stdin as { isTTY?: boolean }).isTTY === true;
  if (!dryRun && values.yes !== true && !interactive) {
    throw new UsageError(
      'refusing to start a rerun without confirmation: stdin is not a terminal; pass --yes to start it, or --dry-run to see the plan',
    );
  }
  return withDeps(io, values, async (deps) => {
    const plan = await planRerun(deps, selection);
    io.stdout.write(values.json ? `${JSON.stringify({ ...plan, items: plan.items.length })}\n` : formatPlan(plan));
    if (dryRun) return EXIT.ok;
    if (plan.items.length === 0) {
      io.stdout.write('nothing to run again\n');
      return EXIT.ok;
    }
    if (values.yes !== true && !(await confirm(io, `Run ${plan.handler} again on ${plan.items.length} deliveries? [y/N] `))) {
      io.stdout.write('not started\n');
      return EXIT.ok;
    }
    const started = await startRerun(deps, plan);
    io.stdout.write(
      `started ${started.batch}: ${started.total} runs, fed by the workers at low priority within RERUN_SHARE\n` +
        `  follow it:  switchyard rerun status ${started.batch}\n  cancel it:  switchyard rerun cancel ${started.batch}\n`,
    );
    if (values.detach === true) return EXIT.ok;
    return followBatch(io, deps.redis, deps.prefix, started.batch);
  });
}

async function confirm(io: CliIo, question: string): Promise<boolean> {
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: false });
  try {
    const answer = await rl.question(question, { signal: io.stopSignal });
    return /^y(es)?$/i.test(answer.trim());
  } catch {
    return false;
  } finally {
    rl.close();
  }
}

async function one(io: CliIo, values: ParsedArgs['values'], delivery: string, handler: string): Promise<ExitCode> {
  const filters = Object.keys(DELIVERY_FILTER_OPTIONS).filter((k) => k !== 'handler' && values[k] !== undefined);
  if (filters.length)
    throw new UsageError(`--${filters[0]}: filters select a batch; with a delivery, give only --handler, --from-step and --set`);
  return withDeps(io, values, (deps) =>
    rerunOne(io, deps, {
      delivery,
      handler,
      fromStep: str(values, 'from-step'),
      sets: strs(values, 'set'),
      detach: values.detach === true,
    }),
  );
}

async function status(io: CliIo, values: ParsedArgs['values'], rest: readonly string[]): Promise<ExitCode> {
  if (rest.length > 1) throw new UsageError('rerun status takes at most one batch id');
  return withRedis(io, 'rerun status', str(values, 'workspace'), async (redis, prefix) => {
    const deps = { redis, prefix };
    if (rest[0] === undefined) {
      const list = await listReruns(deps);
      io.stdout.write(values.json ? `${JSON.stringify(list)}\n` : formatBatches(list));
      return EXIT.ok;
    }
    const s = await known(() => rerunStatus(deps, rest[0] as string));
    const failures = await rerunFailures(deps, s.batch);
    io.stdout.write(values.json ? `${JSON.stringify({ ...s, failures })}\n` : formatStatus(s, failures));
    return EXIT.ok;
  });
}

async function cancel(io: CliIo, values: ParsedArgs['values'], rest: readonly string[]): Promise<ExitCode> {
  if (rest.length !== 1) throw new UsageError('rerun cancel takes one batch id (`switchyard rerun status` lists them)');
  const id = rest[0] as string;
  return withRedis(io, 'rerun cancel', str(values, 'workspace'), async (redis, prefix) => {
    const c = await known(() => cancelRerun({ redis, prefix, by: `cli:${who()}` }, id));
    const s = c.status;
    if (c.before !== 'running') {
      io.stdout.write(`${id} was ${c.before} already: nothing cancelled (${s.done} done, ${s.failed} failed of ${s.total})\n`);
      return EXIT.ok;
    }
    io.stdout.write(
      `cancelled ${id}: ${s.cancelled} runs removed before they started, ${s.total - s.fed} never queued; ` +
        `${s.done} ran (done), ${s.failed} failed` +
        (s.open ? `, ${s.open} running now (they finish; \`switchyard rerun status ${id}\`)` : '') +
        '\n',
    );
    return EXIT.ok;
  });
}

/** An unknown batch is a usage error (exit 2), said as it is. */
async function known<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof UnknownBatchError) throw new UsageError(err.message);
    throw err;
  }
}
