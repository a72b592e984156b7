import { rerunFailures, rerunStatus, type RerunStatus } from '../rerun/index.js';
import type { RedisClient } from '../redis/index.js';
import { printable, sleep } from '../util/index.js';
import { EXIT, type CliIo, type ExitCode } from './command.js';
import { progressLine } from './rerun-print.js';

/**
 * Follows a batch until it ends, with a progress line (rewritten in place on a terminal, a line every
 * 10 s otherwise). Ctrl-C stops following only: the batch goes on in the workers, and it says how to
 * follow or cancel it. Exit 0 when every run was done, 1 when some failed or the batch was cancelled.
 */
export async function followBatch(io: CliIo, redis: RedisClient, prefix: string, batch: string, everyMs = 1_000): Promise<ExitCode> {
  const tty = io.stderr.isTTY === true;
  let shownAt = 0;
  let s: RerunStatus = await rerunStatus({ redis, prefix }, batch);
  while (!ended(s)) {
    if (io.stopSignal.aborted) {
      if (tty) io.stderr.write('\n');
      io.stderr.write(
        `stopped following ${batch}: the batch goes on in the workers.\n` +
          `  follow it:  switchyard rerun status ${batch}\n  cancel it:  switchyard rerun cancel ${batch}\n`,
      );
      return EXIT.ok;
    }
    if (tty) io.stderr.write(`\r\x1b[K${progressLine(s)}`);
    else if (Date.now() - shownAt >= 10_000) {
      io.stderr.write(`${progressLine(s)}\n`);
      shownAt = Date.now();
    }
    await sleep(everyMs, io.stopSignal).catch(() => undefined);
    s = await rerunStatus({ redis, prefix }, batch);
  }
  if (tty) io.stderr.write('\r\x1b[K');
  io.stdout.write(`${progressLine(s)}: ${s.state}\n`);
  const failures = await rerunFailures({ redis, prefix }, batch, 10);
  for (const f of failures) io.stdout.write(`  failed ${printable(f.key)}: ${printable(f.reason)}\n`);
  if (s.failed > failures.length) io.stdout.write(`  (${s.failed - failures.length} more: switchyard rerun status ${batch})\n`);
  return s.state === 'done' && s.failed === 0 ? EXIT.ok : EXIT.failed;
}

const ended = (s: RerunStatus) => s.state === 'done' || s.state === 'cancelled';
