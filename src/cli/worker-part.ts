import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { ServiceOptions } from '../runtime/service.js';
import { loadHandlers, selectHandlers } from '../worker/loader.js';
import { startWorker } from '../worker/service.js';

/** The worker side of `start` and `work`: load the handler modules, then run the BullMQ workers. */
export function workerPart(config: Config, log: Logger, env: Readonly<Record<string, string | undefined>>): NonNullable<ServiceOptions['worker']> {
  return async ({ redisUrl, queues, hooks }) => {
    const all = await loadHandlers(config.handlersDir);
    if (all.length === 0) log.warn({ dir: config.handlersDir }, 'no handler modules found; deliveries are validated and kept, nothing runs');
    const run = config.handlers ? selectHandlers(all, config.handlers, config.handlersDir).map((l) => l.handler.id) : undefined;
    return startWorker({ config, redisUrl, log, env, hooks, handlers: all.map((l) => l.handler), ...(run ? { run } : {}) }, queues);
  };
}
