import type { Command } from './command.js';
import { dlqCommand } from './dlq.js';
import { devCommand } from './dev.js';
import { doctorCommand } from './doctor.js';
import { eventsCommand } from './events.js';
import { handlersCommand } from './handlers.js';
import { initCommand } from './init.js';
import { reconcileCommand } from './reconcile.js';
import { replayCommand } from './replay.js';
import { rerunCommand } from './rerun.js';
import { sandboxCommand } from './sandbox.js';
import { sendCommand } from './send.js';
import { serveCommand } from './serve.js';
import { signCommand } from './sign.js';
import { startCommand } from './start.js';
import { deliveriesCommand } from './deliveries.js';
import { traceCommand } from './trace.js';
import { waitsCommand } from './waits.js';
import { workCommand } from './work.js';

/** Every CLI command, in the order `switchyard --help` lists them. */
export const commands: readonly Command[] = [
  initCommand,
  devCommand,
  startCommand,
  serveCommand,
  workCommand,
  sandboxCommand,
  replayCommand,
  sendCommand,
  signCommand,
  eventsCommand,
  handlersCommand,
  dlqCommand,
  traceCommand,
  deliveriesCommand,
  rerunCommand,
  waitsCommand,
  reconcileCommand,
  doctorCommand,
];
