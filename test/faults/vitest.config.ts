import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/**
 * The fault suite (`test/faults/`): real processes, real Redis, the sandbox.
 * The default run excludes it (it takes minutes); this config runs only it,
 * one file at a time (the scenarios spawn receivers, workers and
 * redis-servers and would starve each other on a small machine).
 *
 *   npx vitest run --config test/faults/vitest.config.ts
 *
 * (mergeConfig would concatenate `exclude` and keep the base's exclusion of
 * test/faults, so the base is spread and `include`/`exclude` replaced.)
 */
export default defineConfig({
  ...base,
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    ...base.test,
    include: ['test/faults/**/*.test.ts'],
    exclude: ['node_modules/**'],
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 60_000,
    typecheck: { enabled: false },
  },
});
