import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Every test runs apart from the developer's machine: none of the variables
 * Switchyard reads reaches a test from the shell that ran `npm test` (a
 * REDIS_URL or WORKSPACE_API_URL exported for `npm run dev` would otherwise
 * change what a test talks to), and the local state directory is a fresh
 * temporary one, never the repository's `.switchyard/` (where `npm run dev`
 * keeps its Redis URL and development secret). A setup file of every vitest
 * project (vitest.config.ts).
 */
const READ_BY_SWITCHYARD =
  /^(PORT|HOST|SIGNATURE_HEADER|REDIS_URL|QUEUE_PREFIX|DEDUPE_TTL|MAX_BODY_BYTES|BODY_TIMEOUT|HANDLERS|HANDLERS_DIR|LOG_LEVEL|WORKER_CONCURRENCY|METRICS_PORT|INGEST_PUMP|JOB_LOCK_DURATION|SHUTDOWN_TIMEOUT|POLL_EVERY|TASK_DUE_LOOKAHEAD|HISTORY|HISTORY_TTL|HISTORY_BODIES|KEEP_BODIES|SANDBOX_PORT|DEBUG|(WEBHOOK|SPOOL|CAPTURE|WORKSPACE_API|ADMIN|SWITCHYARD|RECONCILE|OTEL)_[A-Z_]+)$/;

for (const name of Object.keys(process.env)) if (READ_BY_SWITCHYARD.test(name)) delete process.env[name];

let home: string | undefined;
/** This test process's own state directory (SWITCHYARD_HOME) for commands that are not given one. */
export function hermeticHome(): string {
  home ??= mkdtempSync(join(tmpdir(), 'sy-test-home-'));
  return home;
}
