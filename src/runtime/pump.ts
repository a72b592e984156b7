import type { Config } from '../config/index.js';
import type { IngestBus } from '../lifecycle/index.js';
import type { Logger } from '../log/index.js';
import { IngestPump, type Queues } from '../queue/index.js';
import { createRedisConnection, type RedisClient } from '../redis/index.js';

/**
 * The ingest pump of a process: moves the inbox into the `events` queue on a
 * dedicated blocking connection. It runs where `INGEST_PUMP` says: by default
 * where a worker runs, so receivers stay lean and stateless (the inbox is
 * already durable, so deliveries wait safely for a worker process).
 */
export function startPump(opts: {
  config: Config;
  log: Logger;
  redisUrl: string;
  commands: RedisClient;
  queues: Queues;
  /** The ingest stream the pump reports the deliveries it queues on. */
  ingest?: IngestBus;
  withWorker: boolean;
}): IngestPump {
  const { config, log } = opts;
  const blocking = createRedisConnection(opts.redisUrl, 'worker', 'switchyard-pump-blocking');
  blocking.on('error', (err: Error) => log.debug({ err: err.message }, 'redis connection error'));
  const pump = new IngestPump({
    redis: opts.commands,
    blocking,
    events: opts.queues.events,
    prefix: config.queuePrefix,
    log,
    ...(opts.ingest ? { ingest: opts.ingest } : {}),
  });
  const pumping = config.ingestPump === 'on' || (config.ingestPump === 'auto' && opts.withWorker);
  if (pumping) pump.start();
  else blocking.disconnect();
  return pump;
}
