import { parseCommandArgs } from './args.js';
import type { Command } from './command.js';
import { loadConfig } from '../config/index.js';
import { processLogger, runService } from './run-service.js';
import { prepareWorker } from '../runtime/index.js';

export const startCommand: Command = {
  name: 'start',
  help: `Usage: switchyard start

Runs the webhook receiver and the worker in one process on one Redis
(REDIS_URL, or a managed local redis-server under .switchyard/ when unset).
Requires WEBHOOK_SECRETS.

Example:
  WEBHOOK_SECRETS=whsec_123 switchyard start
`,
  async run(argv, io) {
    parseCommandArgs(argv, {});
    const config = loadConfig(io.env, { requireSecrets: true, requireApiToken: true });
    const log = processLogger(config, io);
    return runService(io, { command: 'start', receiver: true, worker: await prepareWorker(config, log, io.env) }, config, log);
  },
};
