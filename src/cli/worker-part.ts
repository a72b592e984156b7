import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { ServiceOptions } from '../runtime/service.js';
import { dropSecrets } from '../worker/handler-env.js';
import { loadHandlers, selectHandlers } from '../worker/loader.js';
import { startWorker } from '../worker/service.js';
import { readHandlerSettings } from '../worker/settings.js';

/**
 * The worker side of `start` and `work`. Handler modules are loaded now, before
 * Redis is touched, so a broken module stops start-up at once even during a
 * Redis outage, and so does a bad or missing handler setting; the BullMQ
 * workers start when the service has Redis.
 */
export async function workerPart(config: Config, log: Logger, env: Readonly<Record<string, string | undefined>>): Promise<NonNullable<ServiceOptions['worker']>> {
  // Handler modules run in this process: from here on Switchyard's secrets live only in `config`.
  dropSecrets(process.env);
  const all = await loadHandlers(config.handlersDir);
  if (all.length === 0) log.warn({ dir: config.handlersDir }, 'no handler modules found; deliveries are validated and kept, nothing runs');
  const run = config.handlers ? selectHandlers(all, config.handlers, config.handlersDir).map((l) => l.handler.id) : undefined;
  // Now, before Redis: a bad or missing setting of a handler this process runs stops start-up (startWorker parses them again).
  readHandlerSettings(all.map((l) => l.handler).filter((h) => !run || run.includes(h.id)), env);
  return ({ redisUrl, queues, hooks }) =>
    startWorker({ config, redisUrl, log, env, hooks, handlers: all.map((l) => l.handler), ...(run ? { run } : {}) }, queues);
}
