import type { Config } from '../config/index.js';
import type { HandlerSet, HandlerSnapshot } from '../handler/index.js';
import type { Logger } from '../log/index.js';
import { cancelCommandFor, orphanedRuns } from '../queue/index.js';
import type { RedisClient } from '../redis/index.js';

/**
 * At a worker's start-up: warns once per handler that has runs parked in Redis but is defined by no module of
 * HANDLERS_DIR (removed or renamed): nothing will run them (at their due time they are dead-lettered as
 * unclaimed), so the warning says how many and the command that cancels them. `loaded`: every handler id the
 * directory defines (not only those HANDLERS narrows this process to: other workers run those). Reading the
 * parked runs fails quietly (debug): it is advice, not start-up.
 */
export async function warnOrphanedRuns(redis: RedisClient, prefix: string, loaded: Iterable<string>, log: Logger): Promise<void> {
  try {
    const counts = new Map<string, number>();
    for (const r of await orphanedRuns({ redis, prefix }, loaded)) counts.set(r.handler, (counts.get(r.handler) ?? 0) + 1);
    for (const [handler, runs] of counts) {
      const command = cancelCommandFor(handler);
      log.warn(
        { handler, runs, command },
        `${runs} run${runs === 1 ? ' is' : 's are'} parked for handler "${handler}", which no module in HANDLERS_DIR defines: ` +
          `nothing will run ${runs === 1 ? 'it' : 'them'}; cancel ${runs === 1 ? 'it' : 'them'} with: ${command}`,
      );
    }
  } catch (err) {
    log.debug({ err: err instanceof Error ? err.message : String(err) }, 'could not look for runs parked for handlers no longer loaded');
  }
}

/**
 * A worker's start-up lines: the handlers it runs and its concurrency, then (in the background) the warning about
 * runs parked for handlers that no module of the directory defines (`all`: every module, whatever HANDLERS
 * narrows); the same warning again when a reload (`switchyard dev`) removes a handler. Returns what stops the
 * latter.
 */
export function workerStarted(set: HandlerSet, config: Config, redis: RedisClient, log: Logger): () => void {
  const snapshot = set.current();
  log.info({ handlers: [...snapshot.handlers.keys()], concurrency: config.workerConcurrency }, 'worker started');
  const warn = (s: HandlerSnapshot) =>
    void warnOrphanedRuns(
      redis,
      config.queuePrefix,
      s.all.map((h) => h.id),
      log,
    );
  warn(snapshot);
  return set.onReplace((change, next) => {
    if (change.removed.length > 0) warn(next);
  });
}
