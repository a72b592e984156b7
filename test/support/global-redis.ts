import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startManagedRedis, type ManagedRedis } from '../../src/redis/managed.js';

/**
 * One real redis-server for the whole run (no mocked Redis). Tests isolate by
 * a unique queue prefix; tests that stop Redis start their own (test/support/redis.ts).
 */
let server: ManagedRedis | undefined;
let dir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-test-redis-'));
  server = await startManagedRedis({ dir });
  project.provide('redisUrl', server.url);
}

export async function teardown(): Promise<void> {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}
