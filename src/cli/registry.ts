import type { Command } from './command.js';
import { serveCommand } from './serve.js';
import { startCommand } from './start.js';
import { workCommand } from './work.js';

/** Every CLI command, in the order `switchyard --help` lists them. */
export const commands: readonly Command[] = [startCommand, serveCommand, workCommand];
