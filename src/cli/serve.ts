import { parseCommandArgs } from './args.js';
import type { Command } from './command.js';
import { loadConfig } from '../config/index.js';
import { runService } from './run-service.js';

export const serveCommand: Command = {
  name: 'serve',
  help: `Usage: switchyard serve

Runs the HTTP receiver: POST $WEBHOOK_PATH verifies the signature, deduplicates
and stores each delivery durably in Redis, answering 202 (accepted),
200 (duplicate), 401, 405, 413 or 503. Run workers with \`switchyard work\`.
Requires WEBHOOK_SECRETS. Configuration comes from the environment (see README).

Example:
  WEBHOOK_SECRETS=whsec_123 REDIS_URL=redis://127.0.0.1:6379 switchyard serve
`,
  async run(argv, io) {
    parseCommandArgs(argv, {});
    const config = loadConfig(io.env, { requireSecrets: true });
    return runService(io, { command: 'serve', receiver: true }, config);
  },
};
