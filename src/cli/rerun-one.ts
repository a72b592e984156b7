import { Queue } from 'bullmq';
import { HANDLER_QUEUE_BY_PRIORITY } from '../queue/index.js';
import { applySet, BuildError } from '../replay/index.js';
import { rerunDelivery, type RerunDeps } from '../rerun/index.js';
import { printable, sleep } from '../util/index.js';
import { EXIT, UsageError, type CliIo, type ExitCode } from './command.js';

/** What `rerun <delivery>` was given. */
export interface OneFlags {
  readonly delivery: string;
  readonly handler: string;
  readonly fromStep: string | undefined;
  readonly sets: readonly string[];
  readonly detach: boolean;
}

/**
 * `rerun <delivery> --handler ID [--from-step NAME] [--set path=value]...`: one new run of the delivery,
 * its event edited as `send --set` edits one (src/replay/build.ts), then followed until it ends.
 */
export async function rerunOne(io: CliIo, deps: RerunDeps, f: OneFlags): Promise<ExitCode> {
  const edit = f.sets.length
    ? (envelope: Record<string, unknown>) => {
        try {
          for (const s of f.sets) applySet(envelope, s);
        } catch (err) {
          throw err instanceof BuildError ? new UsageError(err.message) : err;
        }
      }
    : undefined;
  const one = await rerunDelivery(deps, {
    delivery: f.delivery,
    handler: f.handler,
    ...(f.fromStep !== undefined ? { fromStep: f.fromStep } : {}),
    ...(edit ? { edit } : {}),
  });
  const from = f.fromStep !== undefined ? ` from step "${printable(f.fromStep)}"` : '';
  const edited = f.sets.length ? `, event edited (${f.sets.map((s) => printable(s.split('=')[0] ?? s)).join(', ')})` : '';
  io.stdout.write(`rerun ${one.rerunId}: ${f.handler} on ${printable(one.key)}${from}${edited}, a new run of ${printable(one.of)}\n`);
  if (f.detach) {
    io.stdout.write(`  follow it: switchyard trace ${printable(one.key)}\n`);
    return EXIT.ok;
  }
  const queue = new Queue(HANDLER_QUEUE_BY_PRIORITY.low, { connection: deps.redis, prefix: deps.prefix });
  try {
    for (;;) {
      const job = await queue.getJob(one.jobId);
      const state = job ? await job.getState() : 'unknown';
      if (state === 'completed' || state === 'failed' || state === 'unknown') {
        const why = state === 'failed' && job?.failedReason ? `: ${printable(job.failedReason)}` : '';
        io.stdout.write(
          `${state === 'unknown' ? 'ended (its job is gone)' : state}${why}\n  see it: switchyard trace ${printable(one.key)}\n`,
        );
        return state === 'completed' ? EXIT.ok : EXIT.failed;
      }
      if (io.stopSignal.aborted) {
        io.stderr.write(`stopped following: the run goes on in the workers; switchyard trace ${printable(one.key)}\n`);
        return EXIT.ok;
      }
      await sleep(250, io.stopSignal).catch(() => undefined);
    }
  } finally {
    await queue.close();
  }
}
