import { parseCommandArgs } from './args.js';
import type { Command } from './command.js';
import { loadConfig } from '../config/index.js';
import { processLogger, runService } from './run-service.js';
import { prepareWorker } from '../runtime/index.js';

export const workCommand: Command = {
  name: 'work',
  help: `Usage: switchyard work

Runs the BullMQ workers on REDIS_URL: validates each stored delivery, fans it
out to the subscribed handlers in HANDLERS_DIR and runs them against
WORKSPACE_API_URL. Start as many as you like on one Redis.

Example:
  REDIS_URL=redis://127.0.0.1:6379 WORKSPACE_API_URL=http://127.0.0.1:4010/api/v1 \\
  WORKSPACE_API_TOKEN=... switchyard work
`,
  async run(argv, io) {
    parseCommandArgs(argv, {});
    const config = loadConfig(io.env, { requireSecrets: false, requireApiToken: true });
    const log = processLogger(config, io);
    return runService(io, { command: 'work', receiver: false, worker: await prepareWorker(config, log, io.env) }, config, log);
  },
};
