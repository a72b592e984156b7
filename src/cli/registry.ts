import type { Command } from './command.js';

/**
 * A command as `switchyard --help` lists it. Its module is imported only when the command runs (or prints its
 * help): each command's code, and what it imports, is start-up time for that command alone.
 */
export interface CommandEntry {
  readonly name: string;
  /** One line for `switchyard --help`. */
  readonly summary: string;
  readonly load: () => Promise<Command>;
}

/** Every CLI command, in the order `switchyard --help` lists them. */
export const commands: readonly CommandEntry[] = [
  {
    name: 'init',
    summary: 'create a project for your own handlers (package.json, handlers/, a test, Dockerfile)',
    load: async () => (await import('./init.js')).initCommand,
  },
  {
    name: 'dev',
    summary: 'run receiver, worker and sandbox for development; reload handlers on save',
    load: async () => (await import('./dev.js')).devCommand,
  },
  {
    name: 'start',
    summary: 'run receiver and worker in one process',
    load: async () => (await import('./start.js')).startCommand,
  },
  {
    name: 'serve',
    summary: 'run the webhook receiver only (HTTP → verified, deduplicated, queued)',
    load: async () => (await import('./serve.js')).serveCommand,
  },
  {
    name: 'work',
    summary: 'run workers only (validate, fan out, run handlers)',
    load: async () => (await import('./work.js')).workCommand,
  },
  {
    name: 'sandbox',
    summary: 'run the stateful workspace API simulator that emits signed events',
    load: async () => (await import('./sandbox.js')).sandboxCommand,
  },
  {
    name: 'replay',
    summary: 'replay captured deliveries over HTTP, into Redis (--direct) or through the handlers here (--inline)',
    load: async () => (await import('./replay.js')).replayCommand,
  },
  {
    name: 'send',
    summary: 'build, sign and send a delivery for any event (defaults from the fixtures)',
    load: async () => (await import('./send.js')).sendCommand,
  },
  {
    name: 'sign',
    summary: 'print the signature header for a body (for curl)',
    load: async () => (await import('./sign.js')).signCommand,
  },
  {
    name: 'events',
    summary: 'list event names and their data fields',
    load: async () => (await import('./events.js')).eventsCommand,
  },
  {
    name: 'handlers',
    summary: 'list the loaded handlers with their events, abilities, settings and retries',
    load: async () => (await import('./handlers.js')).handlersCommand,
  },
  {
    name: 'dlq',
    summary: 'list, show, retry, purge dead-lettered jobs; resume a paused handlers queue',
    load: async () => (await import('./dlq.js')).dlqCommand,
  },
  {
    name: 'trace',
    summary: 'what happened to one delivery: receipt, fan-out, each handler attempt and its API calls',
    load: async () => (await import('./trace.js')).traceCommand,
  },
  {
    name: 'deliveries',
    summary: 'list deliveries in the history, newest first, filtered by event, conversation, contact, handler, outcome, content',
    load: async () => (await import('./deliveries.js')).deliveriesCommand,
  },
  {
    name: 'rerun',
    summary: 'run a handler again on deliveries it ran (a plan first; durable batches; status, cancel; one delivery from a step)',
    load: async () => (await import('./rerun.js')).rerunCommand,
  },
  {
    name: 'waits',
    summary: 'runs parked in a durable sleep or wait, soonest due first; cancel or wake them',
    load: async () => (await import('./waits.js')).waitsCommand,
  },
  {
    name: 'reconcile',
    summary: 'find changes whose webhooks never arrived and enqueue them',
    load: async () => (await import('./reconcile.js')).reconcileCommand,
  },
  {
    name: 'doctor',
    summary: 'check configuration, handler and schedule settings, Redis, the API token and abilities',
    load: async () => (await import('./doctor.js')).doctorCommand,
  },
];
