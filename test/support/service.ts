import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../src/config/config.js';
import { createLogger, type Logger } from '../../src/log/logger.js';
import { startService, type RunningService, type ServiceOptions } from '../../src/runtime/service.js';
import { sign } from '../../src/events/signature.js';

export const TEST_SECRET = 'test-secret-do-not-log';

/** A logger whose lines are kept in memory (tests may grep them). */
export function memoryLogger(level = 'debug'): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const dest = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { log: createLogger({ level: level as 'debug', destination: dest }), lines };
}

export function testConfig(env: Record<string, string>): Config {
  // A receiver-only test process pumps too, so tests can see the `events` jobs it queued.
  return loadConfig(
    { WEBHOOK_SECRETS: TEST_SECRET, PORT: '0', HOST: '127.0.0.1', SHUTDOWN_TIMEOUT: '3s', INGEST_PUMP: 'on', ...env },
    { requireSecrets: true },
  );
}

/** Starts receiver (+ pump) in this process on an ephemeral loopback port. */
export async function startTestService(
  env: Record<string, string>,
  extra: Partial<ServiceOptions> = {},
): Promise<RunningService & { url: string; lines: string[] }> {
  const { log, lines } = memoryLogger();
  const service = await startService({ config: testConfig(env), log, receiver: true, ...extra });
  return Object.assign(service, { url: `${service.receiver?.http.url}/webhooks`, lines });
}

/** POSTs a body signed with the test secret. */
export function deliver(url: string, body: string | Uint8Array, secret = TEST_SECRET): Promise<Response> {
  return fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-signature': sign(secret, body) } });
}

/** Polls until `check` is truthy (test/support/wait.ts; kept importable from here). */
export { waitFor } from './wait.js';
